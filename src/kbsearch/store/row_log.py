"""The log of deleted passage rows per generation, so an in-memory index can follow writes.

A passage row never changes once written and its id is never reused
(:meth:`kbsearch.store.documents.Documents.write`), so between two generations ``g < G`` the
rows added are those with an id above every id held at ``g``, and only the deleted ones need
a record. Each write records, in its own transaction and in the ``meta`` table (no schema
change), the ranges of row ids it deleted:

- ``row_log@GGGGGGGGGGGG``: JSON ``[[first, last], ...]`` (inclusive) of the rows deleted by
  the write that made generation ``G`` (no key: none deleted);
- ``row_log_since`` / ``row_log_through``: every generation in ``(since, through]`` is logged.

Every generation bump advances ``through`` (:func:`advance`); a bump that finds ``through``
behind the file's generation (a writer that did not log) restarts the log there, so a reader
never trusts a gap. Only the last :data:`LOG_GENERATIONS` generations are kept; a reader
further behind reloads. O(rows deleted) per write, O(generations followed) per read.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

import numpy as np

LOG_GENERATIONS = 1024
EVERY_ROW = (0, (1 << 62) - 1)  # the range a clear deletes


def _key(generation: int) -> str:
    return f"row_log@{generation:012d}"


def _get(con: sqlite3.Connection, key: str) -> str | None:
    row = con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _set(con: sqlite3.Connection, key: str, value: str) -> None:
    con.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?)"
        " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def ranges(row_ids: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted distinct ``row_ids`` as inclusive ``(first, last)`` runs of consecutive ids."""
    out: list[tuple[int, int]] = []
    for r in sorted(set(int(x) for x in row_ids)):
        if out and r == out[-1][1] + 1:
            out[-1] = (out[-1][0], r)
        else:
            out.append((r, r))
    return out


def record_deleted(con: sqlite3.Connection, runs: Sequence[tuple[int, int]]) -> None:
    """Add ``runs`` (inclusive row id ranges) to the rows deleted by the write in progress
    (the one that will make the next generation); call inside its transaction."""
    if not runs:
        return
    key = _key(int(_get(con, "generation") or 0) + 1)
    found = json.loads(_get(con, key) or "[]")
    _set(con, key, json.dumps(found + [list(r) for r in runs]))


def advance(con: sqlite3.Connection, generation: int) -> None:
    """Mark ``generation`` (just made by a bump from ``generation - 1``) as logged; call
    inside the bump's transaction."""
    through = _get(con, "row_log_through")
    since = _get(con, "row_log_since")
    start = int(since) if since is not None else generation - 1
    if through is None or int(through) != generation - 1:
        start = generation - 1  # a gap (a writer that did not log): the log starts again
    if generation - start > LOG_GENERATIONS:
        con.execute("DELETE FROM meta WHERE key = ?", (_key(generation - LOG_GENERATIONS),))
        start = generation - LOG_GENERATIONS
    _set(con, "row_log_since", str(start))
    _set(con, "row_log_through", str(generation))


def deleted_between(con: sqlite3.Connection, old: int, new: int) -> np.ndarray | None:
    """Inclusive ``(first, last)`` ranges, shape ``(m, 2)`` int64, of the rows deleted by
    the writes that made generations ``old + 1`` .. ``new``; ``None`` when the log does not
    cover them all (the reader must reload). Call inside a read transaction at ``new``."""
    if new < old:
        return None
    since, through = _get(con, "row_log_since"), _get(con, "row_log_through")
    if since is None or through is None or int(since) > old or int(through) != new:
        return None
    found: list[list[int]] = []
    if new > old:
        rows = con.execute(
            "SELECT value FROM meta WHERE key > ? AND key <= ?", (_key(old), _key(new))
        )
        for (value,) in rows:
            found += json.loads(value)
    return np.array(found, dtype=np.int64).reshape(-1, 2)
