"""The dense route on a Qdrant collection: its candidates and the cosines of given passages.

Candidates come from the collection by cosine on ``dense`` (exact, or HNSW with ``hnsw_ef``);
the cosines of given passages (fusion's features, the judge's evidence) are the embedded
backend's, computed from those passages' vectors in SQLite.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from qdrant_client import models

from ...store import Store
from .collection import Collection, Ranking
from .points import DENSE


def dense_scores(store: Store, vector: np.ndarray, passage_ids: Sequence[str]) -> dict[str, float]:
    """``{passage_id: cosine}`` of the given passages that have a vector: their float32
    vectors read from SQLite by id (unit length, so the dot product is the cosine) times
    ``vector`` (shape ``(dim,)``)."""
    found = store.vectors.passage_vectors(passage_ids)
    known = [pid for pid in dict.fromkeys(passage_ids) if pid in found]
    if not known:
        return {}
    cosines = np.stack([found[pid] for pid in known]) @ np.asarray(vector, dtype=np.float32)
    return dict(zip(known, cosines.tolist(), strict=True))


def dense_candidates(
    collection: Collection,
    vector: np.ndarray,
    where: models.Filter,
    depth: int,
    *,
    exact: bool,
    hnsw_ef: int | None,
) -> Ranking:
    """The top ``depth`` passages passing ``where`` by cosine with ``vector`` (shape
    ``(dim,)``): an exact scan when ``exact``, else HNSW with ``hnsw_ef``."""
    return collection.query(DENSE, vector, where, depth, exact=exact, hnsw_ef=hnsw_ef)
