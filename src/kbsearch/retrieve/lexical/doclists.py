"""Term doclists kept across index generations: a write costs the cache what it changed.

A :class:`Doclists` holds, per (FTS5 table, term), the rows holding the term and its frequency
in each (int32/uint16 where they fit: ~6 bytes per posting), as read at some generation, up to
``budget`` postings, least recently used dropped first. A doclist read at generation ``g`` is
brought to a later generation ``G`` without reading it again:

- rows deleted by the writes in ``(g, G]`` come from the store's row log
  (:mod:`kbsearch.store.row_log`), and are dropped;
- rows added since are those with an id past every id held at ``g`` (ids are never reused,
  :meth:`kbsearch.store.documents.Documents.write`), so the postings they add are the new
  rows' own, tokenized again by FTS5 (:meth:`kbsearch.store.fts.Fts.postings_since`).

What the writes between two generations did to a table is read once (a :class:`Change`,
O(rows written)) and kept for the doclists still behind; a change of more than
``CHANGE_ROWS`` rows, or a log that does not reach back, is not followed: the doclists behind
it are read again when asked. A reader of a generation older than a doclist's reads its own
and keeps nothing. So the first search after a one-document write reads no doclist it had.
Thread-safe.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

BUDGET = 1 << 23  # postings kept (~48 MiB)
CHANGE_ROWS = 1 << 14  # rows a followed change may add; past it, doclists are read again
CHANGES = 256  # changes kept per table


@dataclass(frozen=True)
class Doclist:
    """A term's ``rows`` (ascending) and ``tf`` at ``generation``; ``next_row``: one past
    every row id the file held then."""

    rows: np.ndarray
    tf: np.ndarray
    generation: int
    next_row: int

    @classmethod
    def of(cls, rows: np.ndarray, tf: np.ndarray, generation: int, next_row: int) -> Doclist:
        """Stored compactly: int32 rows and uint16 counts where the values fit."""
        small = len(rows) == 0 or int(rows[-1]) < 2**31
        fits = len(tf) == 0 or float(tf.max()) < 2**16
        return cls(
            rows.astype(np.int32 if small else np.int64),
            tf.astype(np.uint16 if fits else np.uint32),
            generation,
            next_row,
        )

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rows int64, tf float64)``, as :meth:`kbsearch.store.fts.Fts.term_postings`."""
        return self.rows.astype(np.int64), self.tf.astype(np.float64)


@dataclass(frozen=True)
class Change:
    """The writes that made generations ``old + 1`` .. ``new`` of one table: ``deleted``
    (inclusive row id ranges, shape ``(m, 2)``), and the postings of the rows they added
    (ids from ``old_next`` to ``new_next``), by term."""

    old: int
    new: int
    old_next: int
    new_next: int
    deleted: np.ndarray
    added: dict[str, tuple[np.ndarray, np.ndarray]]


def outside(rows: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    """Mask of ``rows`` in none of the inclusive ``ranges`` (shape ``(m, 2)``). O(n log m)."""
    if len(ranges) == 0 or len(rows) == 0:
        return np.ones(len(rows), dtype=bool)
    order = np.argsort(ranges[:, 0], kind="stable")
    starts = ranges[order, 0]
    # the largest end among the ranges starting at or before each start covers what they cover
    ends = np.maximum.accumulate(ranges[order, 1])
    at = np.searchsorted(starts, rows, side="right") - 1
    inside = (at >= 0) & (rows <= ends[np.maximum(at, 0)])
    return ~inside


# what a table's writes did: (old generation, old next row) -> the change to the reader's own
Follow = Callable[[int, int], "Change | None"]
# a doclist read at the reader's generation: (rows, tf, next_row)
Read = Callable[[], "tuple[np.ndarray, np.ndarray, int]"]


class Doclists:
    """The doclist cache shared by every generation of a backend (module docstring)."""

    def __init__(self, budget: int = BUDGET) -> None:
        self.budget = budget
        self._entries: OrderedDict[tuple[str, str], Doclist] = OrderedDict()
        self._held = 0
        self._changes: dict[str, list[Change]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._held

    def get(
        self, table: str, term: str, generation: int, follow: Follow, read: Read
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(rows int64, tf float64)`` of ``term`` in ``table`` at ``generation``: the held
        doclist, brought forward through the table's changes (``follow`` reads the one from a
        generation to ``generation``), else ``read()`` (then kept, unless a newer one is)."""
        key = (table, term)
        with self._lock:
            held = self._entries.get(key)
            if held is not None and held.generation < generation:
                held = self._forward(key, held, generation, follow)
                self._put(key, held)
            if held is not None and held.generation == generation:
                self._entries.move_to_end(key)
                return held.arrays()
        rows, tf, next_row = read()
        found = Doclist.of(rows, tf, generation, next_row)
        with self._lock:
            newest = self._entries.get(key)
            if newest is None or newest.generation < generation:
                self._put(key, found)
        return rows, tf

    def _put(self, key: tuple[str, str], doclist: Doclist | None) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self._held -= len(old.rows)
        if doclist is None or len(doclist.rows) > self.budget:
            return
        self._entries[key] = doclist
        self._held += len(doclist.rows)
        while self._held > self.budget:
            _, dropped = self._entries.popitem(last=False)
            self._held -= len(dropped.rows)

    def _chain(self, table: str, since: Doclist, generation: int, follow: Follow) -> list[Change]:
        """The table's changes from ``since.generation`` to ``generation`` (read and kept
        when past the newest held), or ``[]`` when they cannot be followed."""
        chain = self._changes.setdefault(table, [])
        if not chain or chain[0].old > since.generation:
            chain.clear()  # the held changes start after it: start again from it
            start, start_next = since.generation, since.next_row
        else:
            start, start_next = chain[-1].new, chain[-1].new_next
        if start < generation:
            change = follow(start, start_next)
            if change is None or change.new != generation:
                return []
            chain.append(change)
            del chain[: max(0, len(chain) - CHANGES)]
        first = next((i for i, c in enumerate(chain) if c.new > since.generation), None)
        if first is None or chain[first].old > since.generation:
            return []
        last = next((i for i, c in enumerate(chain) if c.new == generation), None)
        return [] if last is None or last < first else chain[first : last + 1]

    def _forward(
        self, key: tuple[str, str], held: Doclist, generation: int, follow: Follow
    ) -> Doclist | None:
        """``held`` brought to ``generation`` through the table's changes, else ``None``."""
        table, term = key
        changes = self._chain(table, held, generation, follow)
        if not changes:
            return None
        rows, tf = held.arrays()
        next_row = held.next_row
        for change in changes:
            keep = outside(rows, change.deleted)
            rows, tf = rows[keep], tf[keep]
            added = change.added.get(term)
            if added is not None:
                # rows the doclist does not hold yet (it holds none past its last)
                new = added[0] >= max(next_row, int(rows[-1]) + 1 if len(rows) else 0)
                rows = np.concatenate([rows, added[0][new]])
                tf = np.concatenate([tf, added[1][new]])
            next_row = change.new_next
        return Doclist.of(rows, tf, generation, next_row)
