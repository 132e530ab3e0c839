"""Heading vectors: texts, embedding once into the cache, cosines aligned with passage rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from support import FILES, FakeEmbedder, write_files

from kbsearch.knowledge_base import open_kb
from kbsearch.titles import HeadingIndex, embed_headings, heading_text, passage_headings


def test_heading_text() -> None:
    assert heading_text("Returns policy", "Return window") == "Returns policy > Return window"
    assert heading_text("Returns policy", "") == "Returns policy"
    assert heading_text("F34355", "", doc_id="F34355") == ""  # an untitled BEIR row
    assert heading_text("", "Late parcel") == "Late parcel"


def test_embed_once_then_cosines_per_passage(tmp_path: Path) -> None:
    root = write_files(tmp_path / "docs", FILES)
    embedder = FakeEmbedder()
    with open_kb(tmp_path / "kb.db", create=True, embedder=embedder) as kb:
        kb.index([root], inventory=root / "inventory.csv")
        store = kb.store
        row_ids, headings = passage_headings(store)
        assert "Delivery > Lost parcel" in headings
        distinct = len(set(h for h in headings if h))
        assert embed_headings(store, embedder) == distinct
        calls = embedder.encoded
        assert embed_headings(store, embedder) == 0 and embedder.encoded == calls
        index = HeadingIndex.load(store, embedder.name, embedder.dim)
        assert not index.empty and index.vectors.shape == (distinct, embedder.dim)
        query = embedder.encode_queries(["Delivery > Lost parcel"])[0]
        scores = index.scores(query, np.arange(len(row_ids)))
        best = int(np.nanargmax(scores))
        assert headings[best] == "Delivery > Lost parcel"
        assert np.isclose(scores[best], 1.0, atol=1e-5)


def test_no_heading_vectors_scores_nan(tmp_path: Path) -> None:
    root = write_files(tmp_path / "docs", FILES)
    embedder = FakeEmbedder()
    with open_kb(tmp_path / "kb.db", create=True, embedder=embedder) as kb:
        kb.index([root], inventory=root / "inventory.csv")
        index = HeadingIndex.load(kb.store, embedder.name, embedder.dim)
        assert index.empty
        assert np.isnan(index.scores(np.ones(embedder.dim), [0, 1])).all()
