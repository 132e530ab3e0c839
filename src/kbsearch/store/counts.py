"""Collection counts kept by every write, per audience: what a new snapshot, learned fusion's
title statistics and the page's source paths read instead of scanning every passage or
document.

One table, ``collection_counts(audience, kind, key, n)``, holds for each audience (``public``:
the public documents only; ``staff``: every document) and kind:

- ``title``: passages per document title of its own (:func:`own_title`; none for a document
  titled by its id or untitled);
- ``language``: passages per language; ``doc_language``: documents per language;
- ``folder``: documents per folder of their source file (URLs and empty sources left out);
- ``total``: the sums learned fusion reads (:data:`TOTALS`): ``passages``, ``titled``
  (passages with a title of their own), ``unique_titled`` (titles that head exactly one
  passage: each is one such passage), ``titles`` (distinct titles).

A document version's write adds its counts and its deletion (or replacement) subtracts them,
in the write's own transaction: O(1) statements per document, whatever the collection's size,
and a count never disagrees with the rows it counts. A row whose count falls to 0 is deleted,
so reading a kind is O(its distinct keys). A file written before this table existed gets it
filled on its first writable open (one pass over the documents); a read-only one of that age
counts in memory once, from the same pass.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from ..filters import Audience
from .database import Database
from .migration import add_missing_table
from .schema import COUNTS_SQL, COUNTS_TABLE

TOTALS = ("passages", "titled", "unique_titled", "titles")
URL_PREFIXES = ("http://", "https://")

Key = tuple[str, str, str]  # (audience, kind, key)


def own_title(title: str, doc_id: str) -> str:
    """The document's title, stripped; ``""`` when it has none of its own (empty, or the
    document id, which the indexer names an untitled document after)."""
    title = title.strip()
    return "" if title == doc_id.strip() else title


def audiences_of(access: str) -> list[str]:
    """The audiences that may see a document labelled ``access`` (staff sees everything, the
    public only ``public`` documents)."""
    return [a.value for a in Audience if a.sees(access)]


def count_audience(audience: str) -> str:
    """The audience whose counts ``audience`` reads (``staff``, else ``public``)."""
    return "staff" if audience == "staff" else "public"


def source_folder(source: str) -> str:
    """The folder of a file source; ``""`` for a URL or no source."""
    if not source or source.startswith(URL_PREFIXES):
        return ""
    return os.path.dirname(source)


@dataclass(frozen=True)
class CountedDocument:
    """What a document version adds to the counts: its fields and its passage count."""

    doc_id: str
    title: str
    access: str
    language: str
    source: str
    passages: int

    def deltas(self, sign: int) -> dict[Key, int]:
        """``{(audience, kind, key): change}`` of adding (``sign`` 1) or removing (-1) it,
        totals left out (:func:`apply` derives them)."""
        out: dict[Key, int] = {}
        title, folder = own_title(self.title, self.doc_id), source_folder(self.source)
        for audience in audiences_of(self.access):
            out[(audience, "total", "passages")] = sign * self.passages
            if title and self.passages:
                out[(audience, "title", title)] = sign * self.passages
            if self.passages:
                out[(audience, "language", self.language)] = sign * self.passages
            out[(audience, "doc_language", self.language)] = sign
            if folder:
                out[(audience, "folder", folder)] = sign
        return out


def apply(
    deltas: dict[Key, int], get: Callable[[Key], int], put: Callable[[Key, int], None]
) -> None:
    """Add ``deltas`` to the counts read by ``get`` and written by ``put`` (a count of 0
    removed by ``put``), the title totals with them: a title's count going from ``old`` to
    ``new`` moves ``titled`` by the change, ``titles`` by ``(new > 0) - (old > 0)`` and
    ``unique_titled`` by ``(new == 1) - (old == 1)``."""
    totals: dict[Key, int] = {}
    for key, change in deltas.items():
        if not change:
            continue
        audience, kind, _ = key
        old = get(key)
        new = old + change
        if kind == "total":
            totals[key] = totals.get(key, 0) + change
            continue
        put(key, new)
        if kind == "title":
            for name, moved in (
                ("titled", change),
                ("titles", (new > 0) - (old > 0)),
                ("unique_titled", (new == 1) - (old == 1)),
            ):
                total = (audience, "total", name)
                totals[total] = totals.get(total, 0) + moved
    for key, change in totals.items():
        if change:
            put(key, get(key) + change)


DOCUMENT_FIELDS = (
    "SELECT d.doc_id, d.title, d.access, d.language, d.source,"
    " (SELECT count(*) FROM passages p WHERE p.document = d.id) FROM documents d"
)


def _counted(rows: Iterable[sqlite3.Row | tuple]) -> Iterator[CountedDocument]:
    for r in rows:
        yield CountedDocument(r[0], r[1], r[2], r[3], r[4], int(r[5]))


def tally(connection: sqlite3.Connection) -> dict[Key, int]:
    """Every count, from one pass over the documents (O(documents); for a file written
    before the table existed, and as the reference the kept counts must equal)."""
    counts: dict[Key, int] = {}

    def put(key: Key, n: int) -> None:
        if n:
            counts[key] = n
        else:
            counts.pop(key, None)

    cursor = connection.cursor()
    cursor.row_factory = None
    for document in _counted(cursor.execute(DOCUMENT_FIELDS)):
        apply(document.deltas(1), lambda k: counts.get(k, 0), put)
    return counts


class SqlCounts:
    """The counts table on one connection (inside the caller's transaction)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def get(self, key: Key) -> int:
        row = self.connection.execute(
            f"SELECT n FROM {COUNTS_TABLE} WHERE audience = ? AND kind = ? AND key = ?", key
        ).fetchone()
        return int(row[0]) if row else 0

    def put(self, key: Key, n: int) -> None:
        if n:
            self.connection.execute(
                f"INSERT INTO {COUNTS_TABLE}(audience, kind, key, n) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(audience, kind, key) DO UPDATE SET n = excluded.n",
                (*key, n),
            )
        else:
            self.connection.execute(
                f"DELETE FROM {COUNTS_TABLE} WHERE audience = ? AND kind = ? AND key = ?", key
            )

    def add(self, deltas: dict[Key, int]) -> None:
        apply(deltas, self.get, self.put)

    def stored(self, doc_id: str, version: str) -> CountedDocument | None:
        """What the stored version ``(doc_id, version)`` counts for (``None``: not stored)."""
        rows = self.connection.execute(
            f"{DOCUMENT_FIELDS} WHERE d.doc_id = ? AND d.version = ?", (doc_id, version)
        )
        return next(_counted(rows), None)

    def fill(self) -> None:
        """Replace the table's rows with :func:`tally`'s."""
        self.connection.execute(f"DELETE FROM {COUNTS_TABLE}")
        self.connection.executemany(
            f"INSERT INTO {COUNTS_TABLE}(audience, kind, key, n) VALUES (?, ?, ?, ?)",
            [(*key, n) for key, n in tally(self.connection).items()],
        )

    def keys(self, audience: str, kind: str) -> dict[str, int]:
        """``{key: count}`` of one audience and kind, keys sorted."""
        rows = self.connection.execute(
            f"SELECT key, n FROM {COUNTS_TABLE} WHERE audience = ? AND kind = ? ORDER BY key",
            (count_audience(audience), kind),
        )
        return {r[0]: int(r[1]) for r in rows}


class Counts:
    """The counts of one database file (``store.counts``): read per audience and kind; a file
    made before the table gets it on its first writable open (module docstring).

    Raises:
        StorageError: a file without the table cannot be written to add it (locked, full).
    """

    def __init__(self, database: Database) -> None:
        self.database = database
        # a read-only file made before the counts table: its counts, tallied once in memory
        self._tallied: dict[Key, int] | None = None
        self._kept = add_missing_table(
            database, COUNTS_TABLE, COUNTS_SQL, lambda con: SqlCounts(con).fill()
        )

    def keys(self, audience: str, kind: str) -> dict[str, int]:
        """``{key: count}`` of one audience and kind, keys sorted (O(the keys), not
        O(documents))."""
        if self._kept:
            return SqlCounts(self.database.connection).keys(audience, kind)
        if self._tallied is None:
            self._tallied = tally(self.database.connection)
        audience = count_audience(audience)
        found = {k[2]: n for k, n in self._tallied.items() if k[0] == audience and k[1] == kind}
        return dict(sorted(found.items()))
