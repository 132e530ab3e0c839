"""The dense route on a Qdrant collection: its candidates and the cosines of given passages.

Candidates come from the collection by cosine on ``dense``: an exact scan, or HNSW with
``hnsw_ef`` over the collection's quantized copy of the vectors (Qdrant Edge keeps one in RAM,
:func:`.edge.dense_quantization`). An HNSW search asks for :data:`RESCORE_FACTOR` times the
candidates needed, with the quantized scores only (the engine reads no original vector), and
rescores them exactly from SQLite's float32 vectors before the cut. Qdrant returns point ids
only, so no payload page is read into the search process; SQLite names their passages
(:mod:`kbsearch.store.point_ids`) and holds their vectors, read by key (a few hundred rows
through ``read()``, so outside the process's mapped memory).

That search runs first without the filters, which SQLite applies to the candidates while
reading their vectors (:func:`kbsearch.filters.to_sql`, the conditions
:func:`.filters.to_qdrant` gives Qdrant): checking the filters at every point the graph
visits reads the memory-mapped payload indexes and was nine tenths of a filtered HNSW search's
time on a 200,000-passage shard (docs/benchmarks.md). When fewer than
:data:`MIN_SURVIVORS` ``* depth`` candidates pass (a narrow filter: a few documents, an
old date), the search runs again with the filters inside the query, as before.

The cosines of given passages (fusion's features, the judge's evidence) are the embedded
backend's, computed from those passages' vectors in SQLite.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from qdrant_client import models

from ...filters import Filters
from ...store import Store
from .collection import Collection, Ranking, ranked
from .filters import to_qdrant
from .names import passage_ids_of, point_keys
from .points import DENSE

# quantized candidates rescored per result: TurboQuant 2 bits on E5 vectors keeps 0.942 of
# the exact top 10 at 4, 0.678 at 1 (docs/benchmarks.md, "A Qdrant search node's memory")
RESCORE_FACTOR = 4
# unfiltered candidates passing the filters, per result, below which the search is filtered
# inside Qdrant instead: 2 leaves at least the rescoring pool of a factor of 2
MIN_SURVIVORS = 2
EVERY_POINT = models.Filter()


def dense_scores(
    store: Store, vector: np.ndarray, passage_ids: Sequence[str], filters: Filters | None = None
) -> dict[str, float]:
    """``{passage_id: cosine}`` of the given passages that have a vector (and pass
    ``filters`` when given), in the order given: their float32 vectors read from SQLite by
    id (unit length, so the dot product is the cosine) times ``vector`` (shape ``(dim,)``)."""
    found, vectors = store.vectors.passage_matrix(passage_ids, filters)
    if not found:
        return {}
    scores = (vectors @ np.asarray(vector, dtype=np.float32)).tolist()
    cosines = dict(zip(found, scores, strict=True))
    return {pid: cosines[pid] for pid in dict.fromkeys(passage_ids) if pid in cosines}


def dense_candidates(
    collection: Collection,
    store: Store,
    vector: np.ndarray,
    filters: Filters,
    depth: int,
    *,
    exact: bool,
    hnsw_ef: int | None,
) -> Ranking:
    """The top ``depth`` passages passing ``filters`` by cosine with ``vector`` (shape
    ``(dim,)``), best first, ties by passage id: an exact scan when ``exact``; else the
    :data:`RESCORE_FACTOR` ``* depth`` best by HNSW (``hnsw_ef``, raised to that count) over
    the quantized copy, unfiltered, filtered and rescored with their exact cosines from
    ``store``, or filtered inside Qdrant when too few pass (module docstring)."""
    where = to_qdrant(filters)
    if exact or depth <= 0:
        return collection.query(DENSE, vector, where, depth, exact=True, hnsw_ef=hnsw_ef)
    fetch = RESCORE_FACTOR * depth
    ef = max(hnsw_ef or 0, fetch)

    def candidates(condition: models.Filter) -> list[str]:
        return collection.point_candidates(DENSE, vector, condition, fetch, ef)

    found = candidates(EVERY_POINT)
    cosines = rescored(collection, store, vector, found, filters)
    if len(cosines) < MIN_SURVIVORS * depth and len(found) >= fetch:
        cosines = rescored(collection, store, vector, candidates(where), None)
    return ranked(list(cosines.items()), depth)


def rescored(
    collection: Collection,
    store: Store,
    vector: np.ndarray,
    point_ids: Sequence[str],
    filters: Filters | None,
) -> dict[str, float]:
    """``{passage_id: cosine}`` of the points ``point_ids`` whose passages pass ``filters``
    (all when ``None``): passages and vectors read from SQLite by point id
    (:mod:`kbsearch.store.point_ids`); the points it does not name (a file indexed before
    it) are named by :func:`.names.passage_ids_of`."""
    keys = point_keys(point_ids)
    found, vectors, unknown = store.point_ids.vectors(list(keys), filters)
    out: dict[str, float] = {}
    if found:
        scores = (vectors @ np.asarray(vector, dtype=np.float32)).tolist()
        out.update(zip(found, scores, strict=True))
    if unknown:
        named = passage_ids_of(store, collection, [keys[k] for k in unknown])
        out.update(dense_scores(store, vector, list(named.values()), filters))
    return out
