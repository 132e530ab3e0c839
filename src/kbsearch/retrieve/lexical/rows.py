"""The filter columns and FTS5 token counts of the passage rows lexical searches touch, kept
across index generations (:class:`RowTable`), read by :mod:`kbsearch.retrieve.lexical.postings`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ...errors import StorageError
from ...filters import FilterColumns, Filters, to_mask
from .maxscore import Scratch

MASKS = 16  # filter masks kept (the most recent filters')


@dataclass(frozen=True)
class Rows:
    """Filter columns and FTS5 token counts of some passage rows (shape ``(n,)`` each),
    aligned with ``row_ids``; read by :func:`kbsearch.filters.to_mask`."""

    row_ids: np.ndarray
    passage_ids: np.ndarray
    public: np.ndarray
    language: np.ndarray
    doc_id: np.ndarray
    from_day: np.ndarray
    to_day: np.ndarray
    length: np.ndarray  # float64: |D|, FTS5's token count

    @classmethod
    def of(cls, rows: Sequence[Sequence[object]]) -> Rows:
        """From :meth:`kbsearch.store.fts.Fts.row_columns` rows."""
        columns = FilterColumns(
            np.array([r[2] for r in rows], dtype=object),
            np.array([r[3] for r in rows], dtype=object),
            np.array([r[4] for r in rows], dtype=object),
            np.array([r[5] for r in rows], dtype="U10"),
            np.array([r[6] for r in rows], dtype="U10"),
        )
        return cls(
            row_ids=np.array([r[0] for r in rows], dtype=np.int64),
            passage_ids=np.array([r[1] for r in rows], dtype=object),
            public=columns.public,
            language=columns.language,
            doc_id=columns.doc_id,
            from_day=columns.from_day,
            to_day=columns.to_day,
            length=np.array([r[7] for r in rows], dtype=np.float64),
        )

    def since(self, start: int) -> Rows:
        """The rows from position ``start`` on."""
        return Rows(*(getattr(self, f)[start:] for f in self.__dataclass_fields__))

    def first(self, n: int) -> Rows:
        """The first ``n`` rows (views, no copy)."""
        return Rows(*(getattr(self, f)[:n] for f in self.__dataclass_fields__))

    def grown(self, n: int, capacity: int) -> Rows:
        """A new table of ``capacity`` rows whose first ``n`` are this one's (the rest unset)."""
        out = []
        for f in self.__dataclass_fields__:
            old = getattr(self, f)
            new = np.empty(capacity, dtype=old.dtype)
            new[:n] = old[:n]
            out.append(new)
        return Rows(*out)

    def put(self, start: int, other: Rows) -> None:
        """Write ``other``'s rows from position ``start`` on (past every row a reader sees)."""
        for f in self.__dataclass_fields__:
            getattr(self, f)[start : start + len(other.row_ids)] = getattr(other, f)


class RowTable:
    """The :class:`Rows` of every passage a search has touched, kept across generations.

    A row id names one passage for the life of the file (ids are never reused), so a row read
    once stays right; a deleted row is never asked for again, as no posting names it. Grows
    with the rows touched (at most the collection), each read once. Thread-safe.
    """

    def __init__(self) -> None:
        self._held = Rows.of([])  # capacity: rows past len(self._rows) are unset
        self._rows = self._held  # what readers see: the first rows of _held (views)
        self._slot = np.full(0, -1, dtype=np.int64)  # row id -> position in _rows
        self._lock = threading.Lock()
        self.scratch = Scratch()  # the MaxScore accumulators, by row position
        # filters -> the mask of the first rows (extended as rows are added: they are kept)
        self._masks: dict[tuple[object, ...], np.ndarray] = {}

    def __len__(self) -> int:
        return len(self._rows.row_ids)

    def _lookup(self, row_ids: np.ndarray) -> np.ndarray:
        slot = self._slot
        at = np.full(len(row_ids), -1, dtype=np.int64)
        inside = row_ids < len(slot)
        at[inside] = slot[row_ids[inside]]
        return at

    def positions(
        self, row_ids: np.ndarray, read: Callable[[list[int]], Rows]
    ) -> tuple[np.ndarray, Rows]:
        """``(at, rows)``: the positions of ``row_ids`` (int64, existing passages) in
        ``rows``, the table's rows, those not held yet read with ``read`` first.

        Raises:
            StorageError: a row id is not a passage (the FTS5 table and the passages
                disagree).
        """
        at = self._lookup(row_ids)
        rows = self._rows  # read after the slots: a position found is in it (see _add)
        if (at < 0).any():
            with self._lock:
                at = self._lookup(row_ids)
                missing = np.unique(row_ids[at < 0])
                if len(missing):
                    self._add(read(missing.tolist()))
                    at = self._lookup(row_ids)
                rows = self._rows
            if (at < 0).any():
                raise StorageError("an FTS5 table names rows that are not passages; rebuild")
        return at, rows

    def _add(self, new: Rows) -> None:
        """Append ``new`` (under the lock): written past what readers see, capacity doubled
        when full (amortised O(rows added), not O(table) per addition), then published,
        rows before slots."""
        n, m = len(self._rows.row_ids), len(new.row_ids)
        if n + m > len(self._held.row_ids):
            self._held = self._held.grown(n, max(2 * len(self._held.row_ids), n + m, 1024))
        self._held.put(n, new)
        self._rows = self._held.first(n + m)
        top = int(new.row_ids.max(initial=-1)) + 1
        if top > len(self._slot):
            slot = np.full(max(2 * len(self._slot), top), -1, dtype=np.int64)
            slot[: len(self._slot)] = self._slot
            slot[new.row_ids] = np.arange(n, n + m)
            self._slot = slot
        else:  # cells of rows no reader has found yet (-1 until now)
            self._slot[new.row_ids] = np.arange(n, n + m)

    def mask(self, filters: Filters, rows: Rows) -> np.ndarray:
        """:func:`kbsearch.filters.to_mask` of ``rows`` (this table's, as
        :meth:`positions` gave them), computed for the rows added since the last call only."""
        key = (filters.audience, filters.day, filters.language, filters.doc_ids)
        found = self._masks.get(key, np.zeros(0, dtype=bool))
        if len(found) < len(rows.row_ids):
            found = np.concatenate([found, to_mask(filters, rows.since(len(found)))])
            if len(self._masks) >= MASKS:
                self._masks = {}
            self._masks[key] = found
        return found[: len(rows.row_ids)]
