"""Passage splitting: ids, prefixes, budgets, overlap, tables, and that no text is lost."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbsearch.errors import IngestError, InvalidArgumentError
from kbsearch.index.chunking import make_passages
from kbsearch.index.packing import split_sentences
from kbsearch.ingest import parse_file
from kbsearch.records import Block, Document, ParsedDocument, Table

DOC = Document("pump", "2", "Pump guide", "en", "public")


def words(text: str) -> int:
    return len(text.split())


def subword(text: str) -> int:
    """A counter shaped like an embedder's: word pieces plus 4 tokens of prefix/specials."""
    return len(re.findall(r"\w{1,4}|[^\w\s]", text)) + 4


def _parsed(*blocks: Block) -> ParsedDocument:
    return ParsedDocument(None, "Pump guide", tuple(blocks))


def _body(passage_text: str) -> str:
    return passage_text.split("\n\n", 1)[1]


def test_ids_prefix_and_metadata() -> None:
    parsed = _parsed(
        Block((), "Intro text.", start=0, end=11),
        Block(("Returns",), "Return within 30 days.", start=20, end=42),
        Block(("Returns",), "Keep the receipt.", start=43, end=60),
        Block(("Returns",), table=Table(("Item", "Days"), (("Kettle", "30"),))),
        Block(("Returns 2",), "Numbered heading."),
        Block(("Returns",), "Second returns section."),
        Block(("***",), "Punctuation heading."),
    )
    passages = make_passages(DOC, parsed, budget=512, token_count=words)
    assert [p.passage_id for p in passages] == [
        "pump@v2#top",
        "pump@v2#returns",
        "pump@v2#returns-2",
        "pump@v2#returns-2-2",
        "pump@v2#returns-3",
        "pump@v2#section",
    ]
    assert [p.kind for p in passages] == ["text", "text", "table", "text", "text", "text"]
    assert [p.ordinal for p in passages] == list(range(6))
    assert passages[0].text == "Pump guide\n\nIntro text."
    assert passages[0].section == ""
    assert passages[1].text == "Pump guide\nReturns\n\nReturn within 30 days.\n\nKeep the receipt."
    assert passages[1].section == "Returns"
    assert (passages[1].start, passages[1].end) == (20, 60)
    assert passages[2].text == "Pump guide\nReturns\n\nItem | Days\nKettle | 30"
    assert all(p.text.startswith("Pump guide\n") for p in passages)
    assert all(p.token_count == words(p.text) for p in passages)
    assert all(p.doc_id == "pump" and p.version == "2" for p in passages)


def test_nested_section_path() -> None:
    # budget 64: the sub-section's 5 words are not tiny (under 64 / 16), so it stands alone;
    # its id is made from its whole heading path
    parsed = _parsed(Block(("Returns", "Opened items"), "Opened items cost 10 %."))
    (passage,) = make_passages(DOC, parsed, budget=64, token_count=words)
    assert passage.section == "Returns > Opened items"
    assert passage.passage_id == "pump@v2#returns/opened-items"
    assert passage.text.startswith("Pump guide\nReturns > Opened items\n\n")


def _long_section(n_paragraphs: int, sentences: int) -> list[Block]:
    blocks = []
    k = 0
    for page in range(n_paragraphs):
        sents = []
        for _ in range(sentences):
            sents.append(f"Sentence w{k:04d}a w{k:04d}b w{k:04d}c w{k:04d}d ends.")
            k += 1
        blocks.append(Block(("Long part",), " ".join(sents), page=page + 1))
    return blocks


@pytest.mark.parametrize("counter", [words, subword])
def test_long_section_split_within_budget_with_overlap_and_nothing_lost(
    counter: Callable[[str], int],
) -> None:
    blocks = _long_section(n_paragraphs=6, sentences=12)
    budget = 60
    passages = make_passages(DOC, _parsed(*blocks), budget=budget, token_count=counter)
    assert len(passages) > 6
    assert all(p.token_count == counter(p.text) <= budget for p in passages)
    assert all(p.text.startswith("Pump guide\nLong part\n\n") for p in passages)
    assert [p.passage_id for p in passages][:3] == [
        "pump@v2#long-part",
        "pump@v2#long-part-2",
        "pump@v2#long-part-3",
    ]
    seen = {w for p in passages for w in p.text.split()}
    source = [w for b in blocks for w in b.text.split()]
    assert all(w in seen for w in source)
    # overlap: each piece starts with the last sentence of the one before
    for prev, cur in zip(passages, passages[1:], strict=False):
        last_sentence = split_sentences(_body(prev.text))[-1][0]
        assert _body(cur.text).startswith(last_sentence)
    assert passages[0].page == 1 and passages[-1].page == 6


def test_overlap_zero_repeats_nothing() -> None:
    blocks = _long_section(n_paragraphs=3, sentences=10)
    passages = make_passages(DOC, _parsed(*blocks), budget=50, token_count=words, overlap=0)
    body_words = [w for p in passages for w in _body(p.text).split()]
    assert body_words == [w for b in blocks for w in b.text.split()]


def test_small_paragraphs_split_at_paragraph_boundaries() -> None:
    blocks = [Block(("Steps",), f"Step {i} do thing {i}.") for i in range(30)]
    passages = make_passages(DOC, _parsed(*blocks), budget=40, token_count=words)
    for p in passages:
        assert all(
            re.fullmatch(r"Step \d+ do thing \d+\.", para) for para in _body(p.text).split("\n\n")
        )
        assert p.token_count <= 40
    # the last paragraph of a piece is repeated first in the next one (small paragraph overlap)
    assert _body(passages[1].text).split("\n\n")[0] == _body(passages[0].text).split("\n\n")[-1]


def test_sentence_longer_than_budget_split_at_words() -> None:
    sentence = " ".join(f"token{i}" for i in range(200))
    passages = make_passages(
        DOC, _parsed(Block(("Run-on",), sentence)), budget=30, token_count=words
    )
    assert len(passages) >= 8
    assert all(p.token_count <= 30 for p in passages)
    seen = {w for p in passages for w in p.text.split()}
    assert all(f"token{i}" in seen for i in range(200))


def test_long_table_split_by_rows_with_header_repeated() -> None:
    rows = tuple((f"Kit {i}", f"PK-{i:04d}", f"fits the PW-{i} only") for i in range(60))
    table = Table(("Part", "Code", "Notes"), rows)
    passages = make_passages(
        DOC, _parsed(Block(("Kits",), table=table)), budget=80, token_count=words
    )
    assert len(passages) > 3
    lines: list[str] = []
    for p in passages:
        assert p.kind == "table"
        assert p.token_count <= 80
        assert p.text.startswith("Pump guide\nKits\n\nPart | Code | Notes\n")
        lines.extend(_body(p.text).split("\n")[1:])
    assert lines == [" | ".join(r) for r in rows]  # every row once, intact, in order


def test_long_table_under_a_header_of_empty_cells_repeats_no_header() -> None:
    rows = tuple((f"Kit {i}", f"PK-{i:04d}") for i in range(60))
    passages = make_passages(
        DOC, _parsed(Block(("Kits",), table=Table(("", ""), rows))), budget=80, token_count=words
    )
    assert len(passages) > 3
    assert all(p.text.startswith("Pump guide\nKits\n\nKit ") for p in passages)
    assert [line for p in passages for line in _body(p.text).split("\n")] == [
        " | ".join(r) for r in rows
    ]


def test_counter_calls_grow_linearly() -> None:
    blocks = _long_section(n_paragraphs=40, sentences=25)  # 1000 sentences
    calls = 0

    def counting(text: str) -> int:
        nonlocal calls
        calls += 1
        return subword(text)

    passages = make_passages(DOC, _parsed(*blocks), budget=512, token_count=counting)
    assert all(p.token_count <= 512 for p in passages)
    assert calls <= 4 * len(passages) + 10


def test_prefix_over_budget_is_an_error() -> None:
    doc = Document("d", "1", "A title far too long for the budget", "en", "public")
    with pytest.raises(IngestError, match="over the passage budget"):
        make_passages(doc, _parsed(Block((), "word " * 50)), budget=5, token_count=words)


def test_bad_arguments() -> None:
    with pytest.raises(InvalidArgumentError):
        make_passages(DOC, _parsed(Block((), "x")), budget=0, token_count=words)
    with pytest.raises(InvalidArgumentError):
        make_passages(DOC, _parsed(Block((), "x")), budget=10, token_count=words, overlap=-1)


def test_empty_document_gives_no_passages() -> None:
    assert make_passages(DOC, _parsed(Block((), "  ")), budget=10, token_count=words) == []


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzé", min_size=1, max_size=12)
_SENTENCE = st.lists(_WORD, min_size=1, max_size=40).map(lambda ws: " ".join(ws).capitalize() + ".")
_PARAGRAPH = st.lists(_SENTENCE, min_size=1, max_size=8).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(
    paragraphs=st.lists(_PARAGRAPH, min_size=1, max_size=12),
    budget=st.integers(min_value=20, max_value=120),
    overlap=st.integers(min_value=0, max_value=2),
)
def test_property_within_budget_and_nothing_lost(
    paragraphs: list[str], budget: int, overlap: int
) -> None:
    blocks = [Block(("Sec",), p) for p in paragraphs]
    passages = make_passages(
        DOC, _parsed(*blocks), budget=budget, token_count=subword, overlap=overlap
    )
    assert all(p.token_count == subword(p.text) <= budget for p in passages)
    assert len({p.passage_id for p in passages}) == len(passages)
    text = "\n".join(_body(p.text) for p in passages)
    for w in {w for para in paragraphs for w in para.split()}:
        assert w in text


def _markdown(tmp_path: Path, source: str) -> ParsedDocument:
    path = tmp_path / "page.md"
    path.write_text(source, encoding="utf-8")
    (parsed,) = parse_file(path)
    return parsed


def _long(word: str, n: int) -> str:
    return " ".join(f"{word}{i}" for i in range(n)) + "."


def test_every_heading_opens_a_passage_named_by_its_path(tmp_path: Path) -> None:
    parsed = _markdown(
        tmp_path,
        f"# Pump guide\n\n## Install\n\n{_long('i', 40)}\n\n### Windows\n\n{_long('w', 40)}"
        f"\n\n#### Drivers\n\n{_long('d', 40)}\n\n### macOS\n\n{_long('m', 40)}\n",
    )
    passages = make_passages(DOC, parsed, budget=512, token_count=words)
    assert [(p.passage_id, p.section) for p in passages] == [
        ("pump@v2#install", "Install"),
        ("pump@v2#install/windows", "Install > Windows"),
        ("pump@v2#install/windows/drivers", "Install > Windows > Drivers"),
        ("pump@v2#install/macos", "Install > macOS"),
    ]
    assert passages[2].text.startswith("Pump guide\nInstall > Windows > Drivers\n\nd0 d1")


def test_tiny_subsections_join_their_parent_while_it_fits(tmp_path: Path) -> None:
    # under 512 / 16 = 32 words a sub-section is tiny; a page's top-level sections stand
    parsed = _markdown(
        tmp_path,
        "# Pump guide\n\n## Contact\n\nCall us.\n\n## Payments\n\nWe take cards.\n\n"
        "### Cheques?\n\nNo.\n\n### Cash?\n\nIn stores only.\n\n"
        f"### Klarna\n\n{_long('k', 40)}\n",
    )
    passages = make_passages(DOC, parsed, budget=512, token_count=words)
    assert [p.passage_id for p in passages] == [
        "pump@v2#contact",
        "pump@v2#payments",
        "pump@v2#payments/klarna",
    ]
    assert (
        _body(passages[1].text) == "We take cards.\n\nCheques?\n\nNo.\n\nCash?\n\nIn stores only."
    )
    # a full parent takes no more: the tiny one stands alone under its own path
    small = make_passages(DOC, parsed, budget=48, token_count=words)
    assert "pump@v2#payments/cash" in [p.passage_id for p in small]


def test_same_heading_twice_gives_two_passages(tmp_path: Path) -> None:
    parsed = _markdown(tmp_path, "## Notes\n\nFirst notes.\n\n## Notes\n\nSecond notes.\n")
    passages = make_passages(DOC, parsed, budget=512, token_count=words)
    assert [(p.passage_id, _body(p.text)) for p in passages] == [
        ("pump@v2#notes", "First notes."),
        ("pump@v2#notes-2", "Second notes."),
    ]


def test_no_passage_without_its_heading_path(tmp_path: Path) -> None:
    # a page whose sections are ### under the title, one of them long: every piece is named
    sections = "".join(f"### Step {n}\n\n{_long(f's{n}x', 30)}\n\n" for n in range(1, 4))
    long_one = "\n\n".join(_long(f"p{n}x", 30) for n in range(6))
    parsed = _markdown(tmp_path, f"# Pump guide\n\n{sections}### Long step\n\n{long_one}\n")
    passages = make_passages(DOC, parsed, budget=80, token_count=words)
    assert all(p.section for p in passages)
    assert [p.passage_id.split("#")[1] for p in passages] == [
        "step-1", "step-2", "step-3", "long-step", "long-step-2", "long-step-3",
    ]  # fmt: skip
    assert all(p.section == "Long step" for p in passages[3:])


def test_long_sentences_cut_at_sentence_ends_not_inside_brackets() -> None:
    text = (
        "Restart the pump (yes, really! It helps) before you call. "
        "Check the seal is seated. Then run a test cycle of five minutes."
    )
    assert split_sentences(text)[0] == (
        "Restart the pump (yes, really! It helps) before you call.",
        "",
    )
    parsed = _parsed(Block(("Fix",), text))
    passages = make_passages(DOC, parsed, budget=15, token_count=words, overlap=0)
    assert [_body(p.text) for p in passages] == [
        "Restart the pump (yes, really! It helps) before you call.",
        "Check the seal is seated.",
        "Then run a test cycle of five minutes.",
    ]


def test_sentences_follow_the_document_language() -> None:
    text = "Appelez M. Dupont au service client. Il répond le matin."
    assert [t for t, _ in split_sentences(text, "fr")] == [
        "Appelez M. Dupont au service client.",
        "Il répond le matin.",
    ]
    doc = Document("guide", "1", "Guide", "fr", "public")
    parsed = ParsedDocument(None, "Guide", (Block(("Aide",), text),))
    passages = make_passages(doc, parsed, budget=9, token_count=words, overlap=0)
    assert [_body(p.text) for p in passages] == [t for t, _ in split_sentences(text, "fr")]
