"""Shared fixtures; the helpers behind them live in ``support.py``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import FakeEmbedder, LengthReranker, mirror

from kbsearch.cache import cache_root
from kbsearch.rerank import rerankers

# Where tests write what kbsearch derives per machine, and the demo's default folder.
ISOLATED = ("KBSEARCH_CACHE", "KBSEARCH_HOME")


@pytest.fixture(scope="session", autouse=True)
def isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``$KBSEARCH_CACHE`` and ``$KBSEARCH_HOME`` point into the session's temporary folder
    for every test and every process a test starts, so that no test writes into the user's
    cache (``~/.cache/kbsearch``) or demo folder; the cache is a mirror of the real one
    (:func:`mirror`), so tests that use the converted model still find it, read-only."""
    saved = {name: os.environ.get(name) for name in ISOLATED}
    real = cache_root()
    cache = tmp_path_factory.mktemp("kbsearch-cache")
    if real.is_dir():
        mirror(real, cache)
    os.environ["KBSEARCH_CACHE"] = str(cache)
    os.environ["KBSEARCH_HOME"] = str(tmp_path_factory.mktemp("kbsearch-home"))
    yield cache
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


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
