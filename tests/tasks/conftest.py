"""The tasks' tests' shared index: four documents of ``tests/support.py``, lexical only."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import FILES, write_files

from kbsearch.tasks.workflows import index_files


@pytest.fixture
def db(tmp_path: Path) -> Path:
    docs = write_files(tmp_path / "docs", FILES)
    path = tmp_path / "kb.db"
    report = index_files(path, [docs], embedder="none", inventory=docs / "inventory.csv")
    assert report.added == 4 and not report.failed
    return path
