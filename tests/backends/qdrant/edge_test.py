"""Qdrant Edge specifics: optimize() (where Edge builds HNSW) keeps every point and the
exact top k."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kbsearch.backends.qdrant.edge import EdgeCollection, HnswSettings
from kbsearch.backends.qdrant.filters import to_qdrant
from kbsearch.backends.qdrant.points import DENSE
from kbsearch.filters import Filters


def test_optimize_keeps_every_point_and_the_exact_top_k(tmp_path: Path, corpus) -> None:
    hnsw = HnswSettings(m=8, ef_construct=32, payload_m=0, indexing_threads=1)
    edge = EdgeCollection(tmp_path / "shard", hnsw, search_threads=1)
    points = corpus.points()
    edge.ensure(32)
    edge.upsert(points, corpus.lengths())
    where = to_qdrant(Filters(audience="staff"))
    query = np.random.default_rng(5).normal(size=32).astype(np.float32)
    before = edge.query(DENSE, query, where, 5)
    edge.optimize()
    segments, stored, _ = edge.info()
    assert stored == len(points) == edge.count()
    assert segments >= 1
    assert edge.query(DENSE, query, where, 5) == before
    edge.close()
