"""Passage vectors and the embedding cache (vectors by text hash, kept across re-embeds)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..filters import Filters, to_sql
from . import row_log
from .columns import COLUMNS, column_arrays
from .database import Database, in_chunks


@dataclass(frozen=True)
class VectorTable:
    """Every stored vector with the columns dense filtering needs, aligned by row.

    ``vectors`` has shape ``(n, dim)`` (float32); ``effective_from``/``effective_to`` are
    ISO date strings, ``""`` for an open bound.
    """

    row_ids: np.ndarray
    passage_ids: np.ndarray
    vectors: np.ndarray
    access: np.ndarray
    language: np.ndarray
    doc_id: np.ndarray
    effective_from: np.ndarray
    effective_to: np.ndarray


class Vectors:
    """Passage vectors (``store.vectors``; written with their passages) and the embedding
    cache."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def table(self, dim: int) -> VectorTable:
        """Every stored vector with its passage's filter columns, ordered by row id. Call it
        inside a read transaction (:meth:`Database.read_transaction`) to pair it with a
        generation."""
        cursor = self.database.connection.cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            f"SELECT {COLUMNS}, v.vector FROM vectors v JOIN passages p ON p.id = v.id"
            " ORDER BY p.id"
        ).fetchall()
        vectors = np.frombuffer(b"".join(r[7] for r in rows), dtype=np.float32)
        return VectorTable(vectors=vectors.reshape(len(rows), dim), **column_arrays(rows))

    def table_blocks(self, dim: int, after: int = -1, size: int = 8192) -> Iterator[VectorTable]:
        """The stored vectors of row ids above ``after`` with their filter columns, ``size``
        rows at a time by row id (each block a :class:`VectorTable`), so a reader never holds
        more than one block of float32 rows. Call it inside a read transaction."""
        cursor = self.database.connection.cursor()
        cursor.row_factory = None
        while True:
            rows = cursor.execute(
                f"SELECT {COLUMNS}, v.vector FROM vectors v JOIN passages p ON p.id = v.id"
                " WHERE p.id > ? ORDER BY p.id LIMIT ?",
                (after, size),
            ).fetchall()
            if not rows:
                return
            after = int(rows[-1][0])
            vectors = np.frombuffer(b"".join(r[7] for r in rows), dtype=np.float32)
            yield VectorTable(vectors=vectors.reshape(len(rows), dim), **column_arrays(rows))

    def row_vectors(self, row_ids: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """The float32 vectors of passage rows ``row_ids``: ``(found_ids, vectors)`` of shapes
        ``(m,)`` and ``(m, dim)``, ``found_ids`` ascending (rows without a vector left out).
        Point reads by the primary key, O(m log N)."""
        cursor = self.database.connection.cursor()
        cursor.row_factory = None
        found: list[tuple[int, bytes]] = []
        for chunk, marks in in_chunks([int(r) for r in row_ids]):
            found += cursor.execute(
                f"SELECT id, vector FROM vectors WHERE id IN ({marks})", chunk
            ).fetchall()
        found.sort(key=lambda r: r[0])
        ids = np.array([r[0] for r in found], dtype=np.int64)
        vectors = np.frombuffer(b"".join(r[1] for r in found), dtype=np.float32)
        return ids, vectors.reshape(len(found), dim)

    def deleted_rows_between(self, old: int, new: int) -> np.ndarray | None:
        """Inclusive ``(first, last)`` row id ranges deleted by the writes that made
        generations ``old + 1`` .. ``new`` (shape ``(m, 2)``), ``None`` when the log does not
        cover them (:func:`kbsearch.store.row_log.deleted_between`). Call inside a read
        transaction."""
        return row_log.deleted_between(self.database.connection, old, new)

    def passage_matrix(
        self, passage_ids: Sequence[str], filters: Filters | None = None
    ) -> tuple[list[str], np.ndarray]:
        """``(found, vectors)``: the given passages that have a vector (and pass ``filters``
        when given), in no set order, and their float32 vectors, shape ``(len(found), dim)``
        (row ``i`` is ``found[i]``'s). Point reads by the passage id index, O(m log N)."""
        where, params = ("1", []) if filters is None else to_sql(filters)
        cursor = self.database.connection.cursor()
        cursor.row_factory = None
        rows: list[tuple[str, bytes]] = []
        for chunk, marks in in_chunks(passage_ids):
            rows += cursor.execute(
                "SELECT p.passage_id, v.vector FROM passages p JOIN vectors v ON v.id = p.id"
                f" WHERE p.passage_id IN ({marks}) AND {where}",
                [*chunk, *params],
            ).fetchall()
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        return [r[0] for r in rows], vectors.reshape(len(rows), -1)

    def passage_vectors(self, passage_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """``{passage_id: vector}`` (float32) of the given passages that have one
        (:meth:`passage_matrix`)."""
        found, matrix = self.passage_matrix(passage_ids)
        return {pid: matrix[i] for i, pid in enumerate(found)}

    def blocks(self, dim: int, size: int = 8192) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Every stored vector, ``size`` rows at a time by row id: ``(access, vectors)``
        arrays of shapes ``(m,)`` and ``(m, dim)``. Call it inside a read transaction."""
        for block in self.table_blocks(dim, size=size):
            yield block.access, block.vectors

    def count(self) -> int:
        return int(self.database.connection.execute("SELECT count(*) FROM vectors").fetchone()[0])

    def cached(self, embedder: str, role: str, hashes: Sequence[str]) -> dict[str, bytes]:
        """``{text hash: float32 bytes}`` of the cached vectors among ``hashes``."""
        out: dict[str, bytes] = {}
        for chunk, marks in in_chunks(hashes):
            rows = self.database.connection.execute(
                "SELECT text_hash, vector FROM embedding_cache WHERE embedder = ? AND role = ?"
                f" AND text_hash IN ({marks})",
                [embedder, role, *chunk],
            )
            out.update({r[0]: bytes(r[1]) for r in rows})
        return out

    def adopt_cache(self, other: Path) -> int:
        """Copy into this file's embedding cache the entries of the index file ``other``
        that it lacks (a re-embed's copy that is not kept: its vectors are not computed
        again); returns how many.

        Raises:
            StorageError: this file cannot be written (its cache is then unchanged).
            sqlite3.Error: ``other`` cannot be read.
        """
        connection = self.database.connection
        connection.execute("ATTACH DATABASE ? AS adopted", (str(other),))
        try:
            with self.database.transaction() as con:
                cursor = con.execute(
                    "INSERT OR IGNORE INTO main.embedding_cache(embedder, role, text_hash, vector)"
                    " SELECT embedder, role, text_hash, vector FROM adopted.embedding_cache"
                )
                return max(cursor.rowcount, 0)
        finally:
            connection.execute("DETACH DATABASE adopted")

    def cache(self, embedder: str, role: str, items: Mapping[str, np.ndarray]) -> None:
        """Store vectors by text hash; committed at once so finished work survives a crash.

        Raises:
            StorageError: the file cannot be written (read-only, locked, disk full); the
                cache is unchanged.
        """
        with self.database.transaction() as con:
            con.executemany(
                "INSERT OR REPLACE INTO embedding_cache(embedder, role, text_hash, vector)"
                " VALUES (?, ?, ?, ?)",
                [
                    (embedder, role, h, np.ascontiguousarray(v, dtype=np.float32).tobytes())
                    for h, v in items.items()
                ],
            )
