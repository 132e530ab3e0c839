"""A Qdrant Edge index's backup and a missing Edge folder (a breaker's findings): a backup is
a SQLite index that shares no Qdrant copy with the original (a delete in the copy removed the
original's points), and an index whose Edge folder is gone refuses to search instead of
creating an empty shard that finds nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import FILES, FakeEmbedder, write_files

import kbsearch
from kbsearch.backends.qdrant.target import QdrantTarget
from kbsearch.cli import cli
from kbsearch.errors import BackendUnavailableError
from kbsearch.filters import Filters

STAFF = Filters(audience="staff")
QUERY = "lost parcel refund"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    docs = write_files(tmp_path / "docs", FILES)
    path = tmp_path / "kb.db"
    target = QdrantTarget(path=str(tmp_path / "edge"))
    with kbsearch.open_kb(path, create=True, embedder=FakeEmbedder(), qdrant=target) as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv").ok
    return path


def hits(db: Path) -> list[str]:
    with kbsearch.open_kb(db, embedder=FakeEmbedder()) as kb:
        return [h.passage_id for h in kb.search(QUERY, route="lexical", k=20, filters=STAFF)]


def test_a_backup_shares_no_qdrant_copy_with_the_original(db: Path, tmp_path: Path) -> None:
    before = hits(db)
    copy = tmp_path / "copy.db"
    result = CliRunner().invoke(cli, ["backup", str(copy), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "does not share this index's Qdrant copy" in result.output
    with kbsearch.open_kb(copy, embedder=FakeEmbedder()) as kb:
        assert type(kb.backend).__name__ == "SqliteBackend"
        assert kb.delete("delivery") == ["1"]
    assert before and hits(db) == before  # the original's points are all there
    with kbsearch.open_kb(db, embedder=FakeEmbedder()) as kb:
        assert kb.backend.verify().ok  # type: ignore[attr-defined]


def test_a_missing_edge_folder_is_refused_not_created(db: Path, tmp_path: Path) -> None:
    edge = tmp_path / "edge"
    shutil.move(edge, tmp_path / "edge.moved")
    with pytest.raises(BackendUnavailableError, match="Qdrant Edge folder is missing"):
        hits(db)
    assert not edge.exists()
    result = CliRunner().invoke(cli, ["search", QUERY, "--db", str(db)])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1, result.output
    assert str(tmp_path) not in result.stderr  # no server path in the message
    with kbsearch.open_kb(db, embedder=FakeEmbedder(), qdrant=QdrantTarget(path=str(edge))) as kb:
        kb.backend.sync()  # type: ignore[attr-defined]
    assert hits(db)
