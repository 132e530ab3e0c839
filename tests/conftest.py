"""Shared fixtures; the helpers behind them live in ``support.py``."""

from __future__ import annotations

import pytest
from support import FakeEmbedder


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()
