"""Writing documents: the first one records the index settings in its own transaction, and
a run built with other settings cannot add to the index."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support import FakeEmbedder, many_files

import kbsearch
from kbsearch.errors import SettingsConflictError
from kbsearch.records import Document, Passage
from kbsearch.store import IndexSettings, Store
from kbsearch.text.analysis import Analyzer

E5 = IndexSettings(embedder="fake:e5", embedder_spec="fake:e5", dim=4)
LEXICAL = IndexSettings()


def write(store: Store, doc_id: str, settings: IndexSettings) -> None:
    text = f"{doc_id} text"
    document = Document(doc_id=doc_id, version="1", title=doc_id, language="en", access="public")
    passage = Passage(f"{doc_id}#1", doc_id, "1", "", "text", text, 0)
    vectors = np.ones((1, settings.dim), dtype=np.float32) if settings.dim else None
    store.documents.write(
        document, [passage], [Analyzer("stem").body(text, "en")], vectors, settings=settings
    )


def test_first_document_records_the_settings_and_others_must_match(tmp_path: Path) -> None:
    first, second = Store(tmp_path / "kb.db", create=True), Store(tmp_path / "kb.db")
    assert first.database.index_settings() is None and second.database.index_settings() is None
    write(first, "a", E5)
    assert second.database.index_settings() == E5  # refreshed: the generation moved
    with pytest.raises(SettingsConflictError, match="embedder 'fake:e5' \\(this run: None\\)"):
        write(second, "b", LEXICAL)
    assert second.passages.count() == 1 and second.vectors.count() == 1
    write(second, "c", E5)
    assert first.vectors.count() == 2


def test_two_first_runs_with_different_embedders_cannot_mix(tmp_path: Path) -> None:
    """Run B (vectors) reads no settings, then run A (lexical only) indexes everything while
    B embeds: B's first write is refused, and the index says "none" with 0 vectors."""
    docs, path = many_files(tmp_path / "docs", 11), tmp_path / "kb.db"
    lexical = kbsearch.open_kb(path, create=True, embedder="none")

    class Racing(FakeEmbedder):
        def encode_passages(self, texts: list[str]) -> np.ndarray:  # type: ignore[override]
            if not lexical.store.passages.count():
                assert lexical.index([docs]).added == 11
            return super().encode_passages(texts)

    vectors = kbsearch.open_kb(path, embedder=Racing(name="fake:e5"))
    with pytest.raises(SettingsConflictError, match="built meanwhile by another run"):
        vectors.index([docs])
    vectors.close()
    settings = lexical.store.database.index_settings()
    assert settings is not None and settings.embedder is None
    assert lexical.store.passages.count() == 11 and lexical.store.vectors.count() == 0
    lexical.close()
