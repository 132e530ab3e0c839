"""Re-embedding without risk: build the new index in a copy, replace the old one when complete.

The copy (``DB.reembed`` beside the index, made with SQLite's online backup API, emptied of
documents and settings, the embedding cache kept) receives the whole re-embed. Only when the
caller commits does the backup API copy it back over the index, in one write transaction:
readers see the old index or the new one, never a mix. A re-embed that fails or is killed
leaves the old index as it was; its stale copy is removed by the next re-embed. One that
fails or is interrupted (Ctrl-C) adds the vectors it computed to the index's embedding cache
(keyed by embedder, so nothing the index searches changes), and a re-run reuses them.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import StorageError
from .database import PUBLIC_META

if TYPE_CHECKING:
    from . import Store

STAGING_SUFFIX = ".reembed"


def staging_path(path: Path) -> Path:
    return path.with_name(path.name + STAGING_SUFFIX)


def remove_database(path: Path) -> None:
    """Delete a database file with its WAL and shared-memory files (missing ones ignored)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


class Staging:
    """A cleared copy of a store; :meth:`commit` makes it the index."""

    def __init__(self, store: Store, copy: Store, copied: int) -> None:
        self.store = store
        self.copy = copy
        self.copied = copied  # the index's generation the copy was made of
        self.committed = False

    def commit(self) -> None:
        """Replace the index's content with the copy's, in one write transaction.

        Raises:
            StorageError: the index cannot be written, or another writer (a server's upload
                or delete) wrote it since the copy was made: the copy lacks that write, and
                its rows took ids the write's rows have, which a server's in-memory index
                reads as the same rows. The index is then unchanged.
        """
        now = self.store.database.generation()
        if now != self.copied:
            raise StorageError(
                f"{self.store.path} was written while it was re-embedded (generation"
                f" {self.copied}, now {now}): the copy lacks those writes, so it does not"
                " replace the index; run the re-embed again when nothing else writes it (the"
                " vectors computed are kept for it)"
            )
        with self.copy.database.transaction():  # newer than anything readers have cached
            generation = self.store.database.generation() + 1
            self.copy.database.set_meta("generation", str(generation))
            # new to the public too (the copy's own "P G" is of its own writes, not the index's)
            self.copy.database.set_meta(PUBLIC_META, f"{generation} {generation}")
        try:
            self.copy.database.connection.backup(self.store.database.connection)
        except sqlite3.Error as exc:
            raise StorageError(
                f"cannot replace {self.store.path} with the re-embedded copy: {exc}"
            ) from exc
        self.committed = True


@contextmanager
def staged_copy(store: Store) -> Iterator[Staging]:
    """A cleared copy of ``store`` to rebuild into (see the module docstring); removed on
    exit, committed or not (when not, the vectors it computed are first added to
    ``store``'s embedding cache, so the next re-embed does not compute them again).

    Raises:
        StorageError: the copy cannot be written (disk full, read-only folder).
    """
    from . import Store

    path = staging_path(store.path)
    remove_database(path)  # a stale copy from a killed re-embed
    try:
        target = sqlite3.connect(path)
        try:
            store.database.connection.backup(target)
        finally:
            target.close()
    except (OSError, sqlite3.Error) as exc:
        remove_database(path)
        raise StorageError(f"cannot write the re-embedding copy {path}: {exc}") from exc
    copy = Store(path)
    staging = Staging(store, copy, copy.database.generation())
    try:
        copy.documents.clear()
        yield staging
    finally:
        copy.close()
        if not staging.committed:  # the vectors it computed stay in the index's cache
            with contextlib.suppress(StorageError, sqlite3.Error):
                store.vectors.adopt_cache(path)
        remove_database(path)


def discard_if_empty(path: Path) -> bool:
    """Delete the database at ``path`` if it holds no document and no settings (a first
    run that failed before writing anything); keep it otherwise. True when deleted."""
    try:
        connection = sqlite3.connect(path, timeout=1.0, isolation_level=None)
    except sqlite3.Error:
        return False
    try:
        connection.execute("BEGIN IMMEDIATE")  # no other writer while we look and delete
        tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master")}
        if not {"documents", "meta"} <= tables:
            if tables:
                return False  # not ours
            remove_database(path)
            return True
        documents = connection.execute("SELECT count(*) FROM documents").fetchone()[0]
        settings = connection.execute("SELECT count(*) FROM meta WHERE key = 'settings'")
        if documents or settings.fetchone()[0]:
            return False
        remove_database(path)
        return True
    except sqlite3.Error:
        return False
    finally:
        connection.close()
