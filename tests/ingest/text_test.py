"""Control characters in a document (NUL, ESC, DEL, a C1 control...) separate words, as a
space does: they were dropped (``refunded\\x01within`` became one word ``refundedwithin``) or,
through the Markdown and HTML parsers, a NUL became U+FFFD inside the passage text."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import FIXTURES_ROOT, FakeEmbedder

import kbsearch
from kbsearch.ingest import parse_file
from kbsearch.ingest.text import normalize
from kbsearch.records import Filters
from kbsearch.text.analysis import clean_text, words

FIXTURES = FIXTURES_ROOT / "ingest"
CONTROLS = "\x00\x01\x08\x0b\x0e\x1b\x1f\x7f\x85\x9b"


@pytest.mark.parametrize("control", list(CONTROLS), ids=[f"{ord(c):#04x}" for c in CONTROLS])
def test_a_control_character_separates_words(control: str) -> None:
    text = f"refund{control}policy"
    assert clean_text(text) == "refund policy" == normalize(text)
    assert words(text) == ["refund", "policy"]


def test_tab_and_line_breaks_are_kept_as_they_are() -> None:
    assert clean_text("a\tb\nc\r\nd\x0ce") == "a\tb\nc\r\nd\x0ce"


@pytest.mark.parametrize(
    ("name", "title", "expected"),
    [("control_characters.md", "Refund policy",
      ["A damaged parcel is refunded within thirty days.", "Keep the box and the receipt."]),
     ("control_characters.txt", "Kettle care", ["Descale the kettle every month."]),
     ("control_characters.html", "Opening hours", ["The desk opens at nine."])],
)  # fmt: skip
def test_a_fixture_with_control_characters_parses_to_separate_words(
    name: str, title: str, expected: list[str]
) -> None:
    (document,) = parse_file(FIXTURES / name)
    assert document.title == title
    assert [block.text for block in document.blocks] == expected
    sections = {" ".join(block.section) for block in document.blocks}
    assert all("\ufffd" not in s and "\x00" not in s for s in sections), sections


def test_an_indexed_fixture_is_found_by_its_separated_words(tmp_path: Path) -> None:
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=FakeEmbedder()) as kb:
        assert kb.index([FIXTURES / "control_characters.md"]).ok
        public = Filters(audience="public")
        (hit,) = kb.search("refunded within thirty days", route="lexical", filters=public)
        assert hit.passage_id == "control_characters@v1#damaged-parcels"
        assert "refunded within thirty days" in hit.text
        assert kb.search("refundedwithin", route="lexical", filters=public) == []
