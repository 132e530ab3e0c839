"""Reciprocal Rank Fusion.

Cormack, Clarke & Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and individual rank
learning methods", SIGIR 2009:

    score(d) = sum over routes r of  w_r / (k + rank_r(d))

ranks from 1, weights 1 by default; a passage absent from a route's list gets nothing from it.

A route that does not *apply* to a passage (the lexical route for a passage in another language
than the query's, :mod:`kbsearch.retrieve.crosslang`) is different from a route that looked and
did not find it: a 0 there is not evidence against the passage, but a match there (a product
code, a name shared by both languages) still is evidence for it. Such a route gives the passage
the better of its own contribution (0 when it did not list the passage) and the one *imputed*
from the routes that apply, their weighted mean:

    imputed_r(d) = w_r * (sum over routes a applying to d of  1 / (k + rank_a(d)) * w_a)
                       / (sum of w_a over routes applying to d)
    score(d) = sum over routes applying to d of  w_a / (k + rank_a(d))
               + sum over routes r not applying to d of  max(own_r(d), imputed_r(d))

so with two routes of equal weight a French page at dense rank 2 for an English query that the
lexical route did not list scores ``2 / (k + 2)``, as if the lexical route had ranked it where
the dense one did, not as if it had ranked it last; one the lexical route ranked 1st keeps that
``1 / (k + 1)``. More evidence in any route never lowers a score. A passage every route
applies to is scored as before.
Ties are broken by evidence: first the passages more routes found, then the better best
single-route rank, then the passage id (ascending), so results are reproducible.

kbsearch's default k is 10, not the paper's 60: chosen on SciFact, it gave significant nDCG@10
gains on two other datasets (piaf_fr +0.010, covid_faq_en +0.014; paired randomization test,
p < 0.01) and no significant change on the third (docs/benchmarks.md, "Fusion settings").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..errors import FusionError

DEFAULT_RRF_K = 10.0
PAPER_RRF_K = 60.0


@dataclass(frozen=True)
class Contribution:
    """What one route gave a fused passage: its rank there, its score there, and
    ``weight / (k + rank)``."""

    rank: int
    score: float
    value: float


@dataclass(frozen=True)
class Fused:
    """A fused passage: ``score`` = the sum of :meth:`read` over its routes. ``contributions``:
    what each route that listed it gave; ``imputed``: for each route in ``not_applicable`` (module
    docstring), the value imputed from the routes that apply."""

    passage_id: str
    score: float
    contributions: Mapping[str, Contribution]
    not_applicable: frozenset[str] = frozenset()
    imputed: Mapping[str, float] = field(default_factory=dict)

    def own(self, route: str) -> float:
        """What ``route`` itself gave the passage (0 when it did not list it)."""
        found = self.contributions.get(route)
        return found.value if found is not None else 0.0

    def read(self, route: str) -> float:
        """The value fusion counts for ``route``: its own, or for a route that does not apply
        the larger of its own and the imputed one."""
        own = self.own(route)
        return max(own, self.imputed[route]) if route in self.imputed else own


def check_ranking(route: str, ranking: Sequence[tuple[str, float]]) -> None:
    """Refuse a ranked list with a repeated passage id or a non-finite score.

    Raises:
        FusionError: naming the route and the offending id.
    """
    seen: set[str] = set()
    for passage_id, score in ranking:
        if passage_id in seen:
            raise FusionError(f"route {route!r} lists passage {passage_id!r} twice")
        if not math.isfinite(score):
            raise FusionError(f"route {route!r} gives passage {passage_id!r} a non-finite score")
        seen.add(passage_id)


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[tuple[str, float]]],
    k: float = DEFAULT_RRF_K,
    weights: Mapping[str, float] | None = None,
    not_applicable: Mapping[str, frozenset[str]] | None = None,
) -> list[Fused]:
    """Fuse ranked lists ``{route: [(passage_id, score), ...]}`` (best first) with RRF.

    ``not_applicable``: ``{passage_id: routes that do not apply to it}`` (module docstring).
    Returns every passage of any list, best first, ties broken by evidence (module docstring).

    Raises:
        FusionError: a list has duplicate ids or non-finite scores, ``k`` is negative or not
            finite, or a weight is negative or not finite.
    """
    if not math.isfinite(k) or k < 0:
        raise FusionError(f"RRF k must be a finite number >= 0, got {k}")
    weights = dict(weights or {})
    parts: dict[str, dict[str, Contribution]] = {}
    for route, ranking in rankings.items():
        weight = weights.get(route, 1.0)
        if not math.isfinite(weight) or weight < 0:
            raise FusionError(f"weight of route {route!r} must be finite and >= 0, got {weight}")
        check_ranking(route, ranking)
        for rank, (passage_id, score) in enumerate(ranking, start=1):
            if k + rank == 0:
                raise FusionError("k + rank is zero")
            value = weight / (k + rank)
            parts.setdefault(passage_id, {})[route] = Contribution(rank, score, value)
    fused = [
        Fused(pid, math.fsum(c.value for c in contributions.values()), contributions)
        for pid, contributions in parts.items()
    ]
    if not_applicable:
        total = math.fsum(weights.get(r, 1.0) for r in rankings)
        fused = [
            _not_applying(f, not_applicable[f.passage_id], total, weights, rankings)
            if not_applicable.get(f.passage_id)
            else f
            for f in fused
        ]
    fused.sort(key=evidence_order)
    return fused


def _not_applying(
    f: Fused,
    missing: frozenset[str],
    total: float,
    weights: Mapping[str, float],
    rankings: Mapping[str, object],
) -> Fused:
    """``f`` with each route of ``missing`` read as the larger of its own contribution and the
    one imputed from the others (module docstring)."""
    missing = frozenset(missing) & frozenset(rankings)
    kept = math.fsum(c.value for r, c in f.contributions.items() if r not in missing)
    applying = math.fsum(weights.get(r, 1.0) for r in rankings if r not in missing)
    imputed = {r: weights.get(r, 1.0) * kept / applying if applying > 0 else 0.0 for r in missing}
    fused = Fused(f.passage_id, 0.0, f.contributions, missing, imputed)
    score = math.fsum([kept, *(fused.read(r) for r in missing)])
    if applying > 0:  # never below the imputed reading, computed as it always was (rounding)
        score = max(score, total / applying * kept)
    return replace(fused, score=score)


def evidence_order(f: Fused) -> tuple[float, int, int, str]:
    """Sort key: higher score, then more routes that found it, then its best rank, then id."""
    best = min((c.rank for c in f.contributions.values()), default=1 << 30)
    return (-f.score, -len(f.contributions), best, f.passage_id)
