"""A safe top k over term postings: MaxScore (Turtle & Flood, "Query evaluation: strategies
and optimizations", IP&M 1995), term at a time and vectorised, with a per-term score bound.

A passage's BM25 is the sum of its query terms' impacts (:mod:`kbsearch.retrieve.lexical.
postings`), each at most its term's ``upper`` (the largest impact in its postings). With
``theta``, the k-th best score among some passages that pass the filters (a lower bound of the
true k-th best), a passage can reach ``theta`` only if

1. it holds an *essential* term: ordering the terms by ``upper`` ascending, the non-essential
   ones are the longest prefix whose bounds add up to less than ``theta`` (MaxScore's split:
   a passage holding only those scores less than ``theta``);
2. its impact ``x`` in one of the essential terms it holds is at least
   ``need(t) = theta - (U - upper(t))``, ``U`` the sum of every term's bound (the other terms
   add at most ``U - upper(t)``);
3. its partial score (its impacts in the essential postings kept by rule 2, added into a
   reusable per-thread accumulator indexed by row position) plus the non-essential bounds
   reaches ``theta`` (a passage that can reach it lost no posting to rule 2, by rule 2).

``theta`` comes from the passages with the largest impacts of each term (:meth:`Postings.
head`), scored exactly and filtered. The candidates left by the three rules that pass the
filters are scored exactly, every term's impact added in query-term order starting from 0.0,
as the exhaustive sum adds them, so the scores are the exhaustive ones bit for bit. Every
passing passage scoring at least the true k-th best (ties included) is among them, so the top
k, ties by passage id, is the exhaustive one. The rules compare with a relative margin of
1e-12 (far above the rounding of a sum of a query's terms), so rounding can only keep a
passage, never drop one. A hidden passage never sets ``theta``.

A query whose terms hold at most ``EXHAUSTIVE`` postings in all (chosen on the scale
benchmark) skips the pruning and adds them all in the accumulator, in query-term order (exact
as well; cheaper at that size).

Work per query: O(postings of the essential terms) plus O(candidates x terms x log postings)
binary searches; no array of the collection's size is made or scanned (the accumulator, as
large as the rows touched so far, is made once per thread and only its touched cells reset).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

MARGIN = 1e-12  # relative slack of the bound comparisons (module docstring)
HEAD = 16  # fewest top impacts per term scored to set theta
EXHAUSTIVE = 1 << 17  # postings up to which a query adds them all (cheaper than pruning)
WIDEN = 64  # how much wider the heads are on a second try when too few passed the filters

Passes = Callable[[np.ndarray], np.ndarray]  # row positions -> bool mask of those that pass


@dataclass(frozen=True)
class Postings:
    """One term's postings at one generation: ``rows`` (int64 row ids, ascending),
    ``impacts`` (float64 BM25 contributions) and ``at`` (int64 positions of the rows in the
    caller's row table), aligned."""

    rows: np.ndarray
    impacts: np.ndarray
    at: np.ndarray
    _heads: dict[int, np.ndarray] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def upper(self) -> float:
        """The largest impact (0.0 when empty): the term's share of any score is at most it."""
        return float(self.impacts.max()) if len(self.impacts) else 0.0

    def head(self, n: int) -> np.ndarray:
        """Indices of ``n`` of the largest impacts (every index when ``n`` >= the postings;
        ties at the cut chosen arbitrarily), cached per ``n``. O(postings) the first time."""
        if n >= len(self.rows):
            return np.arange(len(self.rows))
        found = self._heads.get(n)
        if found is None:
            found = np.argpartition(self.impacts, len(self.impacts) - n)[-n:]
            self._heads[n] = found
        return found


class Scratch:
    """Per-thread accumulator (float64) and seen flags indexed by row position, grown as the
    row table grows and left all zero / False after each use."""

    def __init__(self) -> None:
        self._local = threading.local()

    def arrays(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """``(sums, seen)`` of at least ``size`` cells, all 0.0 / False."""
        sums: np.ndarray | None = getattr(self._local, "sums", None)
        if sums is None or len(sums) < size:
            size = max(size, 1024) * 3 // 2
            self._local.sums = np.zeros(size, dtype=np.float64)
            self._local.seen = np.zeros(size, dtype=bool)
        return self._local.sums, self._local.seen


def exact_scores(terms: Sequence[Postings], rows: np.ndarray) -> np.ndarray:
    """BM25 of ``rows`` (int64 row ids; shape ``(n,)``): each term's impact added in the
    order of ``terms``, from 0.0 (a term a row lacks adds nothing), as the exhaustive sum adds
    them. O(n x terms x log postings)."""
    out = np.zeros(len(rows), dtype=np.float64)
    for term in terms:
        if len(term.rows) == 0 or len(rows) == 0:
            continue
        at = np.minimum(np.searchsorted(term.rows, rows), len(term.rows) - 1)
        hit = term.rows[at] == rows
        out[hit] += term.impacts[at[hit]]
    return out


def _kth(scores: np.ndarray, k: int) -> float:
    return float(np.partition(scores, len(scores) - k)[len(scores) - k])


def _union(
    parts: Sequence[tuple[np.ndarray, np.ndarray]], scratch: Scratch, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(at, sums)``: the distinct positions of ``parts`` (``(at, impacts)`` each, distinct
    positions within a part) and their impacts added in the order of ``parts``."""
    sums, seen = scratch.arrays(size)
    found: list[np.ndarray] = []
    try:
        for at, impacts in parts:
            new = at[~seen[at]]
            seen[new] = True
            found.append(new)
            sums[at] += impacts
        at = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
        return at, sums[at]
    finally:  # clean for the next search, whatever happened
        if found:
            touched = np.concatenate(found)
            sums[touched] = 0.0
            seen[touched] = False


def _threshold(
    terms: Sequence[Postings], passes: Passes, row_ids: np.ndarray, k: int
) -> tuple[float | None, np.ndarray | None, np.ndarray | None]:
    """``(theta, at, scores)``: theta from the terms' heads (module docstring), ``None``
    when fewer than ``k`` of them pass; ``at``/``scores``: the passing head positions, when
    the heads held every posting (then they are the whole answer), else ``None``."""
    n = max(HEAD, k)
    for _ in range(2):
        whole = all(n >= len(t.rows) for t in terms)
        at = np.unique(np.concatenate([t.at[t.head(n)] for t in terms]))
        at = at[passes(at)]
        scores = exact_scores(terms, row_ids[at])
        if whole:
            return None, at, scores
        if len(at) >= k:
            return _kth(scores, k), None, None
        n *= WIDEN
    return None, None, None


def top_candidates(
    terms: Sequence[Postings],
    passes: Passes,
    row_ids: np.ndarray,
    k: int,
    scratch: Scratch,
    exhaustive: int = EXHAUSTIVE,
) -> tuple[np.ndarray, np.ndarray]:
    """``(at, scores)``: row positions of passages holding any of ``terms`` (query order; a
    repeated term counts again) that pass the filters, with their exact BM25, among which are
    all those scoring at least the k-th best of every passing passage (module docstring).
    ``passes`` maps positions to a bool mask of those passing the filters; ``row_ids`` gives
    the row id at each position (shape ``(positions,)``); up to ``exhaustive`` postings in
    all, every posting is added (no pruning).

    A caller takes the top k of them (:func:`kbsearch.retrieve.topk.top_k`): it equals the top
    k of the exhaustive scores of every passing passage, scores bit for bit, ties by id.
    """
    terms = [t for t in terms if len(t.rows)]
    if not terms or k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    size = len(row_ids)
    theta, at, scores = None, None, None
    if sum(len(t.rows) for t in terms) > exhaustive:
        theta, at, scores = _threshold(terms, passes, row_ids, k)
        if at is not None and scores is not None:
            return at, scores
    if theta is None:  # few postings, or too few passed: every posting, added in query order
        at, scores = _union([(t.at, t.impacts) for t in terms], scratch, size)
        keep = passes(at)
        return at[keep], scores[keep]
    bounds = [t.upper for t in terms]
    total = sum(bounds) * (1 + MARGIN)
    # rule 1, MaxScore's split: the smallest bounds adding up to less than theta
    essential = np.ones(len(terms), dtype=bool)
    rest = 0.0
    for i in np.argsort(bounds, kind="stable"):
        if (rest + bounds[i]) * (1 + MARGIN) >= theta:
            break
        rest += bounds[i]
        essential[i] = False
    parts = []
    for i in np.flatnonzero(essential):
        term = terms[i]
        need = (theta - (total - bounds[i])) * (1 - MARGIN)  # rule 2
        if need <= 0:
            parts.append((term.at, term.impacts))
        else:
            kept = term.impacts >= need
            parts.append((term.at[kept], term.impacts[kept]))
    at, partial = _union(parts, scratch, size)
    at = at[(partial + rest) * (1 + MARGIN) >= theta]  # rule 3
    at = at[passes(at)]
    return at, exact_scores(terms, row_ids[at])
