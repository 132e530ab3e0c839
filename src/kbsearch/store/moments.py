"""The moments of the passage vectors, kept per audience by every write: what the judge's
cosine background (:class:`kbsearch.retrieve.backend.Background`) reads instead of every
vector.

One table, ``vector_moments(audience, dim, n, total, second)``, holds for each audience
(``public``: the vectors of public documents; ``staff``: every vector) the count ``n``, the
sum ``total = sum x`` (``dim`` float64) and the sum of outer products ``second = sum x x'``
(its upper triangle, row by row as :func:`numpy.triu_indices` orders it: ``dim (dim + 1) / 2``
float64, 578 KiB at 384 dimensions). The background is then

    mean = total / n,    covariance = second / n - mean mean'

(population covariance, ``1/n``; the one-pass formula, e.g. Chan, Golub & LeVeque 1983,
"Algorithms for computing the sample variance"; its cancellation is ``~ eps |x|^2``, about
1e-16 for the unit vectors stored here).

A document version's write adds its vectors' moments and its deletion (or replacement)
subtracts those of the vectors it removes, in the write's own transaction, one
read-modify-write per audience: O(passages x dim^2) per write whatever the collection's size,
and a new index generation reads none of the vectors. An audience whose count falls to 0 is
deleted (no rounding residue outlives its vectors). A file written before this table existed
gets it filled on its first writable open (one pass over the vectors, a block at a time); a
read-only one of that age computes the moments from that same pass on each call.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import SettingsConflictError
from ..filters import AUDIENCES
from .counts import audiences_of, count_audience
from .database import Database
from .migration import add_missing_table
from .schema import MOMENTS_SQL, MOMENTS_TABLE
from .vectors import Vectors


@lru_cache(maxsize=4)
def _upper(dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The upper triangle's indices of a ``(dim, dim)`` matrix (:func:`numpy.triu_indices`)."""
    return np.triu_indices(dim)


@lru_cache(maxsize=4)
def _upper_flat(dim: int) -> np.ndarray:
    """:func:`_upper` as positions in the flattened matrix (a ``take`` is twice as fast)."""
    return np.ravel_multi_index(_upper(dim), (dim, dim))


@dataclass
class VectorMoments:
    """``n`` vectors' sum ``total`` (shape ``(dim,)``) and sum of outer products ``second``
    (upper triangle, shape ``(dim (dim + 1) / 2,)``), float64 (module docstring)."""

    dim: int
    n: int
    total: np.ndarray
    second: np.ndarray

    @classmethod
    def zero(cls, dim: int) -> VectorMoments:
        return cls(dim, 0, np.zeros(dim), np.zeros(dim * (dim + 1) // 2))

    @classmethod
    def of(cls, vectors: np.ndarray, sign: int = 1) -> VectorMoments:
        """The moments of the rows of ``vectors`` (shape ``(m, dim)``), negated for
        ``sign`` -1 (what removing them changes)."""
        x = np.asarray(vectors, dtype=np.float64)
        dim = int(x.shape[1])
        second = (x.T @ x).ravel().take(_upper_flat(dim))
        return cls(dim, sign * len(x), sign * x.sum(axis=0), sign * second)

    def add(self, other: VectorMoments) -> None:
        """Add ``other`` in place (the same ``dim``)."""
        self.n += other.n
        self.total += other.total
        self.second += other.second

    def matrix(self) -> np.ndarray:
        """``second`` as the full symmetric ``(dim, dim)`` matrix."""
        out = np.zeros((self.dim, self.dim))
        upper = _upper(self.dim)
        out[upper] = self.second
        out.T[upper] = self.second
        return out

    def mean_covariance(self) -> tuple[np.ndarray, np.ndarray]:
        """``(mean, covariance)``, shapes ``(dim,)`` and ``(dim, dim)`` (module docstring's
        formula); zeros without vectors."""
        if self.n <= 0:
            return np.zeros(self.dim), np.zeros((self.dim, self.dim))
        mean = self.total / self.n
        return mean, self.matrix() / self.n - np.outer(mean, mean)


class MomentChanges:
    """The moment changes of one write, per audience, applied once at its end."""

    def __init__(self) -> None:
        self.by_audience: dict[str, VectorMoments] = {}

    def add(self, access: str, vectors: np.ndarray, sign: int) -> None:
        """Vectors (shape ``(m, dim)``) of a document labelled ``access`` added (``sign``
        1) or removed (-1)."""
        if len(vectors) == 0:
            return
        change = VectorMoments.of(vectors, sign)
        for audience in audiences_of(access):
            found = self.by_audience.get(audience)
            if found is None:
                self.by_audience[audience] = VectorMoments(
                    change.dim, change.n, change.total.copy(), change.second.copy()
                )
            else:
                found.add(change)


class SqlMoments:
    """The moments table on one connection (inside the caller's transaction)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def get(self, audience: str) -> VectorMoments | None:
        row = self.connection.execute(
            f"SELECT dim, n, total, second FROM {MOMENTS_TABLE} WHERE audience = ?", (audience,)
        ).fetchone()
        if row is None:
            return None
        dim, n = int(row[0]), int(row[1])
        total = np.frombuffer(row[2], dtype="<f8").copy()
        return VectorMoments(dim, n, total, np.frombuffer(row[3], dtype="<f8").copy())

    def put(self, audience: str, moments: VectorMoments) -> None:
        if moments.n <= 0:
            self.connection.execute(f"DELETE FROM {MOMENTS_TABLE} WHERE audience = ?", (audience,))
            return
        self.connection.execute(
            f"INSERT INTO {MOMENTS_TABLE}(audience, dim, n, total, second) VALUES (?,?,?,?,?)"
            " ON CONFLICT(audience) DO UPDATE SET dim = excluded.dim, n = excluded.n,"
            " total = excluded.total, second = excluded.second",
            (
                audience,
                moments.dim,
                moments.n,
                np.ascontiguousarray(moments.total, dtype="<f8").tobytes(),
                np.ascontiguousarray(moments.second, dtype="<f8").tobytes(),
            ),
        )

    def apply(self, changes: MomentChanges) -> None:
        """Add ``changes`` to the stored moments (one read and one write per audience).

        Raises:
            SettingsConflictError: the stored moments are of vectors of another dimension
                (the index was built with another embedder: re-embed it).
        """
        for audience, change in changes.by_audience.items():
            stored = self.get(audience) or VectorMoments.zero(change.dim)
            if stored.dim != change.dim:
                raise SettingsConflictError(
                    f"the index holds {stored.dim}-dimensional vectors, this write"
                    f" {change.dim}-dimensional ones; re-embed it (kbsearch index --reembed)"
                )
            stored.add(change)
            self.put(audience, stored)

    def fill(self, moments: dict[str, VectorMoments]) -> None:
        """Replace the table's rows with ``moments`` (by audience; :func:`tally`'s)."""
        self.connection.execute(f"DELETE FROM {MOMENTS_TABLE}")
        for audience, found in moments.items():
            self.put(audience, found)


def vector_dim(connection: sqlite3.Connection) -> int:
    """The dimension of the stored vectors (0: none stored)."""
    row = connection.execute("SELECT length(vector) FROM vectors LIMIT 1").fetchone()
    return 0 if row is None else int(row[0]) // 4


def tally(blocks: Iterable[tuple[np.ndarray, np.ndarray]], dim: int) -> dict[str, VectorMoments]:
    """Each audience's moments from ``blocks`` of ``(access, vectors)`` (shapes ``(m,)`` and
    ``(m, dim)``; :meth:`kbsearch.store.vectors.Vectors.blocks`: every vector, a block at a
    time): O(vectors x dim^2), for a file written before the table and as the reference the
    kept moments must equal."""
    out = {a: VectorMoments.zero(dim) for a in AUDIENCES}
    for access, vectors in blocks:
        for audience in AUDIENCES:
            kept = vectors if audience == "staff" else vectors[access == "public"]
            if len(kept):
                out[audience].add(VectorMoments.of(kept))
    return {a: m for a, m in out.items() if m.n > 0}


def removed_vectors(
    connection: sqlite3.Connection, doc_id: str, version: str
) -> tuple[str, np.ndarray] | None:
    """``(access, vectors)`` of the stored version ``(doc_id, version)``, vectors of shape
    ``(m, dim)`` (what deleting it removes; ``None`` when it is not stored or has no
    vectors). O(its passages)."""
    rows = connection.execute(
        "SELECT p.access, v.vector FROM passages p JOIN documents d ON p.document = d.id"
        " JOIN vectors v ON v.id = p.id WHERE d.doc_id = ? AND d.version = ?",
        (doc_id, version),
    ).fetchall()
    if not rows:
        return None
    dim = len(rows[0][1]) // 4
    vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(-1, dim)
    return str(rows[0][0]), vectors


class Moments:
    """The moments of one database file (``store.moments``): read per audience; a file made
    before the table gets it on its first writable open (module docstring).

    Raises:
        StorageError: a file without the table cannot be written to add it (locked, full).
    """

    def __init__(self, database: Database) -> None:
        self.database = database
        self._kept = add_missing_table(
            database, MOMENTS_TABLE, MOMENTS_SQL, lambda con: SqlMoments(con).fill(self._tally())
        )

    def _tally(self) -> dict[str, VectorMoments]:
        dim = vector_dim(self.database.connection)
        return tally(Vectors(self.database).blocks(dim), dim)

    def of(self, audience: str, dim: int) -> VectorMoments:
        """The moments of the vectors ``audience`` may see (``dim``: their dimension, for the
        zeros of an audience without vectors). O(dim^2) from the kept table; a read-only file
        made before it reads every vector (:func:`tally`). Call it inside a read transaction
        to pair it with a generation."""
        audience = count_audience(audience)
        connection = self.database.connection
        found = SqlMoments(connection).get(audience) if self._kept else self._tally().get(audience)
        return found if found is not None else VectorMoments.zero(dim)
