"""Which passage each Qdrant point stands for, the one place that answers it.

A point id is the UUIDv5 text of its passage id (:func:`.points.point_id`, one way only). SQLite
keeps the reverse, keyed by the UUID's 16 bytes (:mod:`kbsearch.store.point_ids`), so a search
that asks Qdrant for point ids alone reads no payload; the points that table does not name (a
file indexed before it, or a point whose passage is gone) are named by their payload's
``passage_id``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from ...store import Store
from .collection import Collection
from .points import point_id


def point_keys(point_ids: Sequence[str]) -> dict[bytes, str]:
    """``{key: point id}``: each point id (UUID text) by the 16 bytes SQLite's table keys it
    by, in the order given (a repeated id once)."""
    return {uuid.UUID(p).bytes: p for p in point_ids}


def passage_key(passage_id: str) -> bytes:
    """The key of ``passage_id``'s point in SQLite's table (:func:`point_keys`)."""
    return uuid.UUID(point_id(passage_id)).bytes


def passage_ids_of(
    store: Store, collection: Collection, point_ids: Sequence[str]
) -> dict[str, str]:
    """``{point id: passage id}`` of the given points: from SQLite's table, from the points'
    payload for those it does not name (points in neither are left out).

    Raises:
        BackendUnavailableError, or the client's own error: the payload cannot be read.
    """
    keys = point_keys(point_ids)
    named, unknown = store.point_ids.names(list(keys))
    out = {keys[k]: pid for k, pid in named.items()}
    if unknown:
        out.update(collection.passage_ids_of([keys[k] for k in unknown]))
    return out
