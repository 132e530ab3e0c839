"""The tasks the CLI and the HTTP service share (kbsearch.tasks.workflows)."""

from __future__ import annotations

from pathlib import Path

import pytest

import kbsearch
from kbsearch.errors import IngestError, InvalidArgumentError
from kbsearch.tasks.workflows import backup, index_files


def test_failed_first_index_removes_the_new_file(tmp_path: Path) -> None:
    with pytest.raises(IngestError):
        index_files(tmp_path / "new.db", [tmp_path / "missing"], embedder="none")
    assert list(tmp_path.iterdir()) == []


def test_failed_later_index_keeps_the_file(db: Path, tmp_path: Path) -> None:
    with pytest.raises(IngestError):
        index_files(db, [tmp_path / "missing"])
    with kbsearch.open_kb(db) as kb:
        assert kb.stats()["documents"] == 4


def test_backup_refuses_itself_and_an_existing_file(db: Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="itself"):
        backup(db, db)
    copy = tmp_path / "copy.db"
    backup(db, copy)
    with pytest.raises(InvalidArgumentError, match="--force"):
        backup(db, copy)
    backup(db, copy, force=True)
    with kbsearch.open_kb(copy) as kb:
        assert kb.stats()["documents"] == 4
