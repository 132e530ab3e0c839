"""Qdrant Edge (``qdrant-edge-py``): Qdrant's engine in-process, as a :class:`.Collection`.

An :class:`EdgeCollection` is one ``EdgeShard`` in a folder: created with the dense vector
(cosine), both BM25 sparse vectors (``Modifier.Idf``) and the payload indexes, loaded when the
folder already holds a shard. Updates are applied synchronously (there is no server to wait
for). New points land in an appendable segment, held in memory and searched exhaustively;
:meth:`optimize` (called at the end of every sync, :meth:`.backend.QdrantBackend.sync`) turns
it into indexed segments with the HNSW graph (m, ef_construct of :class:`HnswSettings`), which
Edge does only when asked, and only for segments over its indexing threshold.

A search node holds no copy of the collection, so the shard is created with every part of its
indexed segments placed ``Memory.Cold`` (memory-mapped files, read on demand, nothing loaded
up front): the dense vectors, both sparse inverted indexes (Edge's default pins them in RAM),
the HNSW graph, the payload, the payload indexes and the point id tracker. A process's memory
then holds the pages its searches touch. The one part held in RAM (``Memory.Pinned``) is a
quantized copy of the dense vectors (:func:`dense_quantization`: TurboQuant, 2 bits a
dimension, 96 bytes a 384-d vector): HNSW walks it and returns its approximate scores
(:attr:`.collection.Search.quantized`; Qdrant's own rescoring, which would page in the
original vectors, is off) and the caller rescores the candidates exactly from SQLite's float
vectors (:func:`.dense.dense_candidates`), so an HNSW search touches no page of the original
vectors (docs/benchmarks.md, "A Qdrant Edge search node's memory"). Loading a shard records this
configuration in it, so the segments Edge builds from then on are placed so; segments and
payload indexes built before keep their own placement.

A new shard has no write-ahead log (``wal_enabled=False``): Edge opens a log by reading its
32 MiB segments whole, and keeps the last ones after a flush, so they sat in a search node's
memory (52 MB of a 200,000-passage node; docs/benchmarks.md). Instead every write is flushed
before :meth:`~EdgeCollection.upsert` or a delete returns, so what a call has written is on disk
when it returns, as with the log. A crash during a call can lose that call's points in Qdrant
only: SQLite, the system of record, was written first, and ``kbsearch verify`` / ``kbsearch
sync`` find and re-write them (:mod:`.mirror`), as after a failed write. A shard created
before keeps its log (Edge refuses to load a shard with the other setting, so loading leaves
it unspecified).

Filters are compiled once to qdrant-client's model (:func:`.filters.to_qdrant`) and
translated here (:func:`edge_filter`), so both clients run the same conditions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import qdrant_edge as qe
from qdrant_client import models

from ...errors import BackendUnavailableError
from .collection import (
    Collection,
    Ranking,
    Search,
    StoredPoint,
    named_vectors,
    point_payload,
    stored_point,
)
from .points import DENSE, PAYLOAD_INDEXES, SPARSE_ALL, SPARSE_PUBLIC, PassagePoint
from .sparse import LengthStatistics

COLD = qe.Memory.Cold


def dense_quantization() -> Any:
    """The quantized copy of the dense vectors kept in RAM: TurboQuant, 2 bits a dimension
    (``TurboQuantBitSize.Bits2``), pinned (docs/benchmarks.md: on E5 vectors its top 100
    holds 0.995 of the exact top 10 at 4 candidates a result; binary 1-bit, 0.857)."""
    return qe.TurboQuantQuantizationConfig(bits=qe.TurboQuantBitSize.Bits2, memory=qe.Memory.Pinned)


def payload_index(kind: str) -> Any:
    """The parameters of a payload index of ``kind`` (``keyword`` or ``integer``), placed
    :data:`COLD` in indexed segments.

    Raises:
        ValueError: another kind.
    """
    if kind == "keyword":
        return qe.KeywordIndexParams(memory=COLD)
    if kind == "integer":
        return qe.IntegerIndexParams(lookup=True, range=True, memory=COLD)
    raise ValueError(f"no Qdrant Edge payload index of kind {kind!r}")


@dataclass(frozen=True)
class HnswSettings:
    """HNSW graph settings (Malkov & Yashunin, 2018): ``m`` links per node, ``ef_construct``
    candidates while building; ``full_scan_threshold`` (KB of vectors) below which a segment is
    searched exhaustively; ``payload_m`` extra links per payload value (Qdrant's filterable
    HNSW), ``None`` = Qdrant's default (``m``); 0 (the default) builds none: a filter that
    leaves fewer points than the full-scan threshold is searched exhaustively through the
    payload index anyway, and the extra graphs (one per value of every indexed field) multiply
    the build time; ``indexing_threads`` threads building the graph (0: Qdrant's choice from
    the CPU count)."""

    m: int = 16
    ef_construct: int = 100
    full_scan_threshold: int = 10_000
    payload_m: int | None = 0
    indexing_threads: int = 0


def edge_condition(condition: Any) -> Any:
    """One qdrant-client condition as a qdrant-edge one (field match / any / range only).

    Raises:
        ValueError: a condition :func:`.filters.to_qdrant` never produces.
    """
    if isinstance(condition, models.FieldCondition):
        match, bounds = condition.match, condition.range
        if isinstance(match, models.MatchValue):
            return qe.FieldCondition(key=condition.key, match=qe.MatchValue(match.value))
        if isinstance(match, models.MatchAny):
            return qe.FieldCondition(key=condition.key, match=qe.MatchAny(match.any))
        if isinstance(bounds, models.Range):
            return qe.FieldCondition(
                key=condition.key,
                range=qe.RangeFloat(gte=bounds.gte, gt=bounds.gt, lte=bounds.lte, lt=bounds.lt),
            )
    if isinstance(condition, models.Filter):
        return edge_filter(condition)
    raise ValueError(f"no Qdrant Edge translation for condition {condition!r}")


def edge_filter(where: models.Filter) -> qe.Filter:
    """``where`` (qdrant-client's model) as a ``qdrant_edge.Filter``."""

    def part(items: Any) -> list[Any] | None:
        if items is None:
            return None
        items = items if isinstance(items, list) else [items]
        return [edge_condition(c) for c in items]

    return qe.Filter(
        must=part(where.must), should=part(where.should), must_not=part(where.must_not)
    )


class EdgeCollection(Collection):
    """A Qdrant Edge shard in ``path`` (module docstring); ``search_threads`` sizes Edge's
    search pool (``None``: one per CPU)."""

    def __init__(
        self, path: str | Path, hnsw: HnswSettings | None = None, search_threads: int | None = None
    ) -> None:
        self.path = Path(path)
        self.hnsw = hnsw or HnswSettings()
        self.search_threads = search_threads
        self.shard: Any = None
        self.dim: int | None = None

    def config(self, dim: int | None, create: bool = True) -> qe.EdgeConfig:
        """The shard's configuration for ``dim``-dimensional dense vectors (``None``: none):
        the vectors with their quantized copy, :class:`HnswSettings` and the placement of the
        module docstring (segments built without a quantized copy keep none: a quantized search
        scores their original vectors); no
        write-ahead log when ``create``, the shard's own setting when loading."""
        sparse = qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf, memory=COLD)
        vectors = (
            {}
            if dim is None
            else {
                DENSE: qe.EdgeVectorParams(
                    size=dim,
                    distance=qe.Distance.Cosine,
                    memory=COLD,
                    quantization_config=dense_quantization(),
                )
            }
        )
        hnsw = qe.HnswIndexConfig(
            m=self.hnsw.m,
            ef_construct=self.hnsw.ef_construct,
            full_scan_threshold=self.hnsw.full_scan_threshold,
            payload_m=self.hnsw.payload_m,
            max_indexing_threads=self.hnsw.indexing_threads,
            memory=COLD,
        )
        return qe.EdgeConfig(
            vectors=vectors,
            sparse_vectors={SPARSE_ALL: sparse, SPARSE_PUBLIC: sparse},
            hnsw_config=hnsw,
            max_search_threads=self.search_threads,
            payload_memory=COLD,
            id_tracker_memory=COLD,
            wal_enabled=False if create else None,
        )

    def ensure(self, dim: int | None) -> None:
        if self.shard is not None:
            if dim != self.dim:
                raise BackendUnavailableError(
                    f"Qdrant Edge shard {self.path} holds {self.dim or 'no'}-dimensional dense "
                    f"vectors, this index {dim or 'none'}"
                )
            return
        exists = self.path.is_dir() and any(self.path.iterdir())
        try:
            if exists:
                self.shard = qe.EdgeShard.load(str(self.path), self.config(dim, create=False))
            else:
                self.path.mkdir(parents=True, exist_ok=True)
                self.shard = qe.EdgeShard.create(str(self.path), self.config(dim))
                for field, kind in PAYLOAD_INDEXES.items():
                    self.shard.update(
                        qe.UpdateOperation.create_field_index(field, payload_index(kind))
                    )
                self.shard.flush()
        except (OSError, ValueError, RuntimeError) as exc:
            raise BackendUnavailableError(
                f"cannot open Qdrant Edge shard {self.path}: {exc}"
            ) from exc
        self.dim = dim

    def _open(self) -> Any:
        if self.shard is None:
            raise BackendUnavailableError(
                f"Qdrant Edge shard {self.path} is not open; call ensure()"
            )
        return self.shard

    def _write(self, operation: Any) -> None:
        """Apply ``operation`` and flush it to disk (the module docstring: no log to replay)."""
        shard = self._open()
        shard.update(operation)
        shard.flush()

    def upsert(self, points: Sequence[PassagePoint], lengths: LengthStatistics) -> None:
        edge_points = []
        for p in points:
            vectors: dict[str, Any] = {}
            for name, v in named_vectors(p, lengths).items():
                vectors[name] = (
                    qe.SparseVector(indices=v[0], values=v[1]) if isinstance(v, tuple) else v
                )
            edge_points.append(qe.Point(p.id, vectors, point_payload(p, lengths)))
        if edge_points:
            self._write(qe.UpdateOperation.upsert_points(edge_points))

    def _delete_ids(self, ids: list[Any]) -> None:
        self._write(qe.UpdateOperation.delete_points(ids))

    def _delete_where(self, where: models.Filter) -> None:
        self._write(qe.UpdateOperation.delete_points_by_filter(edge_filter(where)))

    def _search(self, search: Search) -> Ranking:
        vector: Any = search.vector
        if isinstance(vector, tuple):
            vector = qe.SparseVector(indices=vector[0], values=vector[1])
        found = self._open().query(
            qe.QueryRequest(
                limit=search.fetch,
                query=qe.Query.Nearest(vector, using=search.using),
                filter=edge_filter(search.where),
                params=qe.SearchParams(
                    exact=search.exact,
                    hnsw_ef=search.hnsw_ef,
                    quantization=(
                        qe.QuantizationSearchParams(rescore=False) if search.quantized else None
                    ),
                ),
                with_payload=["passage_id"] if search.payload else False,
            )
        )
        if not search.payload:
            return [(str(p.id), float(p.score)) for p in found]
        return [(str(p.payload["passage_id"]), float(p.score)) for p in found]

    def passage_ids_of(self, point_ids: Sequence[str]) -> dict[str, str]:
        records = self._open().retrieve(list(point_ids), ["passage_id"], False)
        return {str(r.id): str(r.payload["passage_id"]) for r in records}

    def points(self, where: models.Filter | None = None) -> list[StoredPoint]:
        shard, out, offset = self._open(), [], None
        condition = None if where is None else edge_filter(where)
        with_vector: Any = [DENSE] if self.dim is not None else False
        while True:
            records, offset = shard.scroll(
                qe.ScrollRequest(
                    offset=offset,
                    limit=1024,
                    filter=condition,
                    with_payload=True,
                    with_vector=with_vector,
                )
            )
            out += [stored_point(r.payload, r.vector) for r in records]
            if offset is None:
                return out

    def count(self) -> int:
        return int(self._open().count(qe.CountRequest(exact=True)))

    def optimize(self) -> None:
        """Run Edge's optimizers until none is planned (segments over the indexing threshold
        get their HNSW graph and the placement of the module docstring), then flush (a shard
        with a write-ahead log: so the log a later load replays is short)."""
        shard = self._open()
        shard.optimize()
        shard.flush()

    def info(self) -> tuple[int, int, int]:
        """(segments, points, indexed vectors) of the shard, as Qdrant Edge reports them."""
        info = self._open().info()
        return int(info.segments_count), int(info.points_count), int(info.indexed_vectors_count)

    def close(self) -> None:
        if self.shard is not None:
            self.shard.close()
            self.shard = None
