"""Score-aware fusion: a convex combination of normalised route scores.

Bruch, Gai & Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval", ACM TOIS 42(1),
2023, section 4:

    score(d) = sum over routes r of  w_r * N_r(s_r(d)),     weights w_r >= 0

where ``s_r(d)`` is passage d's score in route r (computed for every candidate, not only those
in the route's own top list, so a candidate one route missed is still scored by it) and ``N_r``
a normalisation over the candidates of the query:

- ``minmax``: ``(s - min) / (max - min)`` (0 when all equal);
- ``zscore``: ``(s - mean) / std`` (0 when std is 0);
- ``tmm`` (theoretical min-max, the paper's best): ``(s - m_r) / (max - m_r)`` where ``m_r`` is
  the lowest score the route can give: 0 for BM25, -1 for a cosine.

A candidate that a route does not score at all (``scores`` lacks the route) gets that route's
lowest candidate score before normalisation. A route that does not *apply* to a candidate
(``FusionCandidate.not_applicable``: the lexical route for a passage in another language than the
query's, :mod:`kbsearch.retrieve.crosslang`) gives it no evidence *against*: its low score there
is not counted as such, but a match there (a product code, a name shared by both languages)
still counts for it. The route's normalisation runs over the candidates it applies to; the
candidate's part for it is the larger of

- its own: ``w_r * N_r(s_r(d))`` with the normalisation fitted on the candidates the route
  applies to, at most the largest part any of them gets (``w_r`` for minmax and tmm); when
  none of them has a part above 0 (the route matched none of them), fitted on every
  candidate's own score and at most ``w_r``, so a sole match still counts; and
- the imputed one: the weighted mean of the routes that apply, ``w_r * (sum over routes a
  applying to d of w_a * N_a(s_a(d))) / (sum of w_a over routes applying to d)``,

so a candidate the route cannot judge is ranked by the others as if the route agreed with them,
unless its own evidence there is better; more evidence never lowers its score, and a candidate
every route applies to (every candidate of a one-language index) is scored as before, bit for
bit. ``parts`` (one per route, the imputed-or-own one included) add up to the score.
Ties in the fused score are broken by evidence:
first the passages more routes found in their top lists, then the better best single-route rank,
then the passage id (so results stay reproducible).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import FusionError

NORMALISATIONS = ("minmax", "zscore", "tmm")
THEORETICAL_MIN = {"lexical": 0.0, "dense": -1.0, "title": -1.0}


@dataclass(frozen=True)
class FusionCandidate:
    """A passage to fuse: its score in each route that scored it, its rank (from 1) in each
    route whose top list holds it, and the routes whose evidence does not apply to it
    (:mod:`kbsearch.retrieve.crosslang`: ``{"lexical"}`` for a passage in another language than
    the query's); a fusion reads a route that does not apply as missing, not as a low score."""

    passage_id: str
    scores: Mapping[str, float]
    ranks: Mapping[str, int]
    not_applicable: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ConvexFused:
    """A fused passage: the fused score and each route's part of it (its weighted, normalised
    score; for a route in ``read``, the larger of its own and the imputed part: ``read[route]``
    = ``(own, imputed)``, module docstring)."""

    passage_id: str
    score: float
    parts: Mapping[str, float]
    ranks: Mapping[str, int]
    read: Mapping[str, tuple[float, float]] = field(default_factory=dict)


def normalise(values: np.ndarray, method: str, route: str = "") -> np.ndarray:
    """``values`` (shape ``(n,)``) normalised by ``method`` (see the module docstring).

    Raises:
        FusionError: unknown method, or ``tmm`` for a route with no known lowest score.
    """
    return normalise_as(values, values, method, route)


def normalise_as(
    values: np.ndarray, fitted_on: np.ndarray, method: str, route: str = ""
) -> np.ndarray:
    """``values`` normalised by ``method`` with the statistics of ``fitted_on`` (the same
    arithmetic as :func:`normalise`, which is ``normalise_as(values, values, ...)``).

    Raises:
        FusionError: unknown method, or ``tmm`` for a route with no known lowest score.
    """
    if values.size == 0 or fitted_on.size == 0:
        if method not in NORMALISATIONS:
            raise FusionError(
                f"unknown normalisation {method!r}; choose one of {', '.join(NORMALISATIONS)}"
            )
        return np.zeros(values.shape)
    values, fitted_on = values.astype(np.float64), fitted_on.astype(np.float64)
    if method == "minmax":
        low, high = float(fitted_on.min()), float(fitted_on.max())
        return (values - low) / (high - low) if high > low else np.zeros_like(values)
    if method == "zscore":
        std = float(fitted_on.std())
        return (values - fitted_on.mean()) / std if std > 0 else np.zeros_like(values)
    if method == "tmm":
        if route not in THEORETICAL_MIN:
            raise FusionError(f"no theoretical minimum known for route {route!r}")
        low, high = THEORETICAL_MIN[route], float(fitted_on.max())
        return (values - low) / (high - low) if high > low else np.zeros_like(values)
    raise FusionError(
        f"unknown normalisation {method!r}; choose one of {', '.join(NORMALISATIONS)}"
    )


def convex_fusion(
    candidates: Sequence[FusionCandidate],
    weights: Mapping[str, float],
    method: str = "minmax",
) -> list[ConvexFused]:
    """Fuse ``candidates`` with ``weights`` per route, best first (ties: module docstring).

    Routes with weight 0 are left out. Returns one record per candidate.

    Raises:
        FusionError: a weight is negative or not finite, no weight is positive, a score is not
            finite, a passage is listed twice, or the normalisation is unknown.
    """
    for route, weight in weights.items():
        if not math.isfinite(weight) or weight < 0:
            raise FusionError(f"weight of route {route!r} must be finite and >= 0, got {weight}")
    routes = [r for r, w in weights.items() if w > 0]
    if not routes:
        raise FusionError("at least one route weight must be positive")
    ids = [c.passage_id for c in candidates]
    if len(set(ids)) != len(ids):
        raise FusionError("a passage is listed twice among the candidates")
    parts: dict[str, np.ndarray] = {}
    own: dict[str, np.ndarray] = {}  # a route's part for the candidates it does not apply to
    applies = {
        r: np.array([r not in c.not_applicable for c in candidates], dtype=bool) for r in routes
    }
    for route in routes:
        raw = np.array([c.scores.get(route, math.nan) for c in candidates], dtype=np.float64)
        if np.isinf(raw).any():
            raise FusionError(f"route {route!r} gives a candidate a non-finite score")
        part = np.zeros(len(candidates))
        mask = applies[route]
        scored = raw[mask]
        present = ~np.isnan(scored)
        low = scored[present].min() if present.any() else 0.0
        if mask.any():
            scored[~present] = low
            part[mask] = weights[route] * normalise(scored, method, route)
        parts[route] = part
        if not mask.all():  # the others' own evidence, normalised as the route's, capped
            others = raw[~mask]
            others[np.isnan(others)] = low
            fit, cap = scored, part[mask].max() if mask.any() else 0.0
            if cap <= 0:  # none it applies to matched: fit on every candidate's own score
                fit, cap = np.concatenate([scored, others]), weights[route]
            own[route] = np.zeros(len(candidates))
            own[route][~mask] = np.minimum(
                weights[route] * normalise_as(others, fit, method, route), cap
            )
    imputed = _imputed(weights, routes, applies, parts)
    for route, theirs in own.items():
        parts[route] = np.where(applies[route], parts[route], np.maximum(theirs, imputed[route]))
    total = np.sum(list(parts.values()), axis=0) if candidates else np.zeros(0)
    fused = [
        ConvexFused(
            c.passage_id,
            float(total[i]),
            {r: float(parts[r][i]) for r in routes},
            dict(c.ranks),
            {r: (float(own[r][i]), float(imputed[r][i])) for r in own if not applies[r][i]},
        )
        for i, c in enumerate(candidates)
    ]
    fused.sort(key=evidence_order)
    return fused


def _imputed(
    weights: Mapping[str, float],
    routes: Sequence[str],
    applies: Mapping[str, np.ndarray],
    parts: Mapping[str, np.ndarray],
) -> dict[str, np.ndarray]:
    """Per route, per candidate: the route's weight times the weighted mean of the normalised
    scores of the routes that apply to the candidate (``applies[route]``, shape ``(n,)``); 0
    where none with a positive weight applies."""
    kept = np.sum([np.where(applies[r], parts[r], 0.0) for r in routes], axis=0)
    applying = np.sum([np.where(applies[r], weights[r], 0.0) for r in routes], axis=0)
    mean = np.divide(kept, applying, out=np.zeros_like(kept), where=applying > 0)
    return {r: weights[r] * mean for r in routes}


def evidence_order(f: ConvexFused) -> tuple[float, int, int, str]:
    """Sort key: higher score, then more routes that found it, then its best rank, then id."""
    best = min(f.ranks.values()) if f.ranks else 1 << 30
    return (-f.score, -len(f.ranks), best, f.passage_id)
