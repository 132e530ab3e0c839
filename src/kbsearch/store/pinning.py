"""Pinned readers: connections that keep seeing one committed state of the file.

A pinned reader is a connection of its own with a read transaction left open: in WAL mode it
sees the state it first read until it is closed, whatever is committed meanwhile. A served
search snapshot (:mod:`kbsearch.backends.sqlite`) keeps one beside its in-memory parts, so a
search answered from an older snapshot reads that snapshot's passages too: the whole response
is one generation. Threads read from it inside :meth:`PinnedReads.reading_from`; they share it
read-only (the ``sqlite3`` module is built thread-safe, ``sqlite3.threadsafety == 3``).

While a pinned reader is open, checkpoints cannot move the WAL past its state, and a reader
that began in the middle of the WAL keeps any writer from starting the WAL over (it then grows
with every write): close it as soon as a newer one serves, and pin again after a complete
:meth:`PinnedReads.checkpoint` (the new reader reads the database file, not the WAL).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from .database import Database


class PinnedReads:
    """Pinned readers beside the database's own connections (``store.pins``)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def open_reader(self) -> sqlite3.Connection:
        """A new connection inside a read transaction that has read the file once (so it is
        pinned to the generation it returns from ``generation()`` from now on).

        Raises:
            StorageError: the store is closed or the file cannot be opened.
        """
        connection = self.database.open_connection()
        connection.execute("BEGIN")
        connection.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return connection

    def close_reader(self, connection: sqlite3.Connection) -> None:
        """End the reader's transaction and close it (no error when the store is closed)."""
        self.database.forget(connection)
        # already closed with the store, or a damaged file (whose error, raised first, is
        # the one to report): the connection goes either way
        with contextlib.suppress(sqlite3.Error):
            if connection.in_transaction:
                connection.execute("COMMIT")
        with contextlib.suppress(sqlite3.Error):
            connection.close()

    def checkpoint(self) -> bool:
        """Copy the WAL's committed pages into the database file as far as readers allow
        (``PRAGMA wal_checkpoint(PASSIVE)``: never waits); ``True`` when every page is in. A
        reader that begins after a complete checkpoint reads the file itself, so the next
        writer may start the WAL over instead of growing it."""
        row = self.database.connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        busy, frames, copied = (int(x) for x in row)
        return not busy and frames == copied

    @contextmanager
    def reading_from(self, connection: sqlite3.Connection | None) -> Iterator[None]:
        """Within: this thread's reads (:attr:`Database.connection`) go to the pinned ``connection``
        (``None``: to this thread's own connection). Only reads: a write there fails."""
        previous = (
            getattr(self.database.local, "pinned", None),
            getattr(self.database.local, "pinned_generation", None),
        )
        # the generation of ``connection``, read by the first generation() inside
        self.database.local.pinned, self.database.local.pinned_generation = connection, None
        try:
            yield
        finally:
            self.database.local.pinned, self.database.local.pinned_generation = previous
