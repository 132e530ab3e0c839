"""The top k of scored rows, ties broken by passage id (every in-memory route uses it)."""

from __future__ import annotations

import numpy as np


def top_k(
    candidates: np.ndarray, scores: np.ndarray, passage_ids: np.ndarray, k: int
) -> list[tuple[str, float]]:
    """Top ``k`` ``(passage_id, score)`` of ``candidates`` (row positions) with their
    ``scores`` (aligned with ``candidates``), best first, ties broken by passage id.

    Everything scoring at least the k-th best is kept before sorting, so ties at the cut are
    decided by id.
    """
    if k <= 0 or len(candidates) == 0:
        return []
    if len(candidates) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        chosen = scores >= kth
        candidates, scores = candidates[chosen], scores[chosen]
    ids = passage_ids[candidates]
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], ids[i]))[:k]
    return [(str(ids[i]), float(scores[i])) for i in order]
