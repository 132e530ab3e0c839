"""Deleting and replacing documents on a Qdrant-backed index (both clients): through the
library, the HTTP API and the CLI the version's points leave the collection with its rows, the
remaining points are re-weighted, and later searches answer (a stale point made them 503)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support import FILES, FakeEmbedder, write_files
from support_service import KEYS, STAFF_WRITE, Running, auth

import kbsearch
from kbsearch.backends.qdrant.target import QdrantTarget
from kbsearch.errors import DocumentNotFoundError, PartialWriteError
from kbsearch.filters import Filters
from kbsearch.knowledge_base import KnowledgeBase
from kbsearch.service import create_app

ROUTES = ("lexical", "dense", "hybrid")
LOST = "delivery@v1#lost-parcel"
STAFF = Filters(audience="staff")


@pytest.fixture(params=["local", "edge"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """An index of :data:`support.FILES` with a Qdrant copy of the parametrised kind."""
    docs = write_files(tmp_path / "docs", FILES)
    where = str(tmp_path / request.param)
    target = QdrantTarget(url=where) if request.param == "local" else QdrantTarget(path=where)
    path = tmp_path / "kb.db"
    with kbsearch.open_kb(path, create=True, embedder=FakeEmbedder(), qdrant=target) as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv").ok
    return path


@pytest.fixture
def kb(db: Path) -> Iterator[KnowledgeBase]:
    with kbsearch.open_kb(db, embedder=FakeEmbedder()) as opened:
        assert type(opened.backend).__name__ == "QdrantBackend"
        yield opened


def assert_in_sync(kb: KnowledgeBase) -> None:
    report = kb.backend.verify()  # type: ignore[attr-defined]
    assert report.ok, report.lines()
    assert report.points == kb.store.passages.count()


def test_a_deleted_documents_points_leave_qdrant(kb: KnowledgeBase) -> None:
    assert kb.delete("delivery") == ["1"]
    assert_in_sync(kb)  # no extra point, and none left with stale length statistics
    for route in ROUTES:
        hits = kb.search("lost parcel refund", route=route, k=20, filters=STAFF)
        assert LOST not in {h.passage_id for h in hits}
        assert hits  # goodwill's late parcel


def test_a_delete_runs_no_full_sync(kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    """The version's points go by filter, the rest are re-weighted as needed
    (``sync_deletes``), and the collection is level without reading every point."""

    def full_sync() -> None:
        raise AssertionError("a full sync after a delete")

    monkeypatch.setattr(kb.backend, "sync", full_sync)
    assert kb.delete("delivery") == ["1"]
    monkeypatch.undo()
    assert_in_sync(kb)


def test_deleting_one_version_keeps_the_other(kb: KnowledgeBase) -> None:
    assert kb.delete("returns", "1") == ["1"]
    assert [d.document.version for d in kb.documents("returns")] == ["2"]
    assert_in_sync(kb)


def test_a_public_audience_cannot_delete_or_probe_a_staff_document(kb: KnowledgeBase) -> None:
    with pytest.raises(DocumentNotFoundError, match="no document 'goodwill' for this audience"):
        kb.delete("goodwill", audience="public")
    with pytest.raises(DocumentNotFoundError, match="no document 'nothing' for this audience"):
        kb.delete("nothing", audience="public")
    with pytest.raises(DocumentNotFoundError, match="has no version '9'"):
        kb.delete("returns", "9")
    assert len(kb.documents("goodwill")) == 1


def test_a_failed_qdrant_delete_is_a_partial_write_that_sync_repairs(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    collection = kb.backend.collection  # type: ignore[attr-defined]

    def down(*args: object) -> None:
        raise ConnectionError("injected: Qdrant went away")

    monkeypatch.setattr(collection, "_delete_where", down)
    with pytest.raises(
        PartialWriteError, match=r"still holds the points of 'delivery' version '1'"
    ):
        kb.delete("delivery")
    assert kb.documents("delivery") == []  # SQLite, the system of record, is written
    monkeypatch.undo()
    assert LOST in kb.backend.verify().extra  # type: ignore[attr-defined]
    kb.backend.sync()  # type: ignore[attr-defined]
    assert_in_sync(kb)


@pytest.mark.parametrize("exact", [True, False])
def test_a_point_sqlite_no_longer_holds_is_left_out_of_searches(
    kb: KnowledgeBase, exact: bool
) -> None:
    """As a failed Qdrant delete leaves it (or a write after the reader's transaction began):
    the search answers from what SQLite holds; it failed after five tries. HNSW (``exact``
    False) rescores its candidates from SQLite's vectors, which leaves such a point out."""
    kb.backend.exact = exact  # type: ignore[attr-defined]
    kb.backend.sqlite.delete_document("delivery", "1")  # type: ignore[attr-defined]
    assert LOST in kb.backend.verify().extra  # type: ignore[attr-defined]
    for route in ROUTES:
        hits = kb.search("lost parcel refund", route=route, k=20, filters=STAFF)
        assert hits and LOST not in {h.passage_id for h in hits}


TWO = b"# Memo\n\n## First\n\nparcel one refund.\n\n## Second\n\nparcel two refund.\n"
ONE = b"# Memo\n\n## Only\n\nkettle warranty.\n"


def test_http_delete_and_replace_leave_qdrant_in_step(db: Path, tmp_path: Path) -> None:
    keys = tmp_path / "keys.txt"
    keys.write_text(KEYS, encoding="utf-8")
    app = create_app(db, keys=keys, embedder=FakeEmbedder())
    with Running(app) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        headers = auth(STAFF_WRITE)

        def put(content: bytes) -> httpx.Response:
            files = {"file": ("memo.md", content)}
            data = {"version": "1", "access": "public"}
            return client.put("/documents/memo", files=files, data=data, headers=headers)

        def search_ids(query: str, route: str) -> set[str]:
            params = {"q": query, "route": route, "k": 20}
            found = client.get("/search", params=params, headers=headers)
            assert found.status_code == 200, found.text
            return {h["passage_id"] for h in found.json()["hits"]}

        assert client.delete("/documents/delivery", headers=headers).status_code == 200
        for route in ROUTES:  # before any other write (whose sync repaired the collection)
            assert LOST not in search_ids("lost parcel refund", route)
        assert put(TWO).status_code == 201
        assert put(ONE).json()["passages"] == 1  # replaced by a version with fewer passages
        for route in ROUTES:
            assert not search_ids("parcel one refund", route) & {"memo@v1#first", "memo@v1#second"}
    with kbsearch.open_kb(db, embedder=FakeEmbedder()) as kb:
        assert_in_sync(kb)


def test_the_cli_deletes_from_both_and_says_what_is_missing(db: Path) -> None:
    from click.testing import CliRunner

    from kbsearch.cli import cli

    runner = CliRunner()
    done = runner.invoke(cli, ["delete", "delivery", "--db", str(db)])
    assert done.exit_code == 0 and done.output == "deleted delivery v1\n"
    missing = runner.invoke(cli, ["delete", "delivery", "--db", str(db)])
    assert missing.exit_code == 1
    assert missing.output.strip().splitlines() == [
        "error: no document 'delivery' for this audience"
    ]
    with kbsearch.open_kb(db, embedder=FakeEmbedder()) as kb:
        assert_in_sync(kb)
