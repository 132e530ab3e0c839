"""Shared fixtures; the helpers behind them live in ``support.py``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support import FakeEmbedder, LengthReranker

from kbsearch.rerank import rerankers


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def fake_reranker(monkeypatch: pytest.MonkeyPatch) -> Iterator[LengthReranker]:
    """Rerankers ``fake`` (by text length; the one returned) and ``slow`` (the same, 50 ms
    a pair) registered for one test; loaded ones are forgotten after it."""
    fake, slow = LengthReranker(), LengthReranker(pause=0.05)
    monkeypatch.setattr(rerankers, "RERANKERS", dict(rerankers.RERANKERS))
    rerankers.register_reranker("fake", lambda argument: fake, "by text length")
    rerankers.register_reranker("slow", lambda argument: slow, "by length, 50 ms a pair")
    yield fake
    rerankers.forget_rerankers()
