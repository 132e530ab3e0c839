"""The database file: connections (one per thread), transactions, meta and settings; the
tables it creates are :mod:`kbsearch.store.schema`'s.

A store opens one SQLite connection per thread, lazily, each with a busy timeout; ``close``
closes them all. A file without write permission bits (``chmod 444``) is opened read-only
(``mode=ro``; ``immutable=1`` on read-only media where SQLite cannot create the WAL index), so
it can be searched but not written. SQLite failures that are not about one document (locked,
read-only, disk full, I/O) become :class:`~kbsearch.errors.StorageError` subclasses with one
line that names the file (:mod:`kbsearch.store.failures`). How the file is opened is
:mod:`kbsearch.store.opening`'s.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from ..errors import KnowledgeBaseNotFoundError, ReadOnlyIndexError, SchemaError, StorageError
from . import row_log
from .failures import busy_timeout, storage_error
from .opening import connect, probe_tables, writable
from .schema import SCHEMA, SCHEMA_VERSION
from .settings import IndexSettings

T = TypeVar("T")
Tracer = Callable[[str], None]  # called with each SQL statement run (its text, bound)
PUBLIC_META = "public_generation"  # meta key: see Database.public_generation
IN_CHUNK = 500  # values bound in one ``IN (...)`` (SQLite caps a statement's parameters)


def in_chunks(values: Iterable[T], size: int = IN_CHUNK) -> Iterator[tuple[list[T], str]]:
    """``values`` (repeats dropped) ``size`` at a time, each chunk with its ``?,?,...``
    marks for an ``IN (...)``."""
    unique = list(dict.fromkeys(values))
    for start in range(0, len(unique), size):
        chunk = unique[start : start + size]
        yield chunk, ",".join("?" * len(chunk))


class Database:
    """Connections, transactions, schema and meta of one knowledge base file: the object
    the store's table groups (:mod:`kbsearch.store`) each hold.

    ``tracer``: called with every SQL statement any of the store's connections runs (its
    text with the parameters bound, as SQLite's trace callback gives it), as sqlite-utils'
    ``Database(tracer=...)``; :meth:`tracing` sets one for a block.

    Raises:
        KnowledgeBaseNotFoundError: the file is missing and ``create`` is false.
        StorageError: the path is a folder, or its folder does not exist.
        SchemaError: the file is not a kbsearch index of this schema version.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        create: bool = False,
        tracer: Callable[[str], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self._tracer = tracer
        if not create and not self.path.exists():
            raise KnowledgeBaseNotFoundError(
                f"no knowledge base at {self.path}; create it with `kbsearch index PATH "
                f"--db {self.path}`"
            )
        if self.path.is_dir():
            raise StorageError(f"{self.path} is a folder, not a database file")
        if not self.path.parent.is_dir():
            raise StorageError(
                f"cannot create {self.path}: the folder {self.path.parent} does not exist"
                " (create it first)"
            )
        self.read_only = self.path.exists() and not writable(self.path)
        self.timeout = busy_timeout()
        # per thread: its connection, and its pinned reader and read transaction's state
        # (:mod:`kbsearch.store.pinning` sets the pinned reader)
        self.local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._immutable = False
        # the settings read at one generation, with their stored form
        self._settings: tuple[int, IndexSettings | None, dict[str, object]] = (-1, None, {})
        # the tables of a file that existed (``None``: made now), so the table groups add
        # those a file made by an older kbsearch lacks (:class:`kbsearch.store.counts.Counts`)
        self.tables_found: frozenset[str] | None = None
        try:
            self._check_schema(create)  # before any PRAGMA writes to someone else's file
            if not self.read_only:
                self.connection.execute("PRAGMA journal_mode=WAL")
        except sqlite3.DatabaseError as exc:
            self.close()
            error = storage_error(self.path, exc, self.timeout)
            if error is not None:
                raise error from exc
            raise SchemaError(f"{self.path} is not a kbsearch index: {exc}") from exc
        except SchemaError:
            self.close()
            raise

    # -- connections --------------------------------------------------------------------------

    @property
    def connection(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use (or the pinned reader this thread
        reads from, :mod:`kbsearch.store.pinning`).

        Raises:
            StorageError: the store is closed, or the file cannot be opened.
        """
        connection: sqlite3.Connection | None = getattr(self.local, "pinned", None) or getattr(
            self.local, "connection", None
        )
        if connection is None:
            connection = self.open_connection()
            self.local.connection = connection
        return connection

    def open_connection(self) -> sqlite3.Connection:
        """A new connection of this store, closed with it (:meth:`close`), set up as every
        other (row factory, tracer, pragmas).

        Raises:
            StorageError: the store is closed or the file cannot be opened.
        """
        with self._lock:
            if self._closed:
                raise StorageError(f"{self.path} is closed")
            try:
                connection = self._connect()
            except (OSError, sqlite3.Error) as exc:
                raise StorageError(f"cannot open a database at {self.path}: {exc}") from exc
            self._connections.append(connection)
        connection.row_factory = sqlite3.Row
        if self._tracer is not None:
            connection.set_trace_callback(self._tracer)
        if not self.read_only:
            connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute("PRAGMA foreign_keys=ON")
        return connection

    def _connect(self) -> sqlite3.Connection:
        connection, self._immutable = connect(
            self.path, read_only=self.read_only, immutable=self._immutable, timeout=self.timeout
        )
        return connection

    @contextmanager
    def tracing(self, tracer: Callable[[str], None]) -> Iterator[None]:
        """Within: ``tracer`` sees every statement of every connection (class docstring),
        those opened meanwhile too; the previous tracer afterwards."""
        previous = self._tracer
        self._set_tracer(tracer)
        try:
            yield
        finally:
            self._set_tracer(previous)

    def _set_tracer(self, tracer: Callable[[str], None] | None) -> None:
        with self._lock:
            self._tracer = tracer
            for connection in self._connections:
                connection.set_trace_callback(tracer)

    def forget(self, connection: sqlite3.Connection) -> None:
        """Stop tracking ``connection`` (its owner closes it): :meth:`close` leaves it be."""
        with self._lock:
            if connection in self._connections:
                self._connections.remove(connection)

    def close(self) -> None:
        """Close every thread's connection; the store cannot be used afterwards."""
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
        for connection in connections:
            connection.close()
        self.local = threading.local()

    def _check_schema(self, create: bool) -> None:
        self.connection.execute("PRAGMA schema_version")  # fails on a file that is not SQLite
        tables = {
            row[0]
            for row in self.connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if "meta" in tables:
            found = self.get_meta("schema_version")
            if found != str(SCHEMA_VERSION):
                raise SchemaError(
                    f"{self.path} has schema version {found}, this kbsearch reads "
                    f"{SCHEMA_VERSION}; move it aside and rebuild it with `kbsearch index`"
                )
            self.tables_found = frozenset(tables)
            return
        if tables:
            raise SchemaError(f"{self.path} is not a kbsearch index (it holds other tables)")
        if not create:
            raise SchemaError(
                f"{self.path} is not a kbsearch index (it is empty); create it with "
                f"`kbsearch index PATH --db {self.path}`"
            )
        with self.transaction():
            if self.get_meta_if_table("schema_version") is not None:
                return  # another process created it between our look and our lock
            for statement in SCHEMA.split(";\n"):
                if statement.strip():
                    self.connection.execute(statement)
            self.set_meta("schema_version", str(SCHEMA_VERSION))
            self.set_meta("generation", "0")

    def get_meta_if_table(self, key: str) -> str | None:
        exists = self.connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
        ).fetchone()
        return self.get_meta(key) if exists else None

    # -- transactions -------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` on this thread's connection; rolled back on any
        exception. Waits up to :attr:`timeout` seconds for another writer.

        Raises:
            ReadOnlyIndexError, DatabaseLockedError, StorageFullError, StorageError: the file
                cannot be written (nothing of this transaction is kept).
        """
        if self.read_only:
            raise ReadOnlyIndexError(
                f"{self.path} is read-only; it can be searched, but indexing needs write access"
                f" (chmod u+w {self.path})"
            )
        connection = self.connection
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise self._translate(exc) from exc
        try:
            yield connection
            connection.execute("COMMIT")
        except BaseException as exc:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError):
                raise self._translate(exc) from exc
            raise

    @contextmanager
    def read_transaction(self) -> Iterator[sqlite3.Connection]:
        """One read transaction (``BEGIN`` ... ``COMMIT``): every read inside it sees the
        same committed state, whatever other connections write meanwhile (WAL). Inside a
        transaction already open on this thread, it joins that one.

        Raises:
            StorageError: the file is damaged (a corrupt page was read).
        """
        connection = self.connection
        if connection.in_transaction:
            yield connection
            return
        connection.execute("BEGIN")
        # the state is fixed from the first read on: the generation is read once in it
        self.local.reading, self.local.read_generation = True, None
        try:
            yield connection
        except BaseException as exc:
            self.local.reading = False
            if connection.in_transaction:  # the first error is the one to report
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("COMMIT")
            if isinstance(exc, sqlite3.DatabaseError):
                error = storage_error(self.path, exc, self.timeout)
                if error is not None:
                    raise error from exc
            raise
        self.local.reading = False
        if connection.in_transaction:
            connection.execute("COMMIT")

    def _translate(self, exc: sqlite3.OperationalError) -> Exception:
        return storage_error(self.path, exc, self.timeout) or exc

    # -- meta and settings --------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.connection.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.connection.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def generation(self) -> int:
        """A counter bumped by every write; readers cache by it. Read from the file, except
        inside a pinned reader (:mod:`kbsearch.store.pinning`) or a :meth:`read_transaction`,
        whose generation cannot change: there it is read once."""
        pinned = getattr(self.local, "pinned", None)
        if pinned is not None:
            known: int | None = getattr(self.local, "pinned_generation", None)
            if known is None:
                known = self.local.pinned_generation = int(self.get_meta("generation") or 0)
            return known
        if not getattr(self.local, "reading", False):
            return int(self.get_meta("generation") or 0)
        read: int | None = self.local.read_generation
        if read is None:
            read = self.local.read_generation = int(self.get_meta("generation") or 0)
        return read

    def check_tables(self) -> int:
        """Read the generation and the first row of every table of the file (each table's
        first pages) on a new connection, closed after: this store's connections trust the
        pages they hold in memory, so they would not see a page damaged since they read it.
        A health probe's check, a few statements (``PRAGMA quick_check`` reads every page).

        Raises:
            sqlite3.DatabaseError: a page it read is damaged, or the file is no database.
        """
        connection = self._connect()
        try:
            return probe_tables(connection)
        finally:
            connection.close()

    def bump_generation(self, public: bool = True) -> None:
        """Add one to the generation and mark it in the deleted-rows log
        (:mod:`kbsearch.store.row_log`); call inside the write's transaction. ``public``:
        whether the write may change what the public audience sees (its passages, documents
        or the settings); ``False`` only for a write of staff-only rows, which keeps
        :meth:`public_generation`."""
        before = self.public_generation()
        self.connection.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
        )
        generation = int(self.get_meta("generation") or 0)
        row_log.advance(self.connection, generation)
        # "P G": the public's view is P's as long as the generation is G (a writer that does
        # not record it, an older kbsearch, moves the generation alone: then it is unknown)
        self.set_meta(PUBLIC_META, f"{generation if public else before} {generation}")

    def public_generation(self) -> int:
        """The generation of the last write that may have changed what the public audience
        sees: what the public's searches read is the same at every generation since (a
        staff-only write leaves it). The current generation when no write recorded it.
        Read in the same state as :meth:`generation`."""
        generation = self.generation()
        recorded = (self.get_meta(PUBLIC_META) or "").split()
        if len(recorded) == 2 and recorded[1] == str(generation) and recorded[0].isdigit():
            return min(int(recorded[0]), generation)
        return generation

    def read_settings(self) -> IndexSettings | None:
        """The recorded settings, read now (``None`` before the first document)."""
        raw = self.get_meta("settings")
        return IndexSettings.from_dict(json.loads(raw)) if raw else None

    def index_settings(self) -> IndexSettings | None:
        """The recorded settings, read once per generation (``None`` before the first
        document)."""
        return self._settings_now()[0]

    def settings(self) -> dict[str, object]:
        """The recorded settings in their stored form (``{}`` before the first document); a
        new dict each call."""
        return dict(self._settings_now()[1])

    def _settings_now(self) -> tuple[IndexSettings | None, dict[str, object]]:
        generation = self.generation()
        cached_generation, cached, stored = self._settings
        if cached_generation != generation:
            cached = self.read_settings()
            stored = cached.to_dict() if cached else {}
            self._settings = (generation, cached, stored)
        return cached, stored

    def write_settings(self, settings: IndexSettings | None) -> None:
        """Record (or with ``None`` forget) the settings; call inside a transaction that
        bumps the generation."""
        if settings is None:
            self.connection.execute("DELETE FROM meta WHERE key = 'settings'")
        else:
            self.set_meta("settings", json.dumps(settings.to_dict(), sort_keys=True))

    def set_settings(self, settings: IndexSettings | dict[str, object]) -> None:
        """Record the settings and bump the generation; call inside a transaction."""
        if not isinstance(settings, IndexSettings):
            settings = IndexSettings.from_dict(settings)
        self.write_settings(settings)
        self.bump_generation()

    def backup(self, destination: str | Path, without_meta: Sequence[str] = ()) -> bool:
        """Write a consistent copy with SQLite's online backup API (readers continue), the
        ``meta`` keys ``without_meta`` removed from the copy; ``True`` when one was there.

        Raises:
            StorageError: the destination cannot be written (missing folder, not a database).
        """
        try:
            target = sqlite3.connect(destination)
            try:
                self.connection.backup(target)
                removed = 0
                for key in without_meta:
                    removed += target.execute("DELETE FROM meta WHERE key = ?", (key,)).rowcount
                target.commit()
                return removed > 0
            finally:
                target.close()
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(f"cannot write a backup to {destination}: {exc}") from exc
