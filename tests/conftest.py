"""Shared fixtures: a deterministic fake embedder, and helpers to build small knowledge bases."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from kbsearch.analysis import words
from kbsearch.embedders import Role, check_token_limit, check_vectors, l2_normalise


class FakeEmbedder:
    """Bag-of-words hashing embedder: deterministic, fast, no model. Counts its calls."""

    query_prefix = "query: "
    passage_prefix = "passage: "

    def __init__(self, dim: int = 32, max_tokens: int = 512, name: str = "fake:bow") -> None:
        self.dim = dim
        self.max_tokens = max_tokens
        self.name = name
        self.spec = name
        self.calls = 0
        self.encoded = 0

    def token_count(self, text: str, role: Role) -> int:
        prefix = self.query_prefix if role == "query" else self.passage_prefix
        return len(words(prefix + text)) + 2

    def _encode(self, texts: Sequence[str], role: Role) -> np.ndarray:
        check_token_limit(self, texts, role)
        self.calls += 1
        self.encoded += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in words(text) or ["empty"]:
                h = int(hashlib.md5(w.encode()).hexdigest(), 16)
                out[i, h % self.dim] += 1.0 if (h >> 8) % 2 else -1.0
            out[i, 0] += 0.01  # never a zero vector
        return check_vectors(l2_normalise(out), len(texts), self.dim)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "query")

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "passage")


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


def write_files(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
