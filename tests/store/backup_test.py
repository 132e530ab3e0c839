"""A backup holds the upload store too (kbsearch.store.backup): the copy's uploaded documents
name their files in the copy's own uploads folder, so the copy keeps them when the original
and its folder are gone; a failed backup leaves nothing half written; a file an upload
replaced after the snapshot is never copied beside the older index."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import kbsearch
import kbsearch.store.backup as backup_module
from kbsearch.cli.commands import cli
from kbsearch.errors import InvalidArgumentError, StorageError
from kbsearch.service.uploads import Upload, write_upload
from kbsearch.tasks.workflows import backup

MEMO = b"# Memo\n\n## Body\n\nThe markerfirst word is in the uploaded memo.\n"
NEWER = b"# Memo\n\n## Body\n\nThe markersecond word replaced it.\n"
NOTE = b"# Note\n\n## Body\n\nThe markernote word.\n"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A lexical index of one folder file and two uploads (``memo``, ``team/note``)."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "faq.md").write_text("---\naccess: public\n---\n# FAQ\n\n## Hours\n\nNine to five.\n")
    path = tmp_path / "live" / "kb.db"
    path.parent.mkdir()
    with kbsearch.open_kb(path, create=True, embedder="none") as kb:
        assert kb.index([corpus]).added == 1
        write_upload(kb, Upload("memo", "memo.md", MEMO, access="public"))
        write_upload(kb, Upload("team/note", "note.md", NOTE, access="public"))
    return path


def markers(db: Path, doc_id: str) -> list[str]:
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT text FROM passages WHERE doc_id = ?", (doc_id,))
        return sorted({w for (t,) in rows for w in t.split() if w.startswith("marker")})
    finally:
        con.close()


def files_under(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_a_backup_copies_the_uploads_and_the_copy_keeps_them_without_the_original(
    db: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "safe" / "copy.db"
    copy.parent.mkdir()
    done = backup(db, copy)
    assert (done.documents, done.uploads, done.missing) == (3, 2, ())
    assert done.upload_bytes == len(MEMO) + len(NOTE)
    uploads = Path(f"{copy}.uploads")
    assert done.uploads_folder == str(uploads.resolve())
    assert files_under(uploads) == {"memo/v1/memo.md": MEMO, "team%2Fnote/v1/note.md": NOTE}
    assert not [p for p in copy.parent.iterdir() if p.name.endswith(".partial")]
    shutil.rmtree(db.parent)  # the original is lost: the copy stands alone
    corpus = tmp_path / "corpus"
    with kbsearch.open_kb(copy, embedder="none") as kb:
        sources = {d.document.doc_id: d.document.source for d in kb.documents()}
        assert sources["memo"] == str(uploads.resolve() / "memo" / "v1" / "memo.md")
        report = kb.index([corpus], prune=True)  # a re-index with prune keeps the uploads
        assert report.removed == 0 and report.ok
        assert sorted(d.document.doc_id for d in kb.documents()) == ["faq", "memo", "team/note"]
        hit = kb.search("markerfirst", route="lexical", k=1)[0]
        shown = kb.contents.cited([hit])[("memo", "1")].source
        assert shown == "uploads/memo/v1/memo.md"  # as the original showed it
        write_upload(kb, Upload("memo", "memo.md", NEWER, access="public"))  # writes its own
    assert files_under(uploads)["memo/v1/memo.md"] == NEWER
    assert markers(copy, "memo") == ["markersecond"]


def test_restoring_is_a_backup_of_the_copy(db: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.db"
    backup(db, copy)
    with kbsearch.open_kb(db, embedder="none") as kb:  # then the original goes wrong
        write_upload(kb, Upload("memo", "memo.md", NEWER, access="public"))
    done = backup(copy, db, force=True)
    assert done.uploads == 2
    assert files_under(Path(f"{db}.uploads"))["memo/v1/memo.md"] == MEMO
    with kbsearch.open_kb(db, embedder="none") as kb:
        sources = {d.document.doc_id: d.document.source for d in kb.documents()}
    assert sources["memo"] == str(Path(f"{db}.uploads").resolve() / "memo" / "v1" / "memo.md")
    assert markers(db, "memo") == ["markerfirst"]


def test_a_failed_backup_leaves_no_half_copy_and_keeps_the_old_one(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "copy.db"
    backup(db, copy)
    before = copy.read_bytes(), files_under(Path(f"{copy}.uploads"))
    with kbsearch.open_kb(db, embedder="none") as kb:
        write_upload(kb, Upload("memo", "memo.md", NEWER, access="public"))
    copied: list[Path] = []
    real = backup_module._copy_synced

    def failing(source: Path, place: Path) -> int | None:
        if copied:
            raise OSError(28, "No space left on device")
        copied.append(place)
        return real(source, place)

    monkeypatch.setattr(backup_module, "_copy_synced", failing)
    with pytest.raises(StorageError, match="cannot write a backup to .*No space left"):
        backup(db, copy, force=True)
    assert copied  # it failed half-way through the uploads
    assert (copy.read_bytes(), files_under(Path(f"{copy}.uploads"))) == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    fresh = tmp_path / "fresh.db"
    copied.clear()
    with pytest.raises(StorageError):
        backup(db, fresh)
    assert not fresh.exists() and not Path(f"{fresh}.uploads").exists()


def test_an_upload_replaced_after_the_snapshot_is_copied_with_its_own_index(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file on disk would be the new upload's while the SQLite copy holds the old one:
    the backup takes a new snapshot."""
    real = backup_module._relocate
    snapshots: list[int] = []

    def relocate_then_upload(*args: Any) -> Any:
        found = real(*args)
        snapshots.append(1)
        if len(snapshots) == 1:
            with kbsearch.open_kb(db, embedder="none") as kb:
                write_upload(kb, Upload("memo", "memo.md", NEWER, access="public"))
        return found

    monkeypatch.setattr(backup_module, "_relocate", relocate_then_upload)
    copy = tmp_path / "copy.db"
    done = backup(db, copy)
    assert len(snapshots) == 2 and done.uploads == 2
    assert files_under(Path(f"{copy}.uploads"))["memo/v1/memo.md"] == NEWER
    assert markers(copy, "memo") == ["markersecond"]


def test_a_backup_names_a_missing_upload_and_copies_the_rest(db: Path, tmp_path: Path) -> None:
    (Path(f"{db}.uploads") / "memo" / "v1" / "memo.md").unlink()
    result = CliRunner().invoke(cli, ["backup", str(tmp_path / "copy.db"), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "3 document versions; 1 uploaded file, " in result.stdout
    assert "missing from the upload store, not copied: memo@1" in result.stderr


def test_the_cli_says_what_a_backup_copied(db: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.db"
    result = CliRunner().invoke(cli, ["backup", str(copy), "--db", str(db)])
    assert result.exit_code == 0, result.output
    size = f"{len(MEMO) + len(NOTE):,}"
    assert result.stdout == (
        f"backed up {db} to {copy}: 3 document versions; 2 uploaded files, {size} bytes,"
        f" to {copy}.uploads\n"
    )


def test_a_backup_never_replaces_a_file_that_is_no_index(db: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    with pytest.raises(InvalidArgumentError, match="not a SQLite index"):
        backup(db, notes, force=True)
    assert notes.read_text() == "my notes" and not Path(f"{notes}.uploads").exists()


def test_an_upload_a_crash_cut_short_is_settled_before_its_file_is_copied(
    db: Path, tmp_path: Path
) -> None:
    """What ``kill -9`` mid-upload leaves (the journal, the new bytes in place, the old ones
    as ``.previous``, the index at the old version): the backup settles it first and copies the
    file the index holds, not the one on disk."""
    from kbsearch.store.upload_files import JOURNALS, PREVIOUS, Intent

    home = Path(f"{db}.uploads") / "memo" / "v1"
    with kbsearch.open_kb(db, embedder="none") as kb:
        state = kb.store.documents.state("memo", "1")
    assert state is not None
    journals = home.parent.parent / JOURNALS
    journals.mkdir()
    (journals / "memo@1").write_bytes(Intent(state[0], "memo.md", True).dumps())
    os.link(home / "memo.md", home / PREVIOUS)
    (home / "memo.md").unlink()
    (home / "memo.md").write_bytes(NEWER)  # the dead writer's bytes, never indexed
    copy = tmp_path / "copy.db"
    assert backup(db, copy).uploads == 2
    assert files_under(Path(f"{copy}.uploads"))["memo/v1/memo.md"] == MEMO
    assert files_under(home) == {"memo.md": MEMO} and not journals.exists()


def test_a_store_this_process_may_not_write_is_copied_unclaimed(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only index (read-only media) is backed up as before, its uploads with it: no
    journal is made there."""
    uploads = Path(f"{db}.uploads").resolve()
    real = os.access

    def access(path: Any, mode: int, **kwargs: Any) -> bool:
        if Path(path) == uploads and mode == os.W_OK:
            return False  # as on read-only media
        return real(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", access)
    made: list[str] = []
    real_mkdir = Path.mkdir

    def mkdir(self: Path, *args: Any, **kwargs: Any) -> None:
        made.append(str(self))
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    copy = tmp_path / "copy.db"
    assert backup(db, copy).uploads == 2
    assert not [m for m in made if m.startswith(str(uploads))]
    assert files_under(Path(f"{copy}.uploads"))["memo/v1/memo.md"] == MEMO


def test_a_backup_never_replaces_an_uploads_folder_it_did_not_write(
    db: Path, tmp_path: Path
) -> None:
    """A folder named DEST.uploads beside no DEST is someone's files: it was deleted without
    --force; with an existing DEST (a backup's), only --force replaces both."""
    copy = tmp_path / "y.db"
    mine = tmp_path / "y.db.uploads" / "mine" / "file.txt"
    mine.parent.mkdir(parents=True)
    mine.write_text("precious")
    with pytest.raises(InvalidArgumentError, match=r"y\.db\.uploads exists; pass --force"):
        backup(db, copy)
    with pytest.raises(InvalidArgumentError, match="exists beside no index; not replacing it"):
        backup(db, copy, force=True)
    result = CliRunner().invoke(cli, ["backup", str(copy), "--db", str(db)])
    assert result.exit_code == 1 and "pass --force" in result.output, result.output
    assert mine.read_text() == "precious" and not copy.exists()
    shutil.rmtree(mine.parent.parent)
    backup(db, copy)  # a backup's own pair: replaced with --force only
    with pytest.raises(InvalidArgumentError, match=r"y\.db exists; pass --force"):
        backup(db, copy)
    assert backup(db, copy, force=True).uploads
