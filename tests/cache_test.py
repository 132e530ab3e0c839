"""The test session's cache: a temporary mirror of the user's, never written through."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import mirror

from kbsearch.cache import cache_root


def test_tests_and_their_processes_use_a_temporary_cache(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    base = tmp_path_factory.getbasetemp()
    assert cache_root().is_relative_to(base)
    code = "from kbsearch.cache import cache_root; print(cache_root())"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert Path(child.stdout.strip()).is_relative_to(base)
    assert Path(os.environ["KBSEARCH_HOME"]).is_relative_to(base)


def test_the_mirror_reads_the_real_files_and_writes_beside_them(tmp_path: Path) -> None:
    real, into = tmp_path / "real", tmp_path / "into"
    (real / "models" / "m").mkdir(parents=True)
    (real / "models" / ".convert-x").mkdir()
    (real / "models" / "m" / "tokenizer.json").write_text("{}", encoding="utf-8")
    (real / "models" / "m" / "table.npz").write_text("old", encoding="utf-8")
    mirror(real, into)
    assert (into / "models" / "m" / "tokenizer.json").read_text(encoding="utf-8") == "{}"
    assert not (into / "models" / ".convert-x").exists()
    replacement = into / "models" / "m" / ".tmp"
    replacement.write_text("new", encoding="utf-8")
    os.replace(replacement, into / "models" / "m" / "table.npz")  # as the writers do
    (into / "models" / "m" / "pieces.npz").write_text("derived", encoding="utf-8")
    assert (real / "models" / "m" / "table.npz").read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in (real / "models" / "m").iterdir()) == [
        "table.npz",
        "tokenizer.json",
    ]
