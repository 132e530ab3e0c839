"""The embedder interface every backend implements, and the checks shared by all of them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from ..errors import EmbeddingError

Role = Literal["query", "passage"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors.

    ``name`` identifies the model and every setting that changes its vectors (engine,
    variant, prefixes); an index records it and refuses another. ``dim`` is the vector
    size, ``max_tokens`` the model's input limit (special tokens included).
    """

    name: str
    dim: int
    max_tokens: int
    query_prefix: str
    passage_prefix: str

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape ``(len(texts), dim)``, float32, rows L2-normalised.

        Raises:
            EmbeddingError: a text exceeds ``max_tokens`` or the model returned bad vectors.
        """
        ...

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Like :meth:`encode_queries` with the passage role (and its prefix)."""
        ...

    def token_count(self, text: str, role: Role) -> int:
        """Tokens the model would be fed for ``text`` in ``role``, prefix and specials included."""
        ...


def check_vectors(vectors: np.ndarray, n: int, dim: int) -> np.ndarray:
    """Validate an embedder's output and return it as C-contiguous float32.

    Raises:
        EmbeddingError: wrong shape, or a NaN / infinite value, or a zero vector.
    """
    arr = np.asarray(vectors)
    if arr.ndim != 2 or arr.shape != (n, dim):
        raise EmbeddingError(f"expected vectors of shape ({n}, {dim}), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise EmbeddingError("the embedder returned non-finite values (NaN or inf)")
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    norms = np.linalg.norm(arr, axis=1)
    if n and np.any(norms == 0):
        raise EmbeddingError("the embedder returned a zero vector")
    return arr


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows divided by their L2 norm (float32). Zero rows stay zero and fail ``check_vectors``."""
    arr = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return np.divide(arr, norms, out=np.zeros_like(arr), where=norms > 0)


def check_token_limit(embedder: Embedder, texts: Sequence[str], role: Role) -> None:
    """Refuse any text longer than the embedder's limit rather than cutting it.

    Raises:
        EmbeddingError: naming the first text over the limit and its token count.
    """
    for text in texts:
        count = embedder.token_count(text, role)
        if count > embedder.max_tokens:
            raise EmbeddingError(
                f"{role} of {count} tokens exceeds the embedder's limit of "
                f"{embedder.max_tokens} tokens ({embedder.name}); shorten it"
            )
