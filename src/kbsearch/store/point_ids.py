"""Which passage row each Qdrant point stands for (``store.point_ids``).

A Qdrant point's id is a UUID of its passage id (:func:`kbsearch.backends.qdrant.points.point_id`,
one way only), so a search that asks Qdrant for point ids alone (no payload read, no payload
page mapped into the search process) learns the passages from this table: ``point_id`` (the
UUID's 16 bytes) -> ``passage`` (the passage's row id). The Qdrant backend writes it with the
points (:meth:`PointIds.record`, created then when missing: files written before have none)
and :meth:`PointIds.forget` drops a deleted version's rows. A row whose passage is gone (a
crash between the two writes) joins to nothing and reads as unknown, as does every point id of
a file without the table; callers then ask Qdrant's payload.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

import numpy as np

from ..filters import Filters, to_sql
from .database import Database, in_chunks

TABLE = "point_ids"
CREATE = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (point_id BLOB PRIMARY KEY, passage INTEGER NOT NULL)"
    " WITHOUT ROWID"
)


class PointIds:
    """The point id -> passage row table (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def record(self, pairs: Iterable[tuple[bytes, int]]) -> None:
        """Store ``(point id bytes, passage row id)`` pairs, replacing a point's earlier row.

        Raises:
            StorageError: the file cannot be written.
        """
        with self.database.transaction() as con:
            con.execute(CREATE)
            con.executemany(
                f"INSERT OR REPLACE INTO {TABLE}(point_id, passage) VALUES (?, ?)", pairs
            )

    def forget(self, point_ids: Sequence[bytes]) -> None:
        """Drop the rows of ``point_ids`` (absent ones and a missing table are ignored)."""
        with self.database.transaction() as con:
            con.execute(CREATE)
            for chunk, marks in in_chunks(point_ids):
                con.execute(f"DELETE FROM {TABLE} WHERE point_id IN ({marks})", chunk)

    def count(self) -> int:
        """Rows in the table (0 without it)."""
        try:
            return int(
                self.database.connection.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0]
            )
        except sqlite3.OperationalError:  # no such table: a file written before it
            return 0

    def names(self, point_ids: Sequence[bytes]) -> tuple[dict[bytes, str], list[bytes]]:
        """``({point id: passage id}, unknown)``: the passages of the given points this table
        names, and the point ids it does not (or whose passage is gone), in the order given."""
        named: dict[bytes, str] = {}
        try:
            for chunk, marks in in_chunks(point_ids):
                named.update(
                    self.database.connection.execute(
                        f"SELECT m.point_id, p.passage_id FROM {TABLE} m"
                        f" JOIN passages p ON p.id = m.passage WHERE m.point_id IN ({marks})",
                        chunk,
                    ).fetchall()
                )
        except sqlite3.OperationalError:  # no such table: a file written before it
            named = {}
        return named, [p for p in dict.fromkeys(point_ids) if p not in named]

    def vectors(
        self, point_ids: Sequence[bytes], filters: Filters | None = None
    ) -> tuple[list[str], np.ndarray, list[bytes]]:
        """``(found, vectors, unknown)``: the passage ids of the given points that have a
        vector and pass ``filters`` (all when ``None``), their float32 vectors (shape
        ``(len(found), dim)``, row ``i`` is ``found[i]``'s), and the point ids this table
        does not name (or whose passage is gone), in the order given. Point reads by the
        primary keys, O(m log N)."""
        where, params = ("1", []) if filters is None else to_sql(filters)
        cursor = self.database.connection.cursor()
        cursor.row_factory = None
        rows: list[tuple[bytes, str, bytes | None, int]] = []
        try:
            for chunk, marks in in_chunks(point_ids):
                rows += cursor.execute(
                    f"SELECT m.point_id, p.passage_id, v.vector, {where} FROM {TABLE} m"
                    " JOIN passages p ON p.id = m.passage LEFT JOIN vectors v ON v.id = p.id"
                    f" WHERE m.point_id IN ({marks})",
                    [*params, *chunk],
                ).fetchall()
        except sqlite3.OperationalError:  # no such table: a file written before it
            rows = []
        named = {r[0] for r in rows}
        unknown = [p for p in dict.fromkeys(point_ids) if p not in named]
        kept = [r for r in rows if r[2] is not None and r[3]]
        if not kept:
            return [], np.zeros((0, 0), dtype=np.float32), unknown
        vectors = np.frombuffer(b"".join(r[2] for r in kept if r[2] is not None), np.float32)
        return [r[1] for r in kept], vectors.reshape(len(kept), -1), unknown
