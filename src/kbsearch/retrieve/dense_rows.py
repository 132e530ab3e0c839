"""The rows a dense index holds: coded segments, and the float32 rows a query rescores.

A :class:`Segment` holds rows coded together (:mod:`kbsearch.retrieve.dense_codes`) with their
filter columns; a :class:`RowCache` keeps the float32 rows read lately for rescoring, by row id,
across generations (a row never changes once written and its id is never reused). Used by
:class:`kbsearch.retrieve.dense.DenseIndex`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..filters import FilterColumns
from ..store import Store, VectorTable
from .dense_codes import Codes

ROW_CACHE = 8192  # float32 rows a RowCache keeps (12 MiB at 384 dimensions), then starts over

# row ids (ascending) -> (found row ids, float32 vectors (m, dim)) of those with a vector
RowReader = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


class RowCache:
    """The float32 rows rescored lately, by row id, kept across generations (a row never
    changes once written and its id is never reused), up to ``size`` rows; ``read`` reads
    the others. Thread-safe (a dict swap when it starts over)."""

    def __init__(self, read: RowReader, size: int = ROW_CACHE) -> None:
        self.read = read
        self.size = size
        self._rows: dict[int, np.ndarray] = {}

    def __call__(self, row_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """As ``read``: ``(found ids, vectors)`` of ``row_ids`` (ascending)."""
        rows = self._rows
        wanted = [int(r) for r in row_ids]
        missing = [r for r in wanted if r not in rows]
        if len(missing) > self.size:
            return self.read(row_ids)
        if missing:
            ids, vectors = self.read(np.array(missing, dtype=np.int64))
            if len(rows) + len(ids) > self.size:
                rows = {}
            rows.update(zip(ids.tolist(), vectors, strict=True))
            self._rows = rows
        found = [r for r in wanted if r in rows]
        if not found:
            return np.zeros(0, dtype=np.int64), self.read(row_ids[:0])[1]
        return np.array(found, dtype=np.int64), np.stack([rows[r] for r in found])


@dataclass(frozen=True)
class Segment:
    """Rows coded together: their row ids (ascending), passage ids, codes and filter
    columns (shape ``(n,)`` or ``(n, dim)`` each)."""

    row_ids: np.ndarray
    passage_ids: np.ndarray
    codes: Codes
    columns: FilterColumns

    @classmethod
    def of(cls, blocks: Sequence[VectorTable], dim: int) -> Segment:
        """From float32 blocks (each coded as read, so only one block is held in float32)."""
        coded = [Codes.of(b.vectors) for b in blocks]
        codes = Codes.empty(dim)
        if coded:
            codes = Codes(
                np.concatenate([c.codes for c in coded]),
                np.concatenate([c.scales for c in coded]),
                np.concatenate([c.residuals for c in coded]),
            )

        def joined(name: str, dtype: object) -> np.ndarray:
            parts = [getattr(b, name) for b in blocks]
            return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)  # type: ignore[call-overload]

        return cls(
            joined("row_ids", np.int64),
            joined("passage_ids", object),
            codes,
            FilterColumns(
                joined("access", object),
                joined("language", object),
                joined("doc_id", object),
                joined("effective_from", "U10"),
                joined("effective_to", "U10"),
            ),
        )

    def __len__(self) -> int:
        return len(self.row_ids)

    def join(self, other: Segment, keep: np.ndarray) -> Segment:
        """The rows of this segment in mask ``keep``, then every row of ``other``."""
        c, o = self.columns, other.columns

        def cat(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return np.concatenate([a[keep], b])

        return Segment(
            cat(self.row_ids, other.row_ids),
            cat(self.passage_ids, other.passage_ids),
            self.codes.take(keep).join(other.codes),
            FilterColumns(
                cat(c.access, o.access),
                cat(c.language, o.language),
                cat(c.doc_id, o.doc_id),
                cat(c.effective_from, o.effective_from),
                cat(c.effective_to, o.effective_to),
            ),
        )


def concatenate(parts: list[np.ndarray], dtype: object) -> np.ndarray:
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)  # type: ignore[call-overload]


def store_reader(store: Store, dim: int) -> RowReader:
    """Reads float32 rows by id, one statement and no transaction: a row never changes once
    written and its id is never reused, so a row found is the one of the index's generation
    (a row gone since makes :meth:`DenseIndex.exact` raise StaleSnapshot)."""
    return lambda row_ids: store.vectors.row_vectors(row_ids, dim)
