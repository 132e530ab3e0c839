"""One small interface over the two ways to reach Qdrant.

:class:`Collection` is what the backend and the mirror (:mod:`.mirror`) call. Two
implementations give the same results (congruence tests):

- :class:`kbsearch.backends.qdrant.client.ClientCollection`: ``qdrant-client``, for a
  Qdrant server or cluster (``url``) or qdrant-client's local mode (``location=":memory:"``
  or ``path``; exact search in Python, for tests);
- :class:`kbsearch.backends.qdrant.edge.EdgeCollection`: Qdrant Edge (``qdrant-edge-py``),
  Qdrant's own engine in-process (HNSW, payload indexes, sparse vectors; no server).

Every write waits for Qdrant to apply it (``wait=True``). Ranked results are ``(passage_id,
score)`` pairs, best first, ties broken by passage id: each query asks for
:data:`TIE_MARGIN` more points than needed, sorts them by score and cuts, so ties at the cut
are decided as in the embedded backend. Scores closer than :data:`TIE_TOLERANCE` count as tied:
Qdrant and numpy sum in different orders (qdrant-client's local mode even in float64), so an
exact tie in one (two passages with the same text) can differ by 1e-8 in the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from qdrant_client import models

from ...errors import BackendUnavailableError, KbsearchError
from .points import DENSE, SPARSE_ALL, SPARSE_PUBLIC, PassagePoint, point_id
from .sparse import LengthStatistics

TIE_MARGIN = 8
ENGINE_MESSAGE_CHARS = 200  # of an engine's own error, quoted in ours
TIE_TOLERANCE = 1e-6  # cosine / BM25 differences below this are arithmetic noise, not order
DEFAULT_COLLECTION = "kbsearch"
Ranking = list[tuple[str, float]]


def engine_message(exc: BaseException) -> str:
    """An engine's error on one line, cut to :data:`ENGINE_MESSAGE_CHARS` (a server's answer
    can quote a whole response body)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    cut = text[:ENGINE_MESSAGE_CHARS]
    return cut if len(cut) == len(text) else f"{cut}…"


@contextmanager
def engine_errors(what: str) -> Iterator[None]:
    """Within: any failure of the client or engine (a server down, a refused request, an
    Edge shard's error) becomes :class:`~kbsearch.errors.BackendUnavailableError` saying
    ``Qdrant cannot <what>``; kbsearch's own errors pass as they are.

    Raises:
        BackendUnavailableError: as above.
    """
    try:
        yield
    except KbsearchError:
        raise
    except Exception as exc:  # qdrant-client and Edge raise many kinds (connection, API, value)
        raise BackendUnavailableError(f"Qdrant cannot {what} ({engine_message(exc)})") from exc


@dataclass(frozen=True)
class StoredPoint:
    """What verification reads back from a point: its passage id, document id, version,
    access and text hash, its dense dimension (0 when it has no dense vector) and the length
    statistics its sparse values were computed with."""

    passage_id: str
    doc_id: str
    version: str
    access: str
    text_hash: str
    dimension: int
    lengths: LengthStatistics


@dataclass(frozen=True)
class ClusterSettings:
    """Collection settings for a Qdrant cluster (ignored by local mode and Edge): shards,
    copies of each shard, and how many copies must acknowledge a write. ``None`` leaves
    Qdrant's default."""

    shard_number: int | None = None
    replication_factor: int | None = None
    write_consistency_factor: int | None = None


def named_vectors(
    point: PassagePoint, lengths: LengthStatistics
) -> dict[str, list[float] | tuple[list[int], list[float]]]:
    """The named vectors of ``point``: ``dense`` (when set), ``bm25`` and, for a public
    point, ``bm25_public`` (sparse ones only when the passage has tokens). An average length
    of 0 (no statistics yet) counts the passage as of average length."""
    out: dict[str, list[float] | tuple[list[int], list[float]]] = {}
    if point.dense is not None:
        out[DENSE] = [float(x) for x in point.dense]
    if point.sparse.frequencies:
        own = float(max(point.sparse.length, 1))
        out[SPARSE_ALL] = point.sparse.vector(lengths.avgdl_all or own)
        if point.public:
            out[SPARSE_PUBLIC] = point.sparse.vector(lengths.avgdl_public or own)
    return out


def point_payload(point: PassagePoint, lengths: LengthStatistics) -> dict[str, object]:
    """``point``'s payload with the length statistics its sparse values used."""
    return {**point.payload, "avgdl_all": lengths.avgdl_all, "avgdl_public": lengths.avgdl_public}


def ranked(found: Sequence[tuple[str, float]], limit: int) -> Ranking:
    """``found`` best first, cut at ``limit``; scores within :data:`TIE_TOLERANCE` of the
    previous one count as tied and are ordered by passage id (module docstring)."""
    by_score = sorted(found, key=lambda item: (-item[1], item[0]))
    out: list[tuple[str, float]] = []
    group: list[tuple[str, float]] = []
    for item in by_score:
        if group and group[-1][1] - item[1] > TIE_TOLERANCE:
            out += sorted(group, key=lambda x: x[0])
            group = []
        group.append(item)
    out += sorted(group, key=lambda x: x[0])
    return out[:limit]


def stored_point(payload: Mapping[str, Any] | None, vector: Any) -> StoredPoint:
    """A :class:`StoredPoint` from a point's payload and its vectors (a name -> vector dict)."""
    payload = payload or {}
    dense = vector.get(DENSE) if isinstance(vector, Mapping) else None
    return StoredPoint(
        passage_id=str(payload.get("passage_id", "")),
        doc_id=str(payload.get("doc_id", "")),
        version=str(payload.get("version", "")),
        access=str(payload.get("access", "")),
        text_hash=str(payload.get("text_hash", "")),
        dimension=0 if dense is None else len(dense),
        lengths=LengthStatistics(
            float(payload.get("avgdl_all", 0.0)), float(payload.get("avgdl_public", 0.0))
        ),
    )


def stale_filter(doc_id: str, version: str, keep: Sequence[str]) -> models.Filter:
    """Points of ``doc_id``/``version`` whose passage id is not in ``keep``."""
    must: list[models.Condition] = [
        models.FieldCondition(key="doc_id", match=models.MatchValue(value=doc_id)),
        models.FieldCondition(key="version", match=models.MatchValue(value=version)),
    ]
    must_not: list[models.Condition] = []
    if keep:
        must_not.append(
            models.FieldCondition(key="passage_id", match=models.MatchAny(any=list(keep)))
        )
    return models.Filter(must=must, must_not=must_not)


@dataclass(frozen=True)
class Search:
    """One query as a client runs it: the named vector ``using``, the query vector (sparse
    ``(indices, values)`` or dense floats), the filter, how many points to ``fetch`` and the
    search parameters; ``quantized``: the scores of a quantized copy are enough (the caller
    rescores), so the engine reads no original vector to rescore them; ``payload``: return
    passage ids from each point's payload, else the point ids alone (no payload read)."""

    using: str
    vector: tuple[list[int], list[float]] | list[float]
    where: models.Filter
    fetch: int
    exact: bool
    hnsw_ef: int | None
    quantized: bool = False
    payload: bool = True


class Collection:
    """The operations kbsearch needs from a Qdrant collection (module docstring). Both clients
    share :meth:`delete`, :meth:`delete_stale` and :meth:`query` (the cut with its tie margin)
    and supply the calls to their engine: :meth:`_delete_ids`, :meth:`_delete_where`,
    :meth:`_search`, and the others."""

    def ensure(self, dim: int | None) -> None:
        """Create the collection (dense vectors of ``dim``, or none; both sparse vectors;
        payload indexes) when missing.

        Raises:
            BackendUnavailableError: it exists with another dense dimension.
        """
        raise NotImplementedError

    def upsert(self, points: Sequence[PassagePoint], lengths: LengthStatistics) -> None:
        """Write ``points`` (replacing those with the same ids) and wait until applied; sparse
        values are computed with ``lengths`` (recorded in each payload)."""
        raise NotImplementedError

    def delete(self, passage_ids: Sequence[str]) -> None:
        """Remove the points of ``passage_ids`` (absent ones are ignored) and wait."""
        if passage_ids:
            self._delete_ids([point_id(p) for p in passage_ids])

    def delete_stale(self, doc_id: str, version: str, keep: Sequence[str]) -> None:
        """Remove the points of document version ``doc_id``/``version`` whose passage id is not
        in ``keep`` (a re-indexed version with fewer passages) and wait."""
        self._delete_where(stale_filter(doc_id, version, keep))

    def query(
        self,
        using: str,
        vector: np.ndarray | tuple[list[int], list[float]],
        where: models.Filter,
        limit: int,
        exact: bool = True,
        hnsw_ef: int | None = None,
        names: Callable[[Sequence[str]], Mapping[str, str]] | None = None,
    ) -> Ranking:
        """Top ``limit`` passages by the named vector ``using`` (dense: shape ``(dim,)``;
        sparse: ``(indices, values)``) among the points passing ``where``. ``names``: maps
        point ids to passage ids (:mod:`kbsearch.store.point_ids`), so no payload is read.

        Raises:
            BackendUnavailableError: the engine failed (:func:`engine_errors`).
        """
        if limit <= 0 or (isinstance(vector, tuple) and not vector[0]):
            return []
        query = vector if isinstance(vector, tuple) else [float(x) for x in vector]
        fetch = limit + TIE_MARGIN
        with engine_errors("answer a search"):
            if names is None:
                return ranked(
                    self._search(Search(using, query, where, fetch, exact, hnsw_ef)), limit
                )
            found = self._search(Search(using, query, where, fetch, exact, hnsw_ef, payload=False))
        named = names([pid for pid, _ in found])
        return ranked([(named[p], score) for p, score in found if p in named], limit)

    def point_candidates(
        self, using: str, vector: np.ndarray, where: models.Filter, limit: int, hnsw_ef: int
    ) -> list[str]:
        """Point ids (UUID text) of the top ``limit`` points passing ``where``, best first, by
        HNSW (``hnsw_ef``) on the dense vector ``using`` (shape ``(dim,)``), quantized scores
        where there is a quantized copy; no payload read (:mod:`kbsearch.store.point_ids`).

        Raises:
            BackendUnavailableError: the engine failed (:func:`engine_errors`).
        """
        query = [float(x) for x in vector]
        search = Search(using, query, where, limit, False, hnsw_ef, quantized=True, payload=False)
        with engine_errors("answer a search"):
            found = self._search(search)
        return [pid for pid, _ in sorted(found, key=lambda item: -item[1])]

    def passage_ids_of(self, point_ids: Sequence[str]) -> dict[str, str]:
        """``{point id: passage id}`` of the given points that exist, from their payload."""
        raise NotImplementedError

    def points(self, where: models.Filter | None = None) -> list[StoredPoint]:
        """Every point (passing ``where`` when given), read back (verification)."""
        raise NotImplementedError

    def count(self) -> int:
        """Number of points."""
        raise NotImplementedError

    def optimize(self) -> None:
        """Build the indexes now (Edge builds HNSW here; a server does it on its own)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the client or shard."""
        raise NotImplementedError

    def _delete_ids(self, ids: list[Any]) -> None:
        raise NotImplementedError

    def _delete_where(self, where: models.Filter) -> None:
        raise NotImplementedError

    def _search(self, search: Search) -> Ranking:
        """The ``(passage_id, score)`` pairs the engine returns, in any order."""
        raise NotImplementedError
