"""`kbsearch index` under interruption, kills, concurrent runs and unusable databases: one
line and the right exit code, and nothing already indexed is lost."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support import FakeEmbedder, many_files, slow_index_command

import kbsearch
import kbsearch.index.embedder_slot
from kbsearch.cli import cli
from kbsearch.records import Filters
from kbsearch.store.vectors import Vectors

ENV = dict(os.environ, PYTHONPATH=str(Path(kbsearch.__file__).parents[1]))


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def start_slow(*args: str, stepped: bool = False) -> subprocess.Popen[str]:
    """A child ``kbsearch index ARGS`` pausing 0.2 s after each document or, ``stepped``,
    waiting after each one until :func:`step` lets it go on."""
    return subprocess.Popen(
        slow_index_command(*args, pause=None if stepped else 0.2),
        env=ENV,
        stdin=subprocess.PIPE if stepped else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def step(child: subprocess.Popen[str]) -> None:
    """Lets a stepped child write its next document."""
    assert child.stdin is not None
    child.stdin.write("\n")
    child.stdin.flush()


def wait_batches(child: subprocess.Popen[str], count: int) -> None:
    assert child.stdout is not None
    for _ in range(count):
        assert child.stdout.readline().strip() == "batch"


def consistent(db: Path, vectors: bool = True) -> int:
    """Documents in the index, after checking that every one is whole."""
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    passages = con.execute("SELECT count(*) FROM passages").fetchone()[0]
    for table in ("passages_fts", "public_fts", "vectors")[: 3 if vectors else 2]:
        assert con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == passages, table
    orphans = con.execute(
        "SELECT count(*) FROM documents d WHERE NOT EXISTS"
        " (SELECT 1 FROM passages p WHERE p.document = d.id)"
    ).fetchone()[0]
    assert orphans == 0
    documents = con.execute("SELECT count(*) FROM documents").fetchone()[0]
    con.close()
    return int(documents)


def test_ctrl_c_says_what_was_written_and_a_rerun_resumes(tmp_path: Path) -> None:
    docs, db = many_files(tmp_path / "docs", 20), tmp_path / "kb.db"
    child = start_slow(str(docs), "--db", str(db), "--embedder", "fake:bow", stepped=True)
    for _ in range(2):
        wait_batches(child, 1)
        step(child)
    wait_batches(child, 1)  # the third document is written; the child waits for a step
    child.send_signal(signal.SIGINT)  # so it cannot have finished first, however loaded
    assert child.wait(timeout=60) == 130
    assert child.stderr is not None and child.stdin is not None
    err = child.stderr.read()
    child.stdin.close()
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert line.startswith("interrupted: ") and "re-run the same command to resume" in line
    written = int(line.removeprefix("interrupted: ").split()[0])
    assert written == 3
    assert consistent(db) == written
    done = subprocess.run(
        slow_index_command(str(docs), "--db", str(db), "--embedder", "fake:bow", pause=0),
        env=ENV,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"added {20 - written}, updated 0, unchanged {written}" in done.stdout
    assert consistent(db) == 20


def test_kill_9_during_index_loses_nothing_written(tmp_path: Path) -> None:
    docs, db = many_files(tmp_path / "docs", 20), tmp_path / "kb.db"
    child = start_slow(str(docs), "--db", str(db), "--embedder", "fake:bow")
    wait_batches(child, 4)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=60)
    written = consistent(db)
    assert written >= 4
    with kbsearch.open_kb(db) as kb:
        assert kb.store.database.index_settings() is not None
        assert kb.search("courier parcel", route="lexical", filters=Filters())
    code, out, err = run("index", str(docs), "--db", str(db), "--embedder", "none")
    assert code == 1 and "was built with embedder fake:bow" in err  # the settings survived


def test_two_first_runs_with_different_embedders_leave_one_consistent_index(
    tmp_path: Path,
) -> None:
    docs, db = many_files(tmp_path / "docs", 11), tmp_path / "kb.db"
    first = start_slow(str(docs), "--db", str(db), "--embedder", "fake:bow")
    wait_batches(first, 1)  # the first run has recorded its settings with its first document
    second = start_slow(str(docs), "--db", str(db), "--embedder", "none")
    _, err_second = second.communicate(timeout=120)
    _, err_first = first.communicate(timeout=120)
    assert first.returncode == 0, err_first
    assert second.returncode == 1
    assert "built with embedder fake:bow" in err_second or "another run" in err_second
    assert "Traceback" not in err_second
    assert consistent(db) == 11  # 11 passages, 11 vectors
    with kbsearch.open_kb(db) as kb:
        assert kb.settings["embedder"] == "fake:bow"


def test_db_in_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    docs = many_files(tmp_path / "docs", 1)
    code, _, err = run(
        "index", str(docs), "--db", str(tmp_path / "nope" / "kb.db"), "--embedder", "none"
    )
    assert code == 1 and "does not exist" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "nope").exists()


def test_read_only_index_is_searched_and_refuses_indexing(tmp_path: Path) -> None:
    docs, db = many_files(tmp_path / "docs", 3), tmp_path / "kb.db"
    assert run("index", str(docs), "--db", str(db), "--embedder", "none")[0] == 0
    db.chmod(0o444)
    try:
        code, out, err = run("search", "courier", "--db", str(db), "--route", "lexical")
        assert code == 0, err
        assert "doc000" in out or "Page" in out
        code, _, err = run("index", str(docs), "--db", str(db))
        assert code == 1 and "read-only" in err and len(err.strip().splitlines()) == 1
    finally:
        db.chmod(0o644)


def test_prune_over_an_unlistable_folder_is_one_line_and_keeps_its_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs, db = many_files(tmp_path / "docs", 2), tmp_path / "kb.db"
    many_files(docs / "private", 2, prefix="priv")
    assert run("index", str(docs), "--db", str(db), "--embedder", "none")[0] == 0
    real = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]  # we run as root: simulate chmod 000
        if Path(path) == docs / "private":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, out, err = run("index", str(docs), "--db", str(db), "--prune")
    assert code == 1, err
    assert "removed 0, failed 1" in out
    assert err.strip().splitlines() == [
        f"failed: {docs / 'private'}: cannot list folder: Permission denied"
    ]
    assert consistent(db, vectors=False) == 4


def test_locked_database_is_one_line_after_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs, db = many_files(tmp_path / "docs", 2), tmp_path / "kb.db"
    assert run("index", str(docs), "--db", str(db), "--embedder", "none")[0] == 0
    many_files(tmp_path / "docs", 3)  # one more document to write
    monkeypatch.setenv("KBSEARCH_BUSY_TIMEOUT", "0.5")
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        code, _, err = run("index", str(docs), "--db", str(db))
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert code == 1, err
    assert err.strip().splitlines() == [
        f"error: {db} is locked by another writer (waited 0.5 s); try again when it has"
        " finished, or raise $KBSEARCH_BUSY_TIMEOUT"
    ]
    assert consistent(db, vectors=False) == 2


def fake_embedders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kbsearch.index.embedder_slot, "load_embedder", lambda spec: FakeEmbedder())
    monkeypatch.setattr(kbsearch.index.embedder_slot, "resolve_spec", lambda spec: "fake:bow")


def full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every embedding-cache write finds the disk full (SQLite's page limit at the file's
    current size)."""
    cache = Vectors.cache

    def full(self: Vectors, *args: Any) -> None:
        pages = self.database.connection.execute("PRAGMA page_count").fetchone()[0]
        self.database.connection.execute(f"PRAGMA max_page_count = {pages}")
        cache(self, *args)

    monkeypatch.setattr(Vectors, "cache", full)


def test_full_disk_on_a_new_index_is_one_line_and_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs, db = many_files(tmp_path / "docs", 40), tmp_path / "kb.db"  # 40 vectors: > 1 page
    fake_embedders(monkeypatch)
    full_disk(monkeypatch)
    code, _, err = run("index", str(docs), "--db", str(db))
    assert code == 1
    assert err.strip().splitlines() == [
        f"error: the disk holding {db} is full; nothing was lost: the last write was rolled"
        " back, free some space and re-run to resume"
    ]
    assert not db.exists() and not Path(f"{db}-wal").exists()


def test_full_disk_on_an_index_keeps_every_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs, db = many_files(tmp_path / "docs", 3), tmp_path / "kb.db"
    fake_embedders(monkeypatch)
    assert run("index", str(docs), "--db", str(db))[0] == 0
    many_files(tmp_path / "docs", 40, prefix="more")
    full_disk(monkeypatch)
    code, _, err = run("index", str(docs), "--db", str(db))
    assert code == 1 and "is full; nothing was lost" in err and len(err.splitlines()) == 1
    assert consistent(db) == 3
