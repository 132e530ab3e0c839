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
(``Candidate.not_applicable``: the lexical route for a passage in another language than the
query's, :mod:`kbsearch.search.crosslang`) is missing evidence, not the lowest score: the
route's normalisation runs over the candidates it applies to, and the candidate's score is the
weighted mean of the routes that apply, times the total weight:

    score(d) = (sum of all w_r) / (sum of w_r over routes applying to d)
               * sum over routes r applying to d of  w_r * N_r(s_r(d))

so a candidate every route applies to (every candidate of a one-language index) is scored as
before, bit for bit, and one the lexical route cannot judge is ranked by the others as if the
lexical route agreed with them (its ``parts`` are those scaled values; they add up to the
score). Ties in the fused score are broken by evidence:
first the passages more routes found in their top lists, then the better best single-route rank,
then the passage id (so results stay reproducible).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import FusionError

NORMALISATIONS = ("minmax", "zscore", "tmm")
THEORETICAL_MIN = {"lexical": 0.0, "dense": -1.0, "title": -1.0}


@dataclass(frozen=True)
class Candidate:
    """A passage to fuse: its score in each route that scored it, its rank (from 1) in each
    route whose top list holds it, and the routes whose evidence does not apply to it
    (:mod:`kbsearch.search.crosslang`: ``{"lexical"}`` for a passage in another language than
    the query's); a fusion reads a route that does not apply as missing, not as a low score."""

    passage_id: str
    scores: Mapping[str, float]
    ranks: Mapping[str, int]
    not_applicable: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ConvexFused:
    """A fused passage: the fused score and each route's weighted, normalised part of it."""

    passage_id: str
    score: float
    parts: Mapping[str, float]
    ranks: Mapping[str, int]


def normalise(values: np.ndarray, method: str, route: str = "") -> np.ndarray:
    """``values`` (shape ``(n,)``) normalised by ``method`` (see the module docstring).

    Raises:
        FusionError: unknown method, or ``tmm`` for a route with no known lowest score.
    """
    if values.size == 0:
        return values.astype(np.float64)
    values = values.astype(np.float64)
    if method == "minmax":
        low, high = float(values.min()), float(values.max())
        return (values - low) / (high - low) if high > low else np.zeros_like(values)
    if method == "zscore":
        std = float(values.std())
        return (values - values.mean()) / std if std > 0 else np.zeros_like(values)
    if method == "tmm":
        if route not in THEORETICAL_MIN:
            raise FusionError(f"no theoretical minimum known for route {route!r}")
        low, high = THEORETICAL_MIN[route], float(values.max())
        return (values - low) / (high - low) if high > low else np.zeros_like(values)
    raise FusionError(
        f"unknown normalisation {method!r}; choose one of {', '.join(NORMALISATIONS)}"
    )


def convex_fusion(
    candidates: Sequence[Candidate],
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
    applies = {
        r: np.array([r not in c.not_applicable for c in candidates], dtype=bool) for r in routes
    }
    for route in routes:
        raw = np.array([c.scores.get(route, math.nan) for c in candidates], dtype=np.float64)
        if np.isinf(raw).any():
            raise FusionError(f"route {route!r} gives a candidate a non-finite score")
        part = np.zeros(len(candidates))
        mask = applies[route]
        if mask.any():
            scored = raw[mask]
            present = ~np.isnan(scored)
            scored[~present] = scored[present].min() if present.any() else 0.0
            part[mask] = weights[route] * normalise(scored, method, route)
        parts[route] = part
    missing = ~np.all(list(applies.values()), axis=0) if candidates else np.zeros(0, bool)
    if missing.any():  # only the candidates some route does not apply to move
        scale = missing_scale(weights, routes, applies)
        for route in routes:
            parts[route] = np.where(missing, parts[route] * scale, parts[route])
    total = np.sum(list(parts.values()), axis=0) if candidates else np.zeros(0)
    fused = [
        ConvexFused(
            c.passage_id,
            float(total[i]),
            {r: float(parts[r][i]) for r in routes if r not in c.not_applicable},
            dict(c.ranks),
        )
        for i, c in enumerate(candidates)
    ]
    fused.sort(key=evidence_order)
    return fused


def missing_scale(
    weights: Mapping[str, float], routes: Sequence[str], applies: Mapping[str, np.ndarray]
) -> np.ndarray:
    """Per candidate: the total weight of ``routes`` over the weight of those that apply to it
    (``applies[route]``, shape ``(n,)``); 0 where none with a positive weight applies."""
    total = math.fsum(weights[r] for r in routes)
    applying = np.sum([np.where(applies[r], weights[r], 0.0) for r in routes], axis=0)
    return np.divide(total, applying, out=np.zeros_like(applying), where=applying > 0)


def evidence_order(f: ConvexFused) -> tuple[float, int, int, str]:
    """Sort key: higher score, then more routes that found it, then its best rank, then id."""
    best = min(f.ranks.values()) if f.ranks else 1 << 30
    return (-f.score, -len(f.ranks), best, f.passage_id)
