"""Opening the database file: read-write, or read-only when the file has no write permission
bits (``mode=ro``; ``immutable=1`` on read-only media, where SQLite cannot create the WAL
index), and a probe that reads every table's first page on a connection of its own.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from urllib.parse import quote


def writable(path: Path) -> bool:
    """False for a file without write permission bits (also for root, who could write it)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return True
    return bool(mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)) and os.access(path, os.W_OK)


def connect(
    path: Path, *, read_only: bool, immutable: bool, timeout: float
) -> tuple[sqlite3.Connection, bool]:
    """A new connection to ``path`` (autocommit: ``isolation_level=None``; usable from any
    thread) and whether the file is read as immutable: a read-only file is opened
    ``mode=ro``, and ``immutable=1`` when that cannot read it (no WAL index on read-only
    media) or ``immutable`` is already known.

    Raises:
        sqlite3.Error, OSError: as :func:`sqlite3.connect` raises them.
    """

    def sqlite(target: str, uri: bool = False) -> sqlite3.Connection:
        return sqlite3.connect(
            target, timeout=timeout, isolation_level=None, check_same_thread=False, uri=uri
        )

    if not read_only:
        return sqlite(str(path)), False
    uri = f"file:{quote(str(path.resolve()))}"
    if not immutable:
        connection = sqlite(f"{uri}?mode=ro", uri=True)
        try:  # read-only media: SQLite cannot create the WAL index, nobody can write
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return connection, False
        except sqlite3.OperationalError:
            connection.close()
    return sqlite(f"{uri}?immutable=1", uri=True), True


def probe_tables(connection: sqlite3.Connection) -> int:
    """Read the first row of every table (each table's first pages), then the generation.

    Raises:
        sqlite3.DatabaseError: a page it read is damaged, or the file is no database.
    """
    names = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    for (name,) in names.fetchall():
        quoted = '"' + str(name).replace('"', '""') + '"'
        # every column: "SELECT 1" may read a covering index instead of the table
        connection.execute(f"SELECT * FROM {quoted} LIMIT 1").fetchone()
    row = connection.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return int(row[0]) if row else 0
