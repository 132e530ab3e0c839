"""Opening the file: a read-only file is searched, not written, also on read-only media."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import SEED, seed_store

from kbsearch.errors import ReadOnlyIndexError
from kbsearch.store import Store
from kbsearch.text.analysis import Analyzer


def _seeded(path: Path) -> None:
    seed_store(path, Analyzer("stem")).close()


def test_read_only_file_is_searched_not_written(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    _seeded(path)
    path.chmod(0o444)
    try:
        store = Store(path)
        assert store.database.read_only
        assert store.passages.count() == len(SEED)
        assert store.passages.filter_columns().row_ids.size == len(SEED)
        with pytest.raises(ReadOnlyIndexError, match="read-only.*chmod u\\+w"):
            store.documents.delete("A", "1")
        store.close()
    finally:
        path.chmod(0o644)
    assert Store(path).passages.count() == len(SEED)


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
        assert store.passages.count() == len(SEED)
        store.close()
    finally:
        folder.chmod(0o755)
        path.chmod(0o644)
