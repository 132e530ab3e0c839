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


def test_a_search_node_shard_keeps_every_indexed_part_on_disk(tmp_path: Path) -> None:
    """Vectors, both sparse indexes, the HNSW graph, payload and id tracker memory-mapped
    (``Memory.Cold``), so a search node's memory holds only the pages its searches touch."""
    import qdrant_edge as qe

    from kbsearch.backends.qdrant.points import SPARSE_ALL, SPARSE_PUBLIC

    config = EdgeCollection(tmp_path / "shard").config(32)
    cold = qe.Memory.Cold
    assert config.vectors[DENSE].memory == cold
    assert config.sparse_vectors[SPARSE_ALL].memory == cold
    assert config.sparse_vectors[SPARSE_PUBLIC].memory == cold
    assert config.hnsw_config is not None and config.hnsw_config.memory == cold
    assert config.payload_memory == cold and config.id_tracker_memory == cold
    # no extra graph per payload value by default (they multiply the build time)
    assert config.hnsw_config.payload_m == 0


def test_payload_indexes_are_cold_and_of_their_kind() -> None:
    import pytest
    import qdrant_edge as qe

    from kbsearch.backends.qdrant.edge import payload_index

    assert isinstance(payload_index("keyword"), qe.KeywordIndexParams)
    integer = payload_index("integer")
    assert isinstance(integer, qe.IntegerIndexParams)
    assert integer.memory == qe.Memory.Cold and integer.range and integer.lookup
    with pytest.raises(ValueError, match="kind 'text'"):
        payload_index("text")
