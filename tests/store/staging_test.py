"""Re-embedding builds a copy and replaces the index only when the copy is complete."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from support import FakeEmbedder, many_files, slow_index_command

import kbsearch
from kbsearch.errors import IndexingInterrupted, StorageError
from kbsearch.records import Filters
from kbsearch.store import Store
from kbsearch.store.staging import discard_if_empty, staged_copy, staging_path

ENV = dict(os.environ, PYTHONPATH=str(Path(kbsearch.__file__).parents[1]))


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, Path]:
    docs, db = many_files(tmp_path / "docs", 6), tmp_path / "kb.db"
    with kbsearch.open_kb(db, create=True, embedder=FakeEmbedder(name="fake:old")) as kb:
        assert kb.index([docs]).added == 6
    return docs, db


def state(db: Path) -> tuple[object, int, int, list[str]]:
    with kbsearch.open_kb(db) as kb:
        docs = [d.document.doc_id for d in kb.documents()]
        return (
            kb.settings.get("embedder"),
            kb.store.passages.count(),
            kb.store.vectors.count(),
            docs,
        )


def test_reembed_replaces_the_index_when_complete(built: tuple[Path, Path]) -> None:
    docs, db = built
    with kbsearch.open_kb(db, embedder=FakeEmbedder(dim=16, name="fake:new")) as kb:
        before = kb.store.database.generation()
        report = kb.index([docs], reembed=True)
        assert report.ok and report.added == 6 and not report.kept_previous_index
        assert kb.store.database.generation() > before
        assert kb.store.database.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert kb.search("courier", route="dense", filters=Filters())
    assert state(db)[:3] == ("fake:new", 6, 6)
    assert not staging_path(db).exists()


def test_reembed_with_a_failing_file_keeps_the_old_index(built: tuple[Path, Path]) -> None:
    docs, db = built
    before = state(db)
    (docs / "doc003.md").write_bytes(b"# Page 3\n\n\xff\xfe not UTF-8\n")
    with kbsearch.open_kb(db, embedder=FakeEmbedder(name="fake:new")) as kb:
        report = kb.index([docs], reembed=True)
    assert report.kept_previous_index and [Path(s).name for s, _ in report.failed] == ["doc003.md"]
    assert state(db) == before  # doc003 and the old vectors are all still there
    assert "doc003" in before[3]
    assert not staging_path(db).exists()


def test_interrupted_reembed_keeps_the_old_index(built: tuple[Path, Path]) -> None:
    docs, db = built
    before = state(db)

    def interrupt(done: int, total: int) -> None:
        if done >= 2:
            raise KeyboardInterrupt

    kb = kbsearch.open_kb(db, embedder=FakeEmbedder(name="fake:new"))
    with pytest.raises(IndexingInterrupted):
        kb.index([docs], reembed=True, progress=interrupt)
    kb.close()
    assert state(db) == before
    assert not staging_path(db).exists()


def test_kill_9_during_reembed_keeps_the_old_index_answering(built: tuple[Path, Path]) -> None:
    docs, db = built
    before = state(db)
    child = subprocess.Popen(
        slow_index_command(str(docs), "--db", str(db), "--reembed", "--embedder", "fake:new"),
        env=ENV,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    for _ in range(3):
        assert child.stdout.readline().strip() == "batch"
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=60)
    assert staging_path(db).exists()  # the half-built copy, never used
    assert state(db) == before
    with kbsearch.open_kb(db, embedder=FakeEmbedder(name="fake:old")) as kb:
        assert kb.search("courier", route="hybrid", filters=Filters())
        report = kb.index([docs], reembed=True)  # a new re-embed starts from a fresh copy
        assert report.ok and report.added == 6
    assert not staging_path(db).exists()


def test_a_failed_first_run_leaves_no_file_but_never_deletes_an_index(
    built: tuple[Path, Path], tmp_path: Path
) -> None:
    _, db = built
    assert not discard_if_empty(db) and db.exists()
    empty = tmp_path / "empty.db"
    kbsearch.open_kb(empty, create=True).close()
    assert discard_if_empty(empty) and not empty.exists()


def test_a_copy_does_not_replace_an_index_written_meanwhile(tmp_path: Path) -> None:
    """A write to the index during the rebuild (a server's upload) is not in the copy: the
    commit replaced it anyway, the upload answered and lost, and the copy's rows had taken
    the ids the upload's rows had, so a server's in-memory index (which trusts an id never
    to be reused) kept the upload's rows and a search failed ('math domain error', 'the
    index changed under 5 searches in a row')."""
    store = Store(tmp_path / "kb.db", create=True)
    database = store.database
    with staged_copy(store) as staging:
        with database.transaction():  # the upload
            database.bump_generation()
        with pytest.raises(StorageError, match="written while it was re-embedded"):
            staging.commit()
        assert not staging.committed
    assert database.generation() == 1
    store.close()
