"""Constructed fusion candidates shared by the fusion tests (tests/fuse/)."""

from __future__ import annotations

import numpy as np

from kbsearch.fuse.convex import FusionCandidate
from kbsearch.fuse.features import CollectionStats

FAQ = CollectionStats(passages=200, titled=200, unique_titled=190, titles=195)
ARTICLES = CollectionStats(passages=800, titled=800, unique_titled=40, titles=200)
UNTITLED = CollectionStats(passages=500, titled=0, unique_titled=0, titles=0)


def candidate(
    pid: str, lexical: float, dense: float, title: float | None, ranks: dict[str, int]
) -> FusionCandidate:
    scores = {"lexical": lexical, "dense": dense}
    if title is not None:
        scores["title"] = title
    return FusionCandidate(pid, scores, ranks)


def crowd(n: int = 30, title: bool = True) -> list[FusionCandidate]:
    """``n`` middling candidates, each found by one route."""
    rng = np.random.default_rng(1)
    out = []
    for i in range(n):
        ranks = {"lexical": i + 3} if i % 2 else {"dense": i + 3}
        out.append(
            candidate(
                f"p{i:02d}",
                float(rng.uniform(1, 5)),
                float(rng.uniform(0.70, 0.80)),
                float(rng.uniform(0.6, 0.8)) if title else None,
                ranks,
            )
        )
    return out
