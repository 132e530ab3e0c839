"""An index built with a Qdrant target records it: later opens search through Qdrant without
being told, indexing runs sync the copy, and the results match the embedded backend's."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from support import FILES, FakeEmbedder, write_files

import kbsearch
from kbsearch.backends.qdrant.backend import QdrantBackend
from kbsearch.backends.qdrant.target import QdrantTarget
from kbsearch.backends.sqlite import SqliteBackend
from kbsearch.errors import InvalidArgumentError
from kbsearch.filters import Filters


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return write_files(tmp_path / "docs", FILES)


def test_a_recorded_edge_target_is_used_by_later_opens(tmp_path: Path, docs: Path) -> None:
    target = QdrantTarget(path=str(tmp_path / "edge"))
    with kbsearch.open_kb(
        tmp_path / "kb.db", create=True, embedder=FakeEmbedder(), qdrant=target
    ) as kb:
        assert isinstance(kb.backend, QdrantBackend)
        kb.index([docs], inventory=docs / "inventory.csv")
        assert kb.backend.verify().ok
    with kbsearch.open_kb(tmp_path / "kb.db", embedder=FakeEmbedder()) as kb:
        assert isinstance(kb.backend, QdrantBackend)
        assert kb.backend.target == target
        public = Filters(as_of=date(2026, 6, 1))
        for route in ("lexical", "dense", "hybrid"):
            hits = kb.search("late parcel goodwill credit", k=10, route=route, filters=public)
            assert hits and not any(h.doc_id == "goodwill" for h in hits)
        staff = Filters(audience="staff", as_of=date(2026, 6, 1))
        hits = kb.search("goodwill credit", k=3, route="lexical", filters=staff)
        assert hits[0].doc_id == "goodwill"
        # as-of picks the version in force, through Qdrant's filter
        old = kb.search(
            "return window", k=1, route="dense", filters=Filters(as_of=date(2025, 6, 1))
        )
        new = kb.search(
            "return window", k=1, route="dense", filters=Filters(as_of=date(2026, 6, 1))
        )
        assert (old[0].version, new[0].version) == ("1", "2")


def test_same_hits_as_the_embedded_backend(tmp_path: Path, docs: Path) -> None:
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=FakeEmbedder()) as kb:
        kb.index([docs], inventory=docs / "inventory.csv")
        assert isinstance(kb.backend, SqliteBackend)
        embedded = {
            q: [
                h.passage_id
                for h in kb.search(q, k=4, route="dense", filters=Filters(audience="staff"))
            ]
            for q in ("return window", "late parcel", "goodwill amount")
        }
    target = QdrantTarget(url=":memory:")
    with kbsearch.open_kb(tmp_path / "kb.db", embedder=FakeEmbedder(), qdrant=target) as kb:
        assert isinstance(kb.backend, QdrantBackend)
        report, changed = kb.backend.sync()  # an existing index copied to Qdrant
        assert changed == report.expected > 0
        for q, ids in embedded.items():
            hits = kb.search(q, k=4, route="dense", filters=Filters(audience="staff"))
            assert [h.passage_id for h in hits] == ids


def test_target_needs_exactly_one_place() -> None:
    with pytest.raises(InvalidArgumentError):
        QdrantTarget()
    with pytest.raises(InvalidArgumentError):
        QdrantTarget(url="http://localhost:6333", path="/tmp/x")
    with pytest.raises(InvalidArgumentError):
        QdrantTarget(url="http://localhost:6333", hnsw_ef=0)
    with pytest.raises(InvalidArgumentError, match="write consistency"):
        QdrantTarget(url="http://q:6333", cluster=(6, 2, 3))
    t = QdrantTarget(url="http://q:6333", exact=False, hnsw_ef=128, cluster=(6, 2, 2))
    assert QdrantTarget.from_settings(t.settings()) == t
