"""Where an index's Qdrant collection lives, recorded in the index itself.

A :class:`QdrantTarget` names either a Qdrant server or cluster (``url``, through
qdrant-client) or a Qdrant Edge shard folder (``path``, in-process). It is stored in the
SQLite file's ``meta`` table (key ``qdrant``, JSON) when the index is indexed or synced with
``--backend qdrant``, so every later
``open_kb`` (search, eval, bench, serve) reaches the same collection without being told.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import BackendUnavailableError, InvalidArgumentError, install_hint

if TYPE_CHECKING:
    from .collection import Collection

SETTINGS_KEY = "qdrant"
BACKENDS = ("sqlite", "qdrant")
# Dense search is exact on collections of at most this many passages and HNSW above (``exact``
# ``None``): exact keeps small indexes' results as they were (every shared dataset is smaller);
# an exact search reads every vector, so above this a search node's memory would grow with the
# collection (docs/benchmarks.md, "A Qdrant Edge search node's memory").
EXACT_UP_TO = 20_000
# HNSW's ``ef`` when none is given: recall@10 0.954 on 1M synthetic points, filtered top 10,
# p50 2.9 ms (docs/qdrant.md, "Results").
HNSW_EF = 256


@dataclass(frozen=True)
class QdrantTarget:
    """A Qdrant server/cluster ``url`` (``http(s)://...``; ``:memory:`` for qdrant-client's
    local mode, tests only) or an Edge shard ``path``; exactly one. ``exact``: exact dense
    search (``True``), HNSW with ``hnsw_ef`` (``False``), or exact up to :data:`EXACT_UP_TO`
    passages and HNSW above (``None``, the default; an index recorded before this default
    keeps its recorded ``True``). ``hnsw_ef``: ``None`` is :data:`HNSW_EF`.

    Raises:
        InvalidArgumentError: neither or both of ``url`` and ``path``; a bad ``hnsw_ef``.
    """

    url: str | None = None
    path: str | None = None
    collection: str = "kbsearch"
    exact: bool | None = None
    hnsw_ef: int | None = None
    cluster: tuple[int, int, int] | None = None  # shards, replication factor, write consistency

    def __post_init__(self) -> None:
        if (self.url is None) == (self.path is None):
            raise InvalidArgumentError(
                "give the Qdrant backend one of --qdrant-url or --qdrant-path"
            )
        if self.path is not None:
            object.__setattr__(self, "path", str(Path(self.path).expanduser().resolve()))
        if self.hnsw_ef is not None and self.hnsw_ef <= 0:
            raise InvalidArgumentError(f"hnsw_ef must be positive, got {self.hnsw_ef}")
        if self.cluster is not None:
            shards, replicas, consistency = self.cluster
            if min(self.cluster) < 1 or consistency > replicas:
                raise InvalidArgumentError(
                    "cluster settings are SHARDS,REPLICATION,WRITE_CONSISTENCY, each at least 1 "
                    f"and write consistency at most the replication factor; got {self.cluster}"
                )

    def describe(self) -> str:
        """``qdrant URL`` or ``qdrant-edge PATH`` (for messages)."""
        return f"qdrant {self.url}" if self.url else f"qdrant-edge {self.path}"

    def settings(self) -> dict[str, object]:
        """The JSON value stored under :data:`SETTINGS_KEY`."""
        return {
            "url": self.url,
            "path": self.path,
            "collection": self.collection,
            "exact": self.exact,
            "hnsw_ef": self.hnsw_ef,
            "cluster": None if self.cluster is None else list(self.cluster),
        }

    @classmethod
    def from_settings(cls, value: Mapping[str, object]) -> QdrantTarget:
        """The target an index recorded (:meth:`settings`)."""
        ef, cluster, exact = value.get("hnsw_ef"), value.get("cluster"), value.get("exact", True)
        return cls(
            url=None if value.get("url") is None else str(value["url"]),
            path=None if value.get("path") is None else str(value["path"]),
            collection=str(value.get("collection") or "kbsearch"),
            exact=None if exact is None else bool(exact),
            hnsw_ef=None if ef is None else int(str(ef)),
            cluster=tuple(int(x) for x in cluster)[:3] if isinstance(cluster, list) else None,  # type: ignore[arg-type]
        )

    def open(self) -> Collection:
        """The :class:`.collection.Collection` this target names.

        Raises:
            BackendUnavailableError: the ``qdrant`` extra is not installed, or the client
                cannot be created.
        """
        try:
            if self.url is not None:
                from .client import ClientCollection
                from .collection import ClusterSettings

                settings = ClusterSettings(*self.cluster) if self.cluster else None
                return ClientCollection.open(self.url, self.collection, settings)
            from .edge import EdgeCollection

            return EdgeCollection(str(self.path))
        except ImportError as exc:
            raise BackendUnavailableError(
                f"the Qdrant backend needs the qdrant extra: {install_hint('qdrant')} ({exc})"
            ) from exc
