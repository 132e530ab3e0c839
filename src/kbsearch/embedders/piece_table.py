"""A Unigram ``tokenizer.json``'s pieces kept on disk as arrays, so that a process tokenises a
short text (a query) without building the whole model first.

Building ``sentencepiece``'s model of the converted E5 vocabulary (250,002 pieces) costs about
2 s of CPU from ``tokenizer.json`` (JSON parse, model proto, trie) and 0.8 s from its serialized
model; a one-shot ``kbsearch search`` paid that for one query. A Unigram segmentation (the
Viterbi path over the lattice of the vocabulary's pieces found in the normalised text, Kudo
2018) only reads the pieces that occur in the text, and the lowest piece score (an unknown
character scores ``min score - 10``). So a text of up to :data:`SHORT_TEXT` characters is
tokenised by ``sentencepiece`` itself on a model made of just those pieces (tens to a few
hundred), plus the unknown piece and the lowest-scored one, and its ids are mapped back:
the same lattice in the same order, so the same ids as the whole model (tested on the
converted vocabulary; a hash shared by two strings can only add a piece that never matches).
A longer text (a passage while indexing) loads the whole model once, from its serialized form
stored in the same file, and so does a long-lived process after :data:`WHOLE_AFTER` short
texts, in the background.

The file (``tokenizer.pieces.npz`` beside ``tokenizer.json``, :data:`TABLE_NAME`) holds, as
uncompressed numpy arrays: ``hashes`` (uint64, sorted; a polynomial hash of each piece's code
points, :func:`piece_hashes`) and ``order`` (the piece id of each hash), ``text`` and
``text_offsets`` (the pieces' UTF-8), ``records`` and ``record_offsets`` (each piece serialized
as a one-piece ``ModelProto``: serialized protobuf messages concatenate into one, repeated
fields appended), ``header`` (the model proto without pieces: trainer and normaliser settings),
``whole`` (the whole serialized model) and ``meta`` (JSON: the format, the SHA-256 of the
``tokenizer.json`` it came from, the unknown, lowest-scored and control piece ids, the longest
piece, whether runs of spaces collapse). It is written by the converter and, for a model
directory converted before it existed, on first use; a file that is missing, unreadable, of
another format or of another ``tokenizer.json`` is rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import re
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmbedderUnavailableError

TABLE_NAME = "tokenizer.pieces.npz"
TABLE_FORMAT = 1
SHORT_TEXT = 256  # longest text (characters) tokenised on a model of its own pieces
WHOLE_AFTER = 32  # short texts after which the whole model is loaded (in the background)
HASH_BASE = np.uint64(1_000_003)
SPACES = re.compile(" {2,}")
ARRAYS = ("hashes", "order", "text", "text_offsets", "records", "record_offsets", "header")


def prepare(text: str, collapse_spaces: bool) -> str:
    """``text`` as the converted ``tokenizer.json`` hands it to its model: runs of spaces made
    one (when its normaliser says so), and a leading space dropped (Metaspace: the prepended
    ``▁`` is that space itself)."""
    if collapse_spaces:
        text = SPACES.sub(" ", text)
    return text[1:] if text.startswith(" ") else text


def _proto_module() -> Any:
    return importlib.import_module("sentencepiece.sentencepiece_model_pb2")


def piece_hashes(codes: np.ndarray) -> np.ndarray:
    """Hash of each row of ``codes`` (``(n, length)`` code points, any unsigned dtype):
    ``h = h * 1_000_003 + c`` over the row, modulo 2**64, from ``h = length``."""
    h = np.full(codes.shape[0], codes.shape[1], dtype=np.uint64)
    for column in codes.T.astype(np.uint64):
        h = h * HASH_BASE + column
    return h


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


def substring_hashes(text: str, width: int) -> np.ndarray:
    """Hashes (:func:`piece_hashes`) of every substring of ``text`` of 1 to ``width``
    characters, sorted."""
    codes = _codes(text).astype(np.uint64)
    hashes = []
    h = codes
    for length in range(1, min(width, len(codes)) + 1):
        # h(s[i:i+L]) from h(s[i:i+L-1]); the seed L enters last, as L * B**L
        if length > 1:
            h = h[:-1] * HASH_BASE + codes[length - 1 :]
        hashes.append(h + np.uint64(length * pow(int(HASH_BASE), length, 2**64) % 2**64))
    return np.sort(np.concatenate(hashes)) if hashes else np.zeros(0, dtype=np.uint64)


class PieceTable:
    """The arrays of one ``tokenizer.pieces.npz`` and its meta (module docstring)."""

    def __init__(self, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        self.arrays = arrays
        self.meta = meta
        self._records = arrays["records"].tobytes()  # one copy: slices of bytes are cheap
        self._header = arrays["header"].tobytes()

    @property
    def width(self) -> int:
        return int(self.meta["width"])

    def piece(self, pid: int) -> str:
        offsets = self.arrays["text_offsets"]
        return bytes(self.arrays["text"][offsets[pid] : offsets[pid + 1]]).decode("utf-8")

    def lookup(self, text: str) -> np.ndarray:
        """Ids of the pieces whose hash is that of a substring of ``text`` (control pieces
        included): every piece that occurs in it, and, where two strings share a 64-bit hash,
        perhaps another, which a model of these pieces can never match in ``text``."""
        hashes = substring_hashes(text, self.width)
        table = self.arrays["hashes"]
        pos = np.searchsorted(table, hashes)
        keep = pos < len(table)
        pos, hashes = pos[keep], hashes[keep]
        pos = np.unique(pos[table[pos] == hashes])
        found = [pos]
        run = pos
        while len(run):  # pieces sharing a hash sit side by side: take the whole run
            run = run[run + 1 < len(table)]
            run = run[table[run + 1] == table[run]] + 1
            found.append(run)
        return self.arrays["order"][np.concatenate(found)]

    def exact(self, token: str) -> int | None:
        """The id of the piece ``token``, or ``None``."""
        for pid in self.lookup(token).tolist():
            if self.piece(pid) == token:
                return int(pid)
        return None

    def model_proto(self, pieces: list[int]) -> bytes:
        """A serialized model of the unknown piece (id 0) then ``pieces``, in that order."""
        records = self._records
        offsets = self.arrays["record_offsets"]
        rows = np.asarray(pieces, dtype=np.int64)
        starts, ends = offsets[rows].tolist(), offsets[rows + 1].tolist()
        body = b"".join([records[a:b] for a, b in zip(starts, ends, strict=True)])
        return self._header + body


def source_digest(path: Path) -> str:
    """SHA-256 (hex) of a ``tokenizer.json``."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_piece_table(raw: dict[str, Any], digest: str) -> PieceTable:
    """The table of a parsed Unigram ``tokenizer.json`` of the converted shape (see
    :func:`kbsearch.embedders.unigram.load_tokenizer`); ``digest`` is its
    :func:`source_digest`."""
    pb = _proto_module()
    vocab = raw["model"]["vocab"]
    unk = int(raw["model"]["unk_id"])
    kinds = pb.ModelProto.SentencePiece
    control: list[int] = []
    texts: list[bytes] = []
    records: list[bytes] = []
    lowest, lowest_score = -1, float("inf")
    for i, (text, score) in enumerate(vocab):
        kind = kinds.UNKNOWN if i == unk else kinds.NORMAL
        if i != unk and text.startswith("<") and text.endswith(">") and score == 0.0:
            kind = kinds.CONTROL  # as unigram._sentencepiece marks them
            control.append(i)
        elif i != unk and float(np.float32(score)) < lowest_score:
            lowest, lowest_score = i, float(np.float32(score))
        one = pb.ModelProto()
        one.pieces.add(piece=text, score=score, type=kind)
        records.append(one.SerializeToString())
        texts.append(text.encode("utf-8"))
    header = pb.ModelProto()
    header.trainer_spec.model_type = pb.TrainerSpec.UNIGRAM
    header.trainer_spec.byte_fallback = False
    header.trainer_spec.unk_id = 0  # a pruned model puts the unknown piece first
    header.trainer_spec.bos_id = header.trainer_spec.eos_id = header.trainer_spec.pad_id = -1
    header.normalizer_spec.name = "identity"
    header.normalizer_spec.add_dummy_prefix = True
    header.normalizer_spec.remove_extra_whitespaces = False
    header.normalizer_spec.escape_whitespaces = True
    whole = pb.ModelProto()
    whole.CopyFrom(header)
    whole.trainer_spec.unk_id = unk
    whole.MergeFromString(b"".join(records))
    hashes = np.zeros(len(vocab), dtype=np.uint64)
    lengths = np.array([len(t) for t, _ in vocab])
    for length in np.unique(lengths):
        rows = np.flatnonzero(lengths == length)
        codes = [_codes(vocab[r][0]) for r in rows]
        hashes[rows] = piece_hashes(np.stack(codes) if length else np.zeros((len(rows), 0)))
    order = np.argsort(hashes, kind="stable")
    arrays: dict[str, np.ndarray] = {
        "hashes": hashes[order],
        "order": order.astype(np.int32),
        "text": np.frombuffer(b"".join(texts), dtype=np.uint8),
        "text_offsets": np.cumsum([0, *map(len, texts)]).astype(np.int64),
        "records": np.frombuffer(b"".join(records), dtype=np.uint8),
        "record_offsets": np.cumsum([0, *map(len, records)]).astype(np.int64),
        "header": np.frombuffer(header.SerializeToString(), dtype=np.uint8),
        "whole": np.frombuffer(whole.SerializeToString(), dtype=np.uint8),
    }
    meta = {
        "format": TABLE_FORMAT,
        "source_sha256": digest,
        "unk": unk,
        "lowest": lowest,
        "control": control,
        "width": int(lengths.max(initial=1)),
        "collapse_spaces": raw.get("normalizer") is not None,
    }
    return PieceTable(arrays, meta)


def write_piece_table(path: Path, table: PieceTable) -> None:
    """Write ``table`` to ``path`` atomically (a temporary file beside it, then renamed).

    Raises:
        OSError: the directory cannot be written.
    """
    fd, tmp = tempfile.mkstemp(prefix=".pieces-", suffix=".npz", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            meta = np.frombuffer(json.dumps(table.meta).encode("utf-8"), dtype=np.uint8)
            arrays: dict[str, Any] = {"meta": meta, **table.arrays}
            np.savez(out, **arrays)
        os.chmod(tmp, 0o644)  # as the directory's other files (mkstemp makes it 0600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_piece_table(path: Path, digest: str) -> PieceTable | None:
    """The table stored at ``path`` when it is complete, of this format and built from the
    ``tokenizer.json`` of SHA-256 ``digest``; ``None`` otherwise (missing, truncated, corrupt,
    stale: the caller rebuilds it)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["meta"]).decode("utf-8"))
            arrays = {name: data[name] for name in (*ARRAYS, "whole")}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if not isinstance(meta, dict) or meta.get("format") != TABLE_FORMAT:
        return None
    if meta.get("source_sha256") != digest:
        return None
    n = len(arrays["order"])
    shapes_agree = (
        len(arrays["hashes"]) == n
        and len(arrays["text_offsets"]) == len(arrays["record_offsets"]) == n + 1
        and int(arrays["text_offsets"][-1]) == len(arrays["text"])
        and int(arrays["record_offsets"][-1]) == len(arrays["records"])
    )
    return PieceTable(arrays, meta) if shapes_agree else None


class PieceTableTokenizer:
    """The :class:`~kbsearch.embedders.unigram.Tokenizer` of a :class:`PieceTable`: a short
    text on a model of its own pieces (~0.3-1 ms), a longer one on the whole model (loaded
    once, ~0.8 s; then ~0.02 ms a query). After :data:`WHOLE_AFTER` short texts (a long-lived
    process: a server, an evaluation) the whole model is loaded in a background thread
    (``sentencepiece`` releases the GIL while it loads) and used once ready. Thread-safe."""

    def __init__(self, table: PieceTable) -> None:
        import sentencepiece

        self._spm = sentencepiece
        self.table = table
        self._unk = int(table.meta["unk"])
        self._skip = {self._unk, *table.meta["control"]}  # never matched in text
        self._lowest = int(table.meta["lowest"])
        # the normaliser with one piece (sentencepiece needs one): the text it segments
        self._normaliser = self._processor([self._lowest])
        self._whole: Any = None
        self._lock = threading.Lock()
        self._short = 0  # short texts tokenised on a pruned model

    def _processor(self, pieces: list[int]) -> Any:
        proto = self.table.model_proto([self._unk, *pieces])
        return self._spm.SentencePieceProcessor(model_proto=proto)

    def whole(self) -> Any:
        """The whole model's processor (built on first use, ~0.8 s for 250k pieces).

        Raises:
            EmbedderUnavailableError: the table's serialized model does not parse (a damaged
                file whose other arrays agree: the checks of :func:`read_piece_table` do not
                parse it, which would cost that 0.8 s at every start).
        """
        with self._lock:
            if self._whole is None:
                try:
                    self._whole = self._spm.SentencePieceProcessor(
                        model_proto=self.table.arrays["whole"].tobytes()
                    )
                except (RuntimeError, TypeError, ValueError) as exc:
                    reason = " ".join(str(exc).split())[:200]
                    raise EmbedderUnavailableError(
                        f"the tokenizer's piece table ({TABLE_NAME}) is damaged ({reason});"
                        " delete it and it is rebuilt from tokenizer.json"
                    ) from exc
            return self._whole

    def _load_whole(self) -> None:
        """:meth:`whole` in the background: a damaged table is said by the next long text."""
        with contextlib.suppress(EmbedderUnavailableError):
            self.whole()

    def encode(self, text: str) -> tuple[list[int], list[str]]:
        text = prepare(text, bool(self.table.meta["collapse_spaces"]))
        whole = self._whole
        if whole is None and len(text) > SHORT_TEXT:
            whole = self.whole()
        if whole is not None:
            return _ids_and_unknowns(whole, text, self._unk, None)
        with self._lock:
            self._short += 1
            if self._short == WHOLE_AFTER:
                threading.Thread(
                    target=self._load_whole, name="kbsearch-tokenizer", daemon=True
                ).start()
        normalised = self._normaliser.normalize(text)
        found = set(self.table.lookup(normalised).tolist()) - self._skip
        pieces = sorted(found | {self._lowest})
        return _ids_and_unknowns(self._processor(pieces), text, self._unk, [self._unk, *pieces])

    def token_to_id(self, token: str) -> int | None:
        return self.table.exact(token)


def _ids_and_unknowns(
    processor: Any, text: str, unk: int, ids: list[int] | None
) -> tuple[list[int], list[str]]:
    """``processor``'s ids of ``text`` (mapped through ``ids`` when given), and each token's
    text when one is unknown (the characters it covers)."""
    found = [int(i) for i in processor.encode(text)]
    if ids is not None:
        found = [ids[i] for i in found]
    if unk not in found:
        return found, []
    return found, [str(p) for p in processor.encode(text, out_type=str)]
