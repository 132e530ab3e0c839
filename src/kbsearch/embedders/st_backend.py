"""The ``sentence-transformers:<model>`` backend: any sentence-transformers model, optional extra.

Installed with ``pip install 'kbsearch[st]'``. Runs on CUDA when a GPU is present, else on the
CPU, at the model's own precision (float32 unless the model says otherwise).

Prefixes: a model whose configuration declares non-empty ``prompts`` for the query and the
passage (``passage`` or ``document`` key) gets those; otherwise an E5 model (its name contains
``e5``) gets ``query: `` / ``passage: `` as its model card prescribes (Wang et al., "Text
Embeddings by Weakly-Supervised Contrastive Pre-training", 2022; "Multilingual E5 Text
Embeddings: A Technical Report", 2024); any other model gets none.

Reference: Reimers & Gurevych, "Sentence-BERT: Sentence Embeddings using Siamese BERT-Networks"
(EMNLP 2019), the library this backend wraps.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import EmbedderUnavailableError, InvalidArgumentError, install_hint
from .base import Role, check_token_limit, check_vectors

INSTALL_HINT = install_hint("st")
E5_QUERY_PREFIX = "query: "
E5_PASSAGE_PREFIX = "passage: "


def _looks_like_path(model: str) -> bool:
    """True for a spec that can only be a local path (never a hub id such as ``org/name``)."""
    return model.startswith(("/", "./", "../", "~")) or os.path.isabs(model)


def _prefixes(model: str, prompts: dict[str, str] | None) -> tuple[str, str]:
    """(query, passage) prefixes: the model's own configured prompts, else E5's, else none."""
    prompts = prompts or {}
    query = prompts.get("query") or ""
    passage = prompts.get("passage") or prompts.get("document") or ""
    if query or passage:
        return query, passage
    if "e5" in model.lower():
        return E5_QUERY_PREFIX, E5_PASSAGE_PREFIX
    return "", ""


class SentenceTransformersEmbedder:
    """A sentence-transformers model behind the kbsearch :class:`~.base.Embedder` interface.

    Args:
        model: a hub model id (``intfloat/multilingual-e5-small``, read from the local hub cache;
            set ``HF_HUB_OFFLINE=1`` where there is no network) or a local model directory.
        device: ``"cuda"``, ``"cpu"``, ``"cuda:1"``...; ``None`` = CUDA when
            ``torch.cuda.is_available()``, else the CPU.
        batch_size: texts per forward pass (> 0).

    Attributes:
        name: ``sentence-transformers:<model>`` followed by the prefixes, e.g.
            ``sentence-transformers:intfloat/multilingual-e5-small[query='query: ',
            passage='passage: ']``; an index records it.
        dim: the embedding size (384 for all-MiniLM-L6-v2 and multilingual-e5-small).
        max_tokens: the model's own input limit, ``max_seq_length`` (special tokens and prefix
            included); a longer text is refused, never cut.

    Raises:
        EmbedderUnavailableError: sentence-transformers is not installed (names
            ``pip install 'kbsearch[st]'``), the model cannot be loaded (missing directory, not in
            the offline cache, corrupt files) or has no token limit.
        InvalidArgumentError: ``batch_size`` < 1.
    """

    def __init__(self, model: str, device: str | None = None, batch_size: int = 32) -> None:
        if batch_size < 1:
            raise InvalidArgumentError(f"batch_size must be at least 1, got {batch_size}")
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderUnavailableError(
                f"the sentence-transformers embedder needs sentence-transformers and torch: "
                f"{INSTALL_HINT} ({exc})"
            ) from exc
        if _looks_like_path(model) and not os.path.isdir(os.path.expanduser(model)):
            raise EmbedderUnavailableError(f"no sentence-transformers model directory at {model!r}")
        path = os.path.expanduser(model) if _looks_like_path(model) else model
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            st_model = SentenceTransformer(path, device=device)
        except (OSError, ValueError, RuntimeError, KeyError, ImportError) as exc:
            raise EmbedderUnavailableError(
                f"sentence-transformers could not load model {model!r}: {exc}"
            ) from exc
        st_model.eval()
        max_tokens = st_model.max_seq_length
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise EmbedderUnavailableError(
                f"model {model!r} declares no token limit (max_seq_length={max_tokens!r})"
            )
        get_dim = getattr(st_model, "get_embedding_dimension", None) or (
            st_model.get_sentence_embedding_dimension
        )
        dim = get_dim()
        if not isinstance(dim, int) or dim < 1:
            raise EmbedderUnavailableError(f"model {model!r} declares no embedding dimension")

        self._model: Any = st_model
        self._tokenizer: Any = st_model.tokenizer
        self.model = model
        self.device = device
        self.batch_size = batch_size
        self.dim = dim
        self.max_tokens = max_tokens
        self.query_prefix, self.passage_prefix = _prefixes(
            model, getattr(st_model, "prompts", None)
        )
        self.name = (
            f"sentence-transformers:{model}"
            f"[query={self.query_prefix!r},passage={self.passage_prefix!r}]"
        )

    def _prefix(self, role: Role) -> str:
        return self.query_prefix if role == "query" else self.passage_prefix

    def token_count(self, text: str, role: Role) -> int:
        """Tokens fed to the model for ``prefix + text``, special tokens included, never cut."""
        encoded = self._tokenizer(
            self._prefix(role) + text, add_special_tokens=True, truncation=False, verbose=False
        )
        return len(encoded["input_ids"])

    def _encode(self, texts: Sequence[str], role: Role) -> np.ndarray:
        texts = list(texts)
        check_token_limit(self, texts, role)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model.encode(
            texts,
            prompt=self._prefix(role),
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return check_vectors(np.asarray(out, dtype=np.float32), len(texts), self.dim)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Shape ``(len(texts), dim)``, float32, unit rows, with the query prefix.

        Raises:
            EmbeddingError: a text over ``max_tokens``, or bad vectors from the model.
        """
        return self._encode(texts, "query")

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Like :meth:`encode_queries` with the passage prefix."""
        return self._encode(texts, "passage")
