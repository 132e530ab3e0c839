"""A file the store cannot write (locked by another writer, a full disk) fails in one line
that names it (kbsearch.store.failures), and nothing already written is damaged."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from support import SEED, seed_store

from kbsearch.errors import DatabaseLockedError, StorageFullError
from kbsearch.store import Store
from kbsearch.text.analysis import Analyzer


def test_locked_database_waits_then_fails_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "kb.db"
    seed_store(path, Analyzer("stem")).close()
    monkeypatch.setenv("KBSEARCH_BUSY_TIMEOUT", "0.3")
    store = Store(path)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    started = time.monotonic()
    with pytest.raises(DatabaseLockedError, match="locked by another writer \\(waited 0.3 s\\)"):
        store.documents.delete("A", "1")
    assert time.monotonic() - started >= 0.25  # it waited before failing
    # a writer that lets go within the timeout is waited for
    monkeypatch.setenv("KBSEARCH_BUSY_TIMEOUT", "5")
    patient = Store(path)
    threading.Timer(0.3, lambda: other.execute("ROLLBACK")).start()
    patient.documents.delete("A", "1")
    assert patient.passages.count() == len(SEED) - 1
    other.close()


def test_full_disk_rolls_back_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "kb.db"
    seed_store(path, Analyzer("stem")).close()
    store = Store(path)
    pages = store.database.connection.execute("PRAGMA page_count").fetchone()[0]
    store.database.connection.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full now
    big = {f"h{i}": np.ones(1024, dtype=np.float32) for i in range(50)}
    with pytest.raises(StorageFullError, match="full; nothing was lost"):
        store.vectors.cache("fake", "passage", big)
    assert store.vectors.cached("fake", "passage", list(big)) == {}
    assert store.passages.count() == len(SEED)
    store.close()
    assert Store(path).database.connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
