"""SQLite failures that are about the file, not one document (locked, read-only, disk full,
I/O, damaged), as :class:`~kbsearch.errors.StorageError` subclasses with one line that names
the file; and how long a write waits for another writer."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ..errors import DatabaseLockedError, ReadOnlyIndexError, StorageError, StorageFullError

BUSY_TIMEOUT_S = 10.0  # how long a write waits for another writer ($KBSEARCH_BUSY_TIMEOUT)


def busy_timeout() -> float:
    """Seconds a write waits for another writer: ``$KBSEARCH_BUSY_TIMEOUT`` or 10."""
    raw = os.environ.get("KBSEARCH_BUSY_TIMEOUT", "")
    try:
        return max(0.0, float(raw)) if raw else BUSY_TIMEOUT_S
    except ValueError:
        return BUSY_TIMEOUT_S


def storage_error(path: Path, exc: sqlite3.Error, timeout: float) -> StorageError | None:
    """The one-line error for a SQLite failure that is about the file, not a document
    (``None`` for any other failure)."""
    name = getattr(exc, "sqlite_errorname", "")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return DatabaseLockedError(
            f"{path} is locked by another writer (waited {timeout:g} s); try again when it"
            " has finished, or raise $KBSEARCH_BUSY_TIMEOUT"
        )
    if name.startswith("SQLITE_READONLY"):
        return ReadOnlyIndexError(
            f"{path} is read-only; it can be searched, but indexing needs write access"
            f" (chmod u+w {path})"
        )
    if name.startswith("SQLITE_FULL"):
        return StorageFullError(
            f"the disk holding {path} is full; nothing was lost: the last write was rolled"
            " back, free some space and re-run to resume"
        )
    if name.startswith(("SQLITE_IOERR", "SQLITE_CANTOPEN")):
        return StorageError(f"cannot read or write {path}: {exc}")
    if name.startswith("SQLITE_CORRUPT"):
        return StorageError(
            f"{path} is damaged ({exc}); restore it from a backup or rebuild it with"
            " `kbsearch index`"
        )
    return None
