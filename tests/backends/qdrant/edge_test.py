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


CRASHING_WRITER = """
import os, sys
sys.path[:0] = {paths!r}
from conftest import make_corpus
from kbsearch.backends.qdrant.edge import EdgeCollection
corpus = make_corpus()
edge = EdgeCollection({shard!r}, search_threads=1)
edge.ensure(32)
edge.upsert(corpus.points(), corpus.lengths())
os._exit(0)  # a crash: no close, no optimize
"""


def test_a_new_shard_has_no_write_ahead_log_and_a_write_survives_a_crash(
    tmp_path: Path, corpus
) -> None:
    """Created without Edge's write-ahead log (its segments are read whole when a shard loads,
    so they would sit in a search node's memory); each write is flushed before it returns, so
    a process killed right after a write leaves every point on disk."""
    import subprocess
    import sys

    tests = Path(__file__).parent
    shard = tmp_path / "shard"
    paths = [str(tests), str(tests.parents[1]), *sys.path]
    script = CRASHING_WRITER.format(paths=paths, shard=str(shard))
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    assert not any((shard / "wal").glob("*")), "a write-ahead log was written"
    edge = EdgeCollection(shard, search_threads=1)
    edge.ensure(32)
    assert edge.count() == len(corpus.points())
    edge.close()


def test_a_shard_created_with_a_write_ahead_log_still_loads(tmp_path: Path, corpus) -> None:
    """Shards built before keep their log (Edge refuses to load one with another setting)."""
    import qdrant_edge as qe

    shard = tmp_path / "shard"
    shard.mkdir()
    config = EdgeCollection(shard).config(32)
    logged = qe.EdgeConfig(
        vectors=config.vectors, sparse_vectors=config.sparse_vectors, wal_enabled=True
    )
    qe.EdgeShard.create(str(shard), logged).close()
    edge = EdgeCollection(shard, search_threads=1)
    edge.ensure(32)
    edge.upsert(corpus.points(), corpus.lengths())
    assert edge.count() == len(corpus.points())
    edge.close()
