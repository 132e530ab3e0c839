"""Heading vectors: texts, embedding once into the cache, cosines aligned with passage rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from support import FILES, FakeEmbedder, write_files

from kbsearch.index.headings import (
    HeadingIndex,
    embed_headings,
    heading_text,
    passage_headings,
    title_counts,
)
from kbsearch.knowledge_base import open_kb


def test_heading_text() -> None:
    assert heading_text("Returns policy", "Return window") == "Returns policy > Return window"
    assert heading_text("Returns policy", "") == "Returns policy"
    assert heading_text("F34355", "", doc_id="F34355") == ""  # an untitled BEIR row
    assert heading_text("", "Late parcel") == "Late parcel"


def test_indexing_embeds_each_heading_once_then_cosines_per_passage(tmp_path: Path) -> None:
    root = write_files(tmp_path / "docs", FILES)
    embedder = FakeEmbedder()
    with open_kb(tmp_path / "kb.db", create=True, embedder=embedder) as kb:
        report = kb.index([root], inventory=root / "inventory.csv")
        store = kb.store
        row_ids, headings = passage_headings(store)
        assert "Delivery > Lost parcel" in headings
        distinct = len(set(h for h in headings if h))
        assert report.headings_embedded == distinct  # the indexer embedded them, once each
        calls = embedder.encoded
        assert embed_headings(store, embedder) == 0 and embedder.encoded == calls
        again = kb.index([root], inventory=root / "inventory.csv")
        assert again.headings_embedded == 0 and embedder.encoded == calls
        index = HeadingIndex.load(store, embedder.name, embedder.dim)
        assert not index.empty and index.vectors.shape == (distinct, embedder.dim)
        query = embedder.encode_queries(["Delivery > Lost parcel"])[0]
        scores = index.scores(query, np.arange(len(row_ids)))
        best = int(np.nanargmax(scores))
        assert headings[best] == "Delivery > Lost parcel"
        assert np.isclose(scores[best], 1.0, atol=1e-5)
        ids = [str(p) for p in index.passage_ids]
        assert index.scores_of(query, ids)[ids[best]] == scores[best]


def test_an_index_without_heading_vectors_gets_them_on_its_next_run(tmp_path: Path) -> None:
    root = write_files(tmp_path / "docs", FILES)
    embedder = FakeEmbedder()
    with open_kb(tmp_path / "kb.db", create=True, embedder=embedder) as kb:
        kb.index([root], inventory=root / "inventory.csv")
        with kb.store.database.transaction() as con:  # as an index built before heading vectors
            con.execute("DELETE FROM embedding_cache WHERE role = 'heading'")
        index = HeadingIndex.load(kb.store, embedder.name, embedder.dim)
        assert index.empty
        assert np.isnan(index.scores(np.ones(embedder.dim), [0, 1])).all()
        generation = kb.store.database.generation()
        report = kb.index([root], inventory=root / "inventory.csv")
        assert report.unchanged and report.headings_embedded > 0
        assert kb.store.database.generation() > generation  # searches reload the heading vectors
        assert not HeadingIndex.load(kb.store, embedder.name, embedder.dim).empty


def test_title_counts_per_audience(tmp_path: Path) -> None:
    root = write_files(tmp_path / "docs", FILES)
    with open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        kb.index([root], inventory=root / "inventory.csv")
        rows = kb.store.database.connection.execute(
            "SELECT d.title, p.access FROM passages p JOIN documents d ON d.id = p.document"
        ).fetchall()
        for audience in ("staff", "public"):
            titles = [t for t, a in rows if audience == "staff" or a == "public"]
            counts = title_counts(kb.store, audience)
            assert counts.passages == len(titles) == counts.titled
            assert counts.titles == len(set(titles))
            assert counts.unique_titled == sum(1 for t in titles if titles.count(t) == 1)
        assert title_counts(kb.store, "public").passages < title_counts(kb.store).passages
        assert kb.backend.title_counts("public") == title_counts(kb.store, "public")
