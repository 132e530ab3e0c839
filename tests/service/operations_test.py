"""The service's operations on a knowledge base, below HTTP: what only a caller that HTTP
cannot produce reaches (a write key is always staff, so a public deletion is tested here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import FakeEmbedder

import kbsearch
from kbsearch.service import operations as ops


@pytest.mark.parametrize("version", ["9", "1", None])
def test_deleting_a_hidden_document_is_the_same_404_as_a_missing_one(
    kb_file: Path, version: str | None
) -> None:
    with kbsearch.open_kb(kb_file, embedder=FakeEmbedder()) as kb:
        with pytest.raises(ops.DocumentNotFoundError) as hidden:
            ops.delete(kb, "public", "goodwill", version)
        with pytest.raises(ops.DocumentNotFoundError) as missing:
            ops.delete(kb, "public", "nothing", version)
        assert str(hidden.value) == "no document 'goodwill' for this audience"
        assert str(missing.value) == "no document 'nothing' for this audience"
        assert [d.document.version for d in kb.documents() if d.document.doc_id == "goodwill"] == [
            "1"
        ]


def test_a_missing_version_of_a_visible_document_is_named(kb_file: Path) -> None:
    with kbsearch.open_kb(kb_file, embedder=FakeEmbedder()) as kb:
        with pytest.raises(
            ops.DocumentNotFoundError, match="document 'returns' has no version '9'"
        ):
            ops.delete(kb, "public", "returns", "9")
        assert ops.delete(kb, "staff", "goodwill", "1") == ["1"]


def test_a_served_search_reads_its_passages_once(kb_file: Path) -> None:
    """The HTTP search (hits, decision, labels, snippets) through the engine that serves it:
    the hits' rows and the abstention stage's texts come from one read of the passages, and
    no statement re-reads the generation or lists every document."""
    from kbsearch.service.engine import Engine

    engine = Engine(kb_file, embedder=FakeEmbedder())
    try:
        args = ops.SearchArgs("is a lost parcel refunded", k=3)
        engine.read(lambda kb: ops.search(kb, "public", args, ops.Limits()))  # warm
        seen: list[str] = []
        with engine.kb.store.database.tracing(seen.append):
            page = engine.read(lambda kb: ops.search(kb, "public", args, ops.Limits()))
    finally:
        engine.close()
    assert page["hits"] and page["answerable"] is not None
    own = [s for s in seen if not s.startswith("--")]
    assert sum(" FROM passages p WHERE p.passage_id IN " in s for s in own) == 1, own
    assert not any("FROM documents d ORDER BY" in s for s in own), own
    assert len(own) <= 4, own


def test_a_served_search_encodes_its_query_once(
    kb_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's snippets (a dense-only hit's closest sentence) reuse the search's query
    vector: the query encoder is read once per served search."""
    from kbsearch.retrieve.encoder import QueryEncoder

    reads = []
    vector = QueryEncoder.vector
    monkeypatch.setattr(QueryEncoder, "vector", lambda self, q: reads.append(q) or vector(self, q))
    with kbsearch.open_kb(kb_file, embedder=FakeEmbedder()) as kb:
        args = ops.SearchArgs("zebra parcel", k=20)
        ops.search(kb, "public", args, ops.Limits())  # warm
        reads.clear()
        page = ops.search(kb, "public", args, ops.Limits())
    assert reads == ["zebra parcel"]
    assert any(not h["snippet"]["marks"] for h in page["hits"])  # a dense-only snippet


def whole_table_reads(statements: list[str]) -> list[str]:
    """The statements that read the documents table without naming the rows they read (a
    key, ids or sources): each costs O(documents)."""
    reads = [s for s in statements if "FROM documents" in s and "SELECT" in s]
    return [s for s in reads if not (" IN (" in s or "doc_id = '" in s)]


@pytest.mark.parametrize("access", ["public", "staff"])
def test_a_put_reads_only_the_documents_it_writes(kb_file: Path, access: str) -> None:
    """A served write (its privacy check, the write, the answer's stored metadata) reads the
    versions of its own doc id, not every document: at 1M passages the whole table cost
    3.4 s of CPU a PUT."""
    from kbsearch.service.uploads import Upload, hides_public, write_upload

    content = b"# Delivery\n\n## Body\n\nNew rules.\n"
    upload = Upload("delivery", "delivery.md", content, access=access)
    with kbsearch.open_kb(kb_file, embedder=FakeEmbedder()) as kb:
        seen: list[str] = []
        with kb.store.database.tracing(seen.append):
            hides = hides_public(kb, upload)
            result = write_upload(kb, upload)
    assert hides is (access == "staff")  # "delivery" has a public version
    assert (result.status, result.passages, result.metadata["access"]) == ("updated", 1, access)
    assert seen and not whole_table_reads(seen), whole_table_reads(seen)


def test_a_document_and_its_deletion_read_only_that_document(kb_file: Path) -> None:
    with kbsearch.open_kb(kb_file, embedder=FakeEmbedder()) as kb:
        seen: list[str] = []
        with kb.store.database.tracing(seen.append):
            shown = ops.document(kb, "public", "returns")
            removed = ops.delete(kb, "staff", "goodwill", None)
    assert [v["version"] for v in shown["versions"]] and removed == ["1"]
    assert not whole_table_reads(seen), whole_table_reads(seen)


@pytest.mark.parametrize(("audience", "documents", "passages"), [("public", 3, 4), ("staff", 4, 5)])
def test_the_metrics_and_the_pages_languages_read_the_kept_counts(
    kb_file: Path, audience: str, documents: int, passages: int
) -> None:
    """``/metrics``' counts and the search page's language choices come from the counts each
    write keeps (:mod:`kbsearch.store.counts`), not from a pass over every document."""
    with kbsearch.open_kb(kb_file, embedder=FakeEmbedder()) as kb:
        seen: list[str] = []
        with kb.store.database.tracing(seen.append):
            figures = ops.index_figures(kb, audience)
            languages = ops.document_languages(kb, audience)
        listed = [d for d in kb.documents() if audience == "staff" or d.document.access == "public"]
        generation = kb.store.database.generation()
    assert figures == (generation, documents, passages)
    assert (documents, passages) == (len(listed), sum(d.passages for d in listed))
    assert languages == ["en"]
    assert not any("FROM documents" in s for s in seen), seen
