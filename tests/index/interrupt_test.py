"""Ctrl-C while `kbsearch index` embeds (a fake embedder raising KeyboardInterrupt in the
middle of a call, as a signal would): the vectors computed before are kept in batches of
CACHE_BATCH, a re-run does not compute them again, and nothing indexed is damaged."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from support import FakeEmbedder, many_files

import kbsearch
from kbsearch.errors import IndexingInterrupted
from kbsearch.index.writer import CACHE_BATCH
from kbsearch.records import Filters
from kbsearch.store.staging import staging_path

PAGES = 150  # one passage each: three embedding steps of 64 (EMBED_BATCH), each two batches


class InterruptedEmbedder(FakeEmbedder):
    """Encodes in batches of 8 inside a call, as a model does, and is interrupted (Ctrl-C)
    when its ``stop_after``-th passage is reached; counts the passages (not the headings,
    embedded after the passages) it encoded in ``passages``."""

    def __init__(self, stop_after: int | None, name: str = "fake:bow") -> None:
        super().__init__(name=name)
        self.stop_after = stop_after
        self.passages = 0

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        parts = []
        for start in range(0, len(texts), 8):
            if self.stop_after is not None and self.passages >= self.stop_after:
                raise KeyboardInterrupt
            batch = texts[start : start + 8]
            self.passages += sum("courier" in t for t in batch)
            parts.append(super().encode_passages(batch))
        return np.concatenate(parts) if parts else np.zeros((0, self.dim), np.float32)


def cached(db: Path) -> int:
    with kbsearch.open_kb(db) as kb:
        row = kb.store.database.connection.execute(
            "SELECT count(*) FROM embedding_cache WHERE role = 'passage'"
        ).fetchone()  # no heading yet: they are embedded after every passage
        return int(row[0])


def test_an_interrupted_run_keeps_every_batch_it_finished(tmp_path: Path) -> None:
    docs, db = many_files(tmp_path / "docs", PAGES), tmp_path / "kb.db"
    stop = CACHE_BATCH + 8  # in the middle of the second batch of the first embedding step
    with (
        kbsearch.open_kb(db, create=True, embedder=InterruptedEmbedder(stop)) as kb,
        pytest.raises(IndexingInterrupted),
    ):
        kb.index([docs])
    assert cached(db) == CACHE_BATCH
    again = InterruptedEmbedder(None)
    with kbsearch.open_kb(db, embedder=again) as kb:
        report = kb.index([docs])
        assert report.ok and report.added == PAGES
        assert again.passages == PAGES - CACHE_BATCH  # the kept batch is not computed again
        assert kb.store.passages.count() == kb.store.vectors.count() == PAGES
        hits = kb.search("parcel number 7 courier", route="dense", filters=Filters())
        assert hits


def test_written_documents_stay_whole_after_an_interruption(tmp_path: Path) -> None:
    docs, db = many_files(tmp_path / "docs", PAGES), tmp_path / "kb.db"
    stop = 64 + CACHE_BATCH + 8  # during the second embedding step: the first one is written
    with kbsearch.open_kb(db, create=True, embedder=InterruptedEmbedder(stop)) as kb:
        with pytest.raises(IndexingInterrupted) as caught:
            kb.index([docs])
        assert caught.value.report.added == 64
        assert kb.store.passages.count() == kb.store.vectors.count() == 64
        assert kb.search("courier", route="hybrid", filters=Filters())
    assert cached(db) == 64 + CACHE_BATCH


def test_an_interrupted_reembed_keeps_its_vectors_for_the_rerun(tmp_path: Path) -> None:
    docs, db = many_files(tmp_path / "docs", PAGES), tmp_path / "kb.db"
    with kbsearch.open_kb(db, create=True, embedder=FakeEmbedder(name="fake:old")) as kb:
        assert kb.index([docs]).added == PAGES
    stop = 64 + 8
    with (
        kbsearch.open_kb(db, embedder=InterruptedEmbedder(stop, name="fake:new")) as kb,
        pytest.raises(IndexingInterrupted),
    ):
        kb.index([docs], reembed=True)
    assert not staging_path(db).exists()
    with kbsearch.open_kb(db) as kb:  # the old index, whole, answers as before
        assert kb.settings["embedder"] == "fake:old"
        assert kb.store.passages.count() == kb.store.vectors.count() == PAGES
    again = InterruptedEmbedder(None, name="fake:new")
    with kbsearch.open_kb(db, embedder=again) as kb:
        assert kb.index([docs], reembed=True).ok
        assert again.passages == PAGES - 64
        assert kb.settings["embedder"] == "fake:new"
