"""The features of learned fusion (:mod:`kbsearch.fuse.learned`): one row per candidate of the
hybrid route (:class:`kbsearch.fuse.convex.FusionCandidate`), :data:`FEATURES` in order.

Features per candidate (n candidates of one query):

- ``lexical_norm``, ``dense_norm``, ``title_norm``: the route's score min-max normalised over the
  candidates (Bruch, Gai & Ingber, ACM TOIS 2023), a candidate without a lexical or dense score
  taking that route's lowest; ``title_norm`` over the candidates with a title score only;
- ``dense_cos``, ``title_cos``: the raw cosines; ``lexical_share``: BM25 / the best BM25 (0 when
  no candidate matches a term); ``dense_gap``, ``title_gap``: best cosine minus the candidate's;
- ``lexical_rank``, ``dense_rank``: rank (from 1) in the route's top list, ``depth + 1`` when the
  route did not list it; ``both``: 1 when both routes listed it; the two fusions the trees
  start from: ``rrf`` (sum of ``1 / (10 + rank)``, Cormack, Clarke & Buettcher, SIGIR 2009, with
  the absent rank as above) and ``convex`` (``0.4 * lexical_norm + 0.6 * dense_norm``);
- query signals, the same for all its candidates: ``lexical_top_gap`` ((s1 - s2) / s1 of the two
  best BM25 scores), ``dense_top_gap`` (c1 - c2 of the two best cosines), ``dense_max`` (c1),
  ``agreement`` (share of the lexical top 10 also in the dense top 10);
- collection signals (:class:`CollectionStats`), so one model can treat a FAQ (every passage
  under its own question as title) unlike articles (many passages per title) without knowing
  the collection's name: ``titled_share``, ``unique_title_share``, ``passages_per_title``.

A title score is absent (or NaN) when the passage has no heading vector; its three title
features are then NaN, which the trees route by their learned default side.

A candidate the lexical route does not apply to (``FusionCandidate.not_applicable``: a passage in
another language than the query's, :mod:`kbsearch.retrieve.crosslang`) has no lexical evidence
*against* it: a lexical score of 0 there says nothing (read as "the words are not there", it
sank such passages: the demo's English question answered by a French page), but a lexical match
there (a product code, a name shared by both languages) is still evidence for it. So each of its
lexical features is the better of its own and the dense route's standing in for it, as if the
lexical route agreed with the dense one (the reading RRF and the convex fusion give a route that
does not apply, :mod:`kbsearch.fuse.rrf`, :mod:`kbsearch.fuse.convex`):
``lexical_norm`` = max(own, ``dense_norm``), ``lexical_share`` = max(own, ``dense_norm``),
``lexical_rank`` = min(own, ``dense_rank``), ``both`` = listed by the dense route, ``rrf`` =
max(own, ``2 / (10 + dense_rank)``), ``convex`` = max(own, ``dense_norm``). Its own
``lexical_norm`` and ``lexical_share`` use the statistics of the candidates the route applies to
(clipped to [0, 1]; when the route matched none of those, every candidate's, so a sole match
still counts); those alone give the lexical normalisation and the query's lexical signals.
The shipped model is monotone in each of these features (``train_fusion.py --monotone``), so more
lexical evidence never lowers a score. The dense reading was chosen on dev over NaN features
(with or without training copies that mark a random share of candidates lexical-missing,
``benchmarks/train_fusion.py cv --augment``): on simulated cross-language questions
(``benchmarks/crosslang_sim.py``) it ranked best, and it needs no retraining, so a one-language
index ranks exactly as before (docs/benchmarks.md); taking the better of it and the own evidence
keeps every simulated figure where the passage shares no word with the query and raises those
where it does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import FusionError, InvalidArgumentError
from .convex import FusionCandidate

DEPTH = 100  # the top-list depth the model was trained with (ranks beyond it read as DEPTH + 1)
TOP = 10  # the head compared by ``agreement``
RRF_K = 10.0  # the ``rrf`` feature: reciprocal rank fusion as the default hybrid route ranks
CONVEX_DENSE = 0.6  # the ``convex`` feature's dense weight (the best dev setting, issue 13)
LEXICAL = "lexical"

FEATURES = (
    "lexical_norm",
    "dense_norm",
    "title_norm",
    "dense_cos",
    "title_cos",
    "lexical_share",
    "dense_gap",
    "title_gap",
    "lexical_rank",
    "dense_rank",
    "both",
    "rrf",
    "convex",
    "lexical_top_gap",
    "dense_top_gap",
    "dense_max",
    "agreement",
    "titled_share",
    "unique_title_share",
    "passages_per_title",
)


@dataclass(frozen=True)
class CollectionStats:
    """Counts over the passages an audience may see (the fields of
    :class:`kbsearch.retrieve.backend.TitleCounts`, which
    :func:`kbsearch.index.headings.title_counts` computes from a store).

    ``passages``: passages; ``titled``: those whose document has a title of its own (not the
    one the indexer makes from the document id); ``unique_titled``: titled passages whose title
    heads no other passage; ``titles``: distinct titles among the titled passages.

    The shipped model reads none of these (leave-one-dataset-out on dev showed no gain from
    them, docs/benchmarks.md); they are part of the signature so that a model trained with the
    collection features (``benchmarks/train_fusion.py --variant all``) can be dropped in.

    Raises (at construction):
        InvalidArgumentError: a negative count, or counts that cannot hold together
            (``unique_titled <= titles <= titled <= passages``).
    """

    passages: int
    titled: int
    unique_titled: int
    titles: int

    def __post_init__(self) -> None:
        if not 0 <= self.unique_titled <= self.titles <= self.titled <= self.passages:
            raise InvalidArgumentError(
                "collection counts must satisfy 0 <= unique_titled <= titles <= titled"
                f" <= passages, got {self}"
            )

    @classmethod
    def from_titles(cls, titles: Sequence[str | None]) -> CollectionStats:
        """From one entry per passage: its document's title, or ``None`` / ``""`` when it has
        none of its own."""
        counts: dict[str, int] = {}
        for title in titles:
            if title:
                counts[title] = counts.get(title, 0) + 1
        unique = sum(1 for n in counts.values() if n == 1)
        return cls(len(titles), sum(counts.values()), unique, len(counts))

    def vector(self) -> tuple[float, float, float]:
        """``(titled_share, unique_title_share, passages_per_title)``; shares of all passages,
        passages per distinct title (0 when no passage has a title)."""
        n = max(self.passages, 1)
        per_title = self.titled / self.titles if self.titles else 0.0
        return self.titled / n, self.unique_titled / n, per_title


def _minmax(x: np.ndarray) -> np.ndarray:
    present = ~np.isnan(x)
    if not present.any():
        return x.copy()
    low, high = float(x[present].min()), float(x[present].max())
    return (x - low) / (high - low) if high > low else np.where(present, 0.0, np.nan)


def _minmax_as(x: np.ndarray, raw: np.ndarray, applies: np.ndarray) -> np.ndarray:
    """:func:`_minmax` of ``x`` (NaN where the route does not apply), and for those NaN rows
    ``raw`` (their own score) put on the same scale, clipped to [0, 1]."""
    out = _minmax(x)
    fitted = x[applies & ~np.isnan(x)]
    if (~applies).any() and fitted.size and fitted.max() > fitted.min():
        low, high = float(fitted.min()), float(fitted.max())
        out = np.where(applies, out, np.clip((raw - low) / (high - low), 0.0, 1.0))
    elif (~applies).any() and raw.max() > raw.min():
        # the route gave the candidates it applies to no spread (none matched): the others'
        # own scores are put on the scale of every candidate's, so a sole match still counts
        low, high = float(raw.min()), float(raw.max())
        out = np.where(applies, out, (raw - low) / (high - low))
    elif (~applies).any():
        out = np.where(applies, out, 0.0)
    return out


def _route_scores(candidates: Sequence[FusionCandidate], route: str) -> np.ndarray:
    raw = np.array([c.scores.get(route, math.nan) for c in candidates], dtype=np.float64)
    if np.isinf(raw).any():
        raise FusionError(f"route {route!r} gives a candidate a non-finite score")
    return raw


def features(candidates: Sequence[FusionCandidate], collection: CollectionStats) -> np.ndarray:
    """One row of :data:`FEATURES` per candidate, in order: shape ``(n, len(FEATURES))``.

    Raises:
        FusionError: a passage listed twice or an infinite score.
    """
    return feature_columns(candidates, collection)[0]


def feature_columns(
    candidates: Sequence[FusionCandidate], collection: CollectionStats
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`features`, and per candidate its own ``lexical_norm`` and the dense route's
    (``dense_norm``, the imputed one)."""
    ids = [c.passage_id for c in candidates]
    if len(set(ids)) != len(ids):
        raise FusionError("a passage is listed twice among the candidates")
    n = len(candidates)
    out = np.full((n, len(FEATURES)), np.nan)
    if n == 0:
        return out, np.zeros(0), np.zeros(0)
    lexical = _route_scores(candidates, "lexical")
    dense = _route_scores(candidates, "dense")
    title = _route_scores(candidates, "title")
    applies = np.array([LEXICAL not in c.not_applicable for c in candidates], dtype=bool)
    # a route that did not score a candidate: its lowest score (over those it applies to)
    for raw, where in ((lexical, applies), (dense, np.ones(n, dtype=bool))):
        present = ~np.isnan(raw) & where
        raw[~present & where] = raw[present].min() if present.any() else 0.0
    # the lexical scores of the candidates the route does not apply to (their own evidence,
    # the lowest applying score where absent) stay aside; the route's statistics ignore them
    low = lexical[applies & ~np.isnan(lexical)].min() if applies.any() else 0.0
    raw_lexical = np.where(np.isnan(lexical), low, lexical)
    lexical[~applies] = np.nan
    ranks = {
        route: np.array([min(c.ranks.get(route, DEPTH + 1), DEPTH + 1) for c in candidates])
        for route in ("lexical", "dense")
    }
    lex_sorted = np.sort(lexical[applies])[::-1]
    dense_sorted = np.sort(dense)[::-1]
    top_lex = lex_sorted[0] if len(lex_sorted) else 0.0
    second = lex_sorted[1] if len(lex_sorted) > 1 else 0.0
    head = {
        "lexical": set(np.flatnonzero(applies & (ranks["lexical"] <= TOP)).tolist()),
        "dense": set(np.flatnonzero(ranks["dense"] <= TOP).tolist()),
    }
    has_title = ~np.isnan(title)
    title_max = title[has_title].max() if has_title.any() else np.nan
    dense_norm = _minmax(dense)
    rrf_dense = 1 / (RRF_K + ranks["dense"])
    listed = (ranks["lexical"] <= DEPTH) & (ranks["dense"] <= DEPTH)
    lexical_norm = _minmax_as(lexical, raw_lexical, applies)
    # the best applying BM25, or every candidate's best when none of those matched
    top_share = top_lex if top_lex > 0 else float(raw_lexical.max())
    share = np.minimum(raw_lexical / top_share, 1.0) if top_share > 0 else np.zeros(n)
    own = {
        "lexical_norm": lexical_norm,
        "lexical_share": share,
        "lexical_rank": ranks["lexical"].astype(np.float64),
        "both": listed.astype(np.float64),
        "rrf": 1 / (RRF_K + ranks["lexical"]) + rrf_dense,
        "convex": (1 - CONVEX_DENSE) * lexical_norm + CONVEX_DENSE * dense_norm,
    }
    # a candidate the lexical route does not apply to: per feature, the better of its own
    # lexical evidence and the dense route's standing in for it (module docstring)
    imputed = {
        "lexical_norm": dense_norm,
        "lexical_share": dense_norm,
        "lexical_rank": ranks["dense"].astype(np.float64),
        "both": (ranks["dense"] <= DEPTH).astype(np.float64),
        "rrf": 2 * rrf_dense,
        "convex": dense_norm,
    }
    better = {name: np.minimum if name == "lexical_rank" else np.maximum for name in own}
    columns: dict[str, np.ndarray | float] = {
        name: np.where(applies, own[name], better[name](own[name], imputed[name])) for name in own
    }
    columns |= {
        "dense_norm": dense_norm,
        "title_norm": _minmax(title),
        "dense_cos": dense,
        "title_cos": title,
        "dense_gap": dense_sorted[0] - dense,
        "title_gap": title_max - title,
        "dense_rank": ranks["dense"].astype(np.float64),
        "lexical_top_gap": (top_lex - second) / top_lex if top_lex > 0 else 0.0,
        "dense_top_gap": dense_sorted[0] - (dense_sorted[1] if n > 1 else dense_sorted[0]),
        "dense_max": dense_sorted[0],
        "agreement": len(head["lexical"] & head["dense"]) / TOP,
    }
    columns.update(zip(FEATURES[-3:], collection.vector(), strict=True))
    for j, name in enumerate(FEATURES):
        out[:, j] = columns[name]
    return out, lexical_norm, dense_norm
