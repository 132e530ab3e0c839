"""The store refuses files it cannot read safely, and never overwrites them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kbsearch.errors import KnowledgeBaseNotFoundError, SchemaError
from kbsearch.store import Store


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
