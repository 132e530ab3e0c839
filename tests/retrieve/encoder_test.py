"""The query encoder: a shared least-recently-used cache of query vectors, and encodings that
run side by side only for an embedder that says it is thread-safe."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from support import FakeEmbedder

from kbsearch.retrieve import encoder as encoder_module
from kbsearch.retrieve.encoder import QueryEncoder


def _encoder(embedder: FakeEmbedder) -> QueryEncoder:
    return QueryEncoder(lambda: embedder, lambda: True, Path("kb.db"))


def test_the_cache_drops_the_least_recently_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoder_module, "CACHE_SIZE", 2)
    embedder = FakeEmbedder()
    encoder = _encoder(embedder)
    first = encoder.vector("refund window")
    encoder.vector("late parcel")
    assert encoder.vector("refund window") is first  # used again: now the most recent
    encoder.vector("gift card")  # drops "late parcel", the least recently used
    calls = embedder.calls
    assert encoder.vector("refund window") is first and embedder.calls == calls
    encoder.vector("late parcel")
    assert embedder.calls == calls + 1


class Gated(FakeEmbedder):
    """Waits inside ``encode_queries`` until two threads are in it at once (or times out)."""

    def __init__(self, thread_safe: bool) -> None:
        super().__init__()
        self.thread_safe = thread_safe
        self.inside = 0
        self.most = 0
        self.both = threading.Event()
        self._count = threading.Lock()

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        with self._count:
            self.inside += 1
            self.most = max(self.most, self.inside)
            if self.inside == 2:
                self.both.set()
        self.both.wait(0.5 if not self.thread_safe else 30)
        with self._count:
            self.inside -= 1
        return super().encode_queries(texts)


@pytest.mark.parametrize("thread_safe", [True, False])
def test_only_a_thread_safe_embedder_encodes_two_queries_at_once(thread_safe: bool) -> None:
    embedder = Gated(thread_safe)
    encoder = _encoder(embedder)
    threads = [threading.Thread(target=encoder.vector, args=(q,)) for q in ("one", "two")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert embedder.most == (2 if thread_safe else 1)


class Recording(FakeEmbedder):
    """Keeps the texts it was asked to encode."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return super().encode_queries(texts)


@pytest.mark.parametrize("mark", ["\u00ad", "\u200b", "\u2060"])
def test_the_dense_route_encodes_the_query_cleaned_as_documents_are(mark: str) -> None:
    embedder = Recording()
    encoder = _encoder(embedder)
    assert np.array_equal(encoder.vector(f"pass{mark}word"), encoder.vector("password"))
    assert embedder.texts == ["password"]  # one encoding: the cleaned query, cached
