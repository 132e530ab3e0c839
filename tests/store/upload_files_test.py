"""The upload store's journal (issue 22): a live writer's change is never undone by a recovery,
a dead one's is settled by what the index holds, and a start's sweep removes what an older
kbsearch left (temporary folders, folders of documents never indexed)."""

from __future__ import annotations

from pathlib import Path

import pytest

import kbsearch
from kbsearch.present.sources import uploads_folder
from kbsearch.service.uploads import Upload, write_upload
from kbsearch.store.upload_files import INCOMING, PREVIOUS, UploadFiles

OLD = b"# Memo\n\n## Body\n\nmarkerold text.\n"
NEW = b"# Memo\n\n## Body\n\nmarkernew text.\n"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """An index without vectors with one uploaded document, ``memo`` v1 (``memo.md``)."""
    path = tmp_path / "kb.db"
    with kbsearch.open_kb(path, create=True, embedder="none") as kb:
        write_upload(kb, Upload("memo", "memo.md", OLD, access="public"))
    return path


def store_of(db: Path) -> UploadFiles:
    return UploadFiles(uploads_folder(db))


def entries(db: Path) -> list[str]:
    root = Path(str(db) + ".uploads")
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_a_live_writers_change_is_left_alone_by_a_recovery(db: Path) -> None:
    files = store_of(db)
    with kbsearch.open_kb(db) as kb:
        with files.replacing(kb.store.documents, "memo", "1", "memo.md", NEW) as target:
            assert target.read_bytes() == NEW
            # another process (or thread) opening the index meanwhile: nothing to settle
            with kbsearch.open_kb(db) as other:
                assert store_of(db).recover(other.store.documents, sweep=True) == []
            assert target.read_bytes() == NEW
            assert (target.parent / PREVIOUS).read_bytes() == OLD
        # left without indexing it: the index kept the old version, and so does the file
        assert target.read_bytes() == OLD
    assert entries(db) == ["memo", "memo/v1", "memo/v1/memo.md"]


def test_a_dead_writers_journal_is_settled_by_the_index(db: Path) -> None:
    """A journal recorded, the new bytes in place, the index not written: undone."""
    home = Path(str(db) + ".uploads") / "memo" / "v1"
    with kbsearch.open_kb(db) as kb:
        hash_before = kb.store.documents.state("memo", "1")[0]  # type: ignore[index]
    journals = Path(str(db) + ".uploads") / ".journal"
    journals.mkdir()
    (journals / "memo@1").write_text(
        f'{{"before": "{hash_before}", "target": "memo.md", "had_target": true}}'
    )
    (home / PREVIOUS).hardlink_to(home / "memo.md")
    (home / INCOMING).write_bytes(b"half of a")
    (home / "memo.md").unlink()
    (home / "memo.md").write_bytes(NEW)
    with kbsearch.open_kb(db) as kb:
        assert store_of(db).recover(kb.store.documents) == ["memo@1"]
    assert (home / "memo.md").read_bytes() == OLD
    assert entries(db) == ["memo", "memo/v1", "memo/v1/memo.md"]


def test_a_journal_cut_short_changed_nothing_and_goes(db: Path) -> None:
    journals = Path(str(db) + ".uploads") / ".journal"
    journals.mkdir()
    (journals / "memo@1").write_text('{"before": "ab')
    (journals / "new@1").write_text("")
    with kbsearch.open_kb(db) as kb:
        assert store_of(db).recover(kb.store.documents) == ["memo@1", "new@1"]
    assert entries(db) == ["memo", "memo/v1", "memo/v1/memo.md"]


def test_any_writer_opening_the_index_recovers(db: Path, tmp_path: Path) -> None:
    """``KnowledgeBase.index`` (the CLI's ``kbsearch index``) settles a dead upload first."""
    home = Path(str(db) + ".uploads") / "orphan" / "v1"
    home.mkdir(parents=True)
    (home / "orphan.md").write_bytes(NEW)
    journals = Path(str(db) + ".uploads") / ".journal"
    journals.mkdir()
    intent = '{"before": null, "target": "orphan.md", "had_target": false}'
    (journals / "orphan@1").write_text(intent)
    other = tmp_path / "other.md"
    other.write_text("# Other\n\n## Part\n\nother text.\n")
    with kbsearch.open_kb(db) as kb:
        assert kb.index([other]).added == 1
    assert entries(db) == ["memo", "memo/v1", "memo/v1/memo.md"]


def test_a_starts_sweep_removes_what_an_older_kbsearch_left(db: Path) -> None:
    root = Path(str(db) + ".uploads")
    (root / "memo" / "tmpk2x9_q").mkdir()  # f261cf6's temporary folder, with the old copy
    (root / "memo" / "tmpk2x9_q" / "previous").write_bytes(OLD)
    (root / "memo" / "v2").mkdir()  # a version never indexed
    (root / "memo" / "v2" / "memo.md").write_bytes(NEW)
    (root / "gone" / "v1").mkdir(parents=True)  # a document never indexed
    (root / "gone" / "v1" / "gone.md").write_bytes(NEW)
    with kbsearch.open_kb(db) as kb:
        assert store_of(db).recover(kb.store.documents) == []  # journals only: none
        assert store_of(db).recover(kb.store.documents, sweep=True) == ["gone@1", "memo@2"]
    assert entries(db) == ["memo", "memo/v1", "memo/v1/memo.md"]
