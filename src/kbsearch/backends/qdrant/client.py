"""The qdrant-client side of :class:`.collection.Collection`: a Qdrant server or cluster
(``url``) or qdrant-client's local mode (``location=":memory:"`` or ``path``; exact search in
Python, for tests). Every write waits for Qdrant to apply it (``wait=True``)."""

from __future__ import annotations

import importlib.metadata
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from qdrant_client import QdrantClient, models
from qdrant_client.common.version_check import is_compatible

from ...errors import BackendUnavailableError
from .collection import (
    DEFAULT_COLLECTION,
    ClusterSettings,
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

_INDEX_KIND = {
    "keyword": models.PayloadSchemaType.KEYWORD,
    "integer": models.PayloadSchemaType.INTEGER,
}


class ClientCollection(Collection):
    """A collection reached through ``qdrant-client`` (server, cluster or local mode).

    Args:
        client: an open ``QdrantClient`` (``QdrantClient(url=...)``, ``QdrantClient(":memory:")``
            or ``QdrantClient(path=...)``).
        name: collection name.
        cluster: shard / replication / write-consistency settings used when creating it.
        local: the client runs qdrant-client's local mode (exact search always; search
            parameters are not sent, as local mode ignores them).
    """

    def __init__(
        self,
        client: QdrantClient,
        name: str = DEFAULT_COLLECTION,
        cluster: ClusterSettings | None = None,
        local: bool = False,
    ) -> None:
        self.client = client
        self.name = name
        self.cluster = cluster or ClusterSettings()
        self.local = local

    @classmethod
    def open(
        cls, location: str, name: str = DEFAULT_COLLECTION, cluster: ClusterSettings | None = None
    ) -> ClientCollection:
        """A collection at ``location``: an ``http(s)://`` URL (API key from
        ``$QDRANT_API_KEY`` when set), ``":memory:"``, or a folder for local mode.

        Raises:
            BackendUnavailableError: the client cannot be created.
        """
        try:
            if location.startswith(("http://", "https://")):
                # The client's own version check runs in a background thread and prints a
                # warning of its own when the server is down; ensure() checks in this thread.
                client = QdrantClient(
                    url=location,
                    api_key=os.environ.get("QDRANT_API_KEY"),
                    check_compatibility=False,
                )
            elif location == ":memory:":
                client = QdrantClient(location=":memory:")
            else:
                client = QdrantClient(path=location)
        except Exception as exc:  # the client raises many kinds (connection, lock, value)
            raise BackendUnavailableError(f"cannot open Qdrant at {location}: {exc}") from exc
        remote = location.startswith(("http://", "https://"))
        return cls(client, name, cluster, local=not remote)

    def ensure(self, dim: int | None) -> None:
        if not self.local:
            self._check_version()
        if self.client.collection_exists(self.name):
            found = self._dimension()
            if found != dim:
                raise BackendUnavailableError(
                    f"Qdrant collection {self.name!r} holds {found or 'no'}-dimensional dense "
                    f"vectors, this index {dim or 'none'}; use another collection or recreate it"
                )
            return
        vectors = (
            {}
            if dim is None
            else {DENSE: models.VectorParams(size=dim, distance=models.Distance.COSINE)}
        )
        sparse = models.SparseVectorParams(modifier=models.Modifier.IDF)
        self.client.create_collection(
            self.name,
            vectors_config=vectors,
            sparse_vectors_config={SPARSE_ALL: sparse, SPARSE_PUBLIC: sparse},
            shard_number=self.cluster.shard_number,
            replication_factor=self.cluster.replication_factor,
            write_consistency_factor=self.cluster.write_consistency_factor,
        )
        with warnings.catch_warnings():  # local mode warns that it has no payload indexes
            warnings.filterwarnings("ignore", "Payload indexes have no effect", UserWarning)
            for field, kind in PAYLOAD_INDEXES.items():
                self.client.create_payload_index(self.name, field, _INDEX_KIND[kind], wait=True)

    def _check_version(self) -> None:
        """Warn (``UserWarning``) when the server's version is outside qdrant-client's supported
        range (same major version, minor versions at most 1 apart: qdrant-client's own rule)."""
        server = self.client.info().version
        client = importlib.metadata.version("qdrant-client")
        if not is_compatible(client, server):
            warnings.warn(
                f"Qdrant server {server} may not work with qdrant-client {client} (their major "
                "versions should match and minor versions differ by at most 1)",
                UserWarning,
                stacklevel=2,
            )

    def _dimension(self) -> int | None:
        params = self.client.get_collection(self.name).config.params.vectors
        if isinstance(params, Mapping) and DENSE in params:
            return int(params[DENSE].size)
        return None

    def upsert(self, points: Sequence[PassagePoint], lengths: LengthStatistics) -> None:
        structs = []
        for p in points:
            vectors: dict[str, Any] = {}
            for name, v in named_vectors(p, lengths).items():
                vectors[name] = (
                    models.SparseVector(indices=v[0], values=v[1]) if isinstance(v, tuple) else v
                )
            structs.append(
                models.PointStruct(id=p.id, vector=vectors, payload=point_payload(p, lengths))
            )
        if structs:
            self.client.upsert(self.name, structs, wait=True)

    def _delete_ids(self, ids: list[Any]) -> None:
        self.client.delete(self.name, models.PointIdsList(points=ids), wait=True)

    def _delete_where(self, where: models.Filter) -> None:
        self.client.delete(self.name, models.FilterSelector(filter=where), wait=True)

    def _search(self, search: Search) -> Ranking:
        query: Any = search.vector
        if isinstance(query, tuple):
            query = models.SparseVector(indices=query[0], values=query[1])
        quantization = models.QuantizationSearchParams(rescore=False) if search.quantized else None
        parameters = models.SearchParams(
            exact=search.exact, hnsw_ef=search.hnsw_ef, quantization=quantization
        )
        response = self.client.query_points(
            self.name,
            query=query,
            using=search.using,
            query_filter=search.where,
            limit=search.fetch,
            search_params=None if self.local else parameters,
            with_payload=["passage_id"] if search.payload else False,
        )
        if not search.payload:
            return [(str(p.id), float(p.score)) for p in response.points]
        return [(str((p.payload or {})["passage_id"]), float(p.score)) for p in response.points]

    def passage_ids_of(self, point_ids: Sequence[str]) -> dict[str, str]:
        records = self.client.retrieve(
            self.name, list(point_ids), with_payload=["passage_id"], with_vectors=False
        )
        return {str(r.id): str((r.payload or {})["passage_id"]) for r in records}

    def points(self, where: models.Filter | None = None) -> list[StoredPoint]:
        out: list[StoredPoint] = []
        offset: Any = None
        while True:
            records, offset = self.client.scroll(
                self.name,
                scroll_filter=where,
                limit=1024,
                offset=offset,
                with_payload=True,
                with_vectors=[DENSE] if self._dimension() else False,
            )
            out += [stored_point(r.payload, r.vector) for r in records]
            if offset is None:
                return out

    def count(self) -> int:
        return int(self.client.count(self.name, exact=True).count)

    def optimize(self) -> None:
        """Nothing to do: a server builds its indexes in the background."""

    def close(self) -> None:
        self.client.close()
