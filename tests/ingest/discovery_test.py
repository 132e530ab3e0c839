"""Which files an index run reads; folders that cannot be listed are reported, not skipped
silently (issue 14 item 7). We run as root, so an unreadable folder is simulated by making
``os.scandir`` (what the walk lists folders with) refuse it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import write_files

from kbsearch.errors import IngestError
from kbsearch.ingest.discovery import discover, expand_paths


def deny(monkeypatch: pytest.MonkeyPatch, *folders: Path) -> None:
    real = os.scandir
    refused = {str(f) for f in folders}

    def scandir(path):  # type: ignore[no-untyped-def]
        if str(path) in refused:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


def test_files_hidden_and_unsupported(tmp_path: Path) -> None:
    root = write_files(
        tmp_path / "docs",
        {
            "a.md": "# A\n",
            "sub/b.md": "# B\n",
            "sub/.draft.md": "# D\n",
            ".git/c.md": "# C\n",
            "~$x.docx": "",
            "notes.xyz": "",
        },
    )
    found = discover([root])
    assert list(found.files.values()) == ["a", "sub/b"]
    assert [p.name for p in found.unsupported] == ["notes.xyz"]
    assert found.unlisted == ()


def test_an_unlistable_folder_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_files(tmp_path / "docs", {"a.md": "# A\n", "locked/b.md": "# B\n"})
    deny(monkeypatch, root / "locked")
    found = discover([root])
    assert list(found.files.values()) == ["a"]
    assert found.unlisted == ((root / "locked", "cannot list folder: Permission denied"),)


def test_an_unlistable_root_says_why_nothing_is_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_files(tmp_path / "docs", {"a.md": "# A\n"})
    deny(monkeypatch, root)
    with pytest.raises(IngestError, match="cannot list folder: Permission denied"):
        expand_paths([root])


def test_a_file_that_cannot_be_looked_at_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_files(tmp_path / "docs", {"a.md": "# A\n", "b.md": "# B\n"})
    real = Path.stat

    def stat(path: Path, **kwargs):  # type: ignore[no-untyped-def]
        if path.name == "b.md":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, **kwargs)

    monkeypatch.setattr(Path, "stat", stat)
    found = discover([root])
    assert list(found.files.values()) == ["a"]
    assert found.unlisted == ((root / "b.md", "cannot read: Permission denied"),)


def test_a_doc_id_from_an_nfd_file_name_is_nfc(tmp_path: Path) -> None:
    """issue 22: a macOS-made tree names files in NFD; the doc id a path gives is NFC, so
    that it is the id a user types (and an inventory names)."""
    import unicodedata

    nfc = unicodedata.normalize("NFC", "rh/réglement-intérieur")
    (tmp_path / "rh").mkdir()
    (tmp_path / "rh" / (unicodedata.normalize("NFD", "réglement-intérieur") + ".md")).write_text(
        "# R\n\ntext\n"
    )
    assert list(discover([tmp_path]).files.values()) == [nfc]
