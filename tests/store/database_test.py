"""The store refuses files it cannot read safely, and never overwrites them."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from support import SEED, seed_store

from kbsearch.errors import (
    KnowledgeBaseNotFoundError,
    ReadOnlyIndexError,
    SchemaError,
    StorageError,
)
from kbsearch.store import Store
from kbsearch.text.analysis import Analyzer


def test_other_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    Store(path, create=True).close()
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    with pytest.raises(SchemaError, match="schema version 1"):
        Store(path, create=True)


def test_not_a_database_is_refused_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database" * 100)
    with pytest.raises(SchemaError):
        Store(path, create=True)
    assert path.read_bytes().startswith(b"these are my notes")


def test_another_tools_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE customers (name TEXT)")
    con.commit()
    con.close()
    with pytest.raises(SchemaError, match="not a kbsearch index"):
        Store(path, create=True)


def test_missing_file_is_not_created_by_readers(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeBaseNotFoundError):
        Store(tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()


def test_empty_file_is_not_silently_turned_into_an_index_by_readers(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    with pytest.raises(SchemaError, match="empty"):
        Store(path)
    assert path.stat().st_size == 0


def test_missing_folder_is_an_error_not_a_silent_mkdir(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="does not exist"):
        Store(tmp_path / "no" / "such" / "kb.db", create=True)
    assert not (tmp_path / "no").exists()


def test_one_connection_per_thread_all_closed(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.db", create=True)
    seen: list[sqlite3.Connection] = []
    threads = [threading.Thread(target=lambda: seen.append(store.connection)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(c) for c in [store.connection, *seen]}) == 4
    assert store.connection is store.connection  # the same thread keeps its connection
    store.close()
    for connection in [*seen]:
        with pytest.raises(sqlite3.ProgrammingError):  # closed
            connection.execute("SELECT 1")
    with pytest.raises(StorageError, match="closed"):
        store.generation()


def _seeded(path: Path) -> None:
    seed_store(path, Analyzer("stem")).close()


def test_read_only_file_is_searched_not_written(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    _seeded(path)
    path.chmod(0o444)
    try:
        store = Store(path)
        assert store.read_only
        assert store.count_passages() == len(SEED)
        assert store.read_snapshot().columns.row_ids.size == len(SEED)
        with pytest.raises(ReadOnlyIndexError, match="read-only.*chmod u\\+w"):
            store.delete_document("A", "1")
        store.close()
    finally:
        path.chmod(0o644)
    assert Store(path).count_passages() == len(SEED)


def test_read_only_media_without_wal_index_is_searched(tmp_path: Path) -> None:
    folder = tmp_path / "media"
    folder.mkdir()
    path = folder / "kb.db"
    _seeded(path)
    for suffix in ("-wal", "-shm"):  # as a copy on read-only media would be
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.chmod(0o444)
    folder.chmod(0o555)
    try:
        store = Store(path)
        assert store.count_passages() == len(SEED)
        store.close()
    finally:
        folder.chmod(0o755)
        path.chmod(0o644)


def test_the_tracer_sees_every_statement_of_every_connection(tmp_path: Path) -> None:
    seen: list[str] = []
    store = Store(tmp_path / "kb.db", create=True, tracer=seen.append)
    store.get_meta("generation")
    assert "SELECT value FROM meta WHERE key = 'generation'" in seen  # parameters bound
    seen.clear()
    later: list[str] = []
    other = threading.Thread(target=lambda: store.get_meta("settings"))
    with store.tracing(later.append):
        other.start()
        other.join()
        store.get_meta("schema_version")
    assert "SELECT value FROM meta WHERE key = 'settings'" in later  # a new thread's too
    assert "SELECT value FROM meta WHERE key = 'schema_version'" in later
    assert not any("schema_version" in s for s in seen)  # the first tracer was replaced
    store.get_meta("x")
    assert seen[-1] == "SELECT value FROM meta WHERE key = 'x'"  # and is back after
    store.close()


def test_a_read_transaction_reads_the_generation_once(tmp_path: Path) -> None:
    seen: list[str] = []
    store = Store(tmp_path / "kb.db", create=True)
    with store.tracing(seen.append), store.read_transaction():
        assert [store.generation() for _ in range(3)] == [0, 0, 0]
    assert sum("key = 'generation'" in s for s in seen) == 1
    writer = Store(tmp_path / "kb.db")
    with writer.transaction():
        writer.bump_generation()
    assert store.generation() == 1  # outside a read transaction: read from the file again
    with store.read_transaction():
        assert store.generation() == 1
    store.close()
    writer.close()
