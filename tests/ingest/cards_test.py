"""Help cards (a JSON list): the title, optional metadata fields, and how a card's passage is
shown (its document's format, no empty section)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

import kbsearch
from kbsearch.cli import cli
from kbsearch.errors import IngestError
from kbsearch.ingest import parse_file

CARDS = [
    {"id": "gc-1", "reference": "GC-1", "family": "gift cards",
     "text": "A gift card is valid for 12 months.\nIt cannot be refunded."},
    {"id": "gc-2", "reference": "GC-2", "family": "gift cards", "title": "Lost gift card",
     "access": "public", "language": "en", "version": 2, "effective_from": "2025-01-01",
     "owner": None, "text": "A lost gift card can be blocked by phone."},
]  # fmt: skip


def write_cards(folder: Path, cards: list[dict[str, object]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "cards.json"
    path.write_text(json.dumps(cards), encoding="utf-8")
    return path


def test_a_card_title_is_its_title_field_else_its_reference(tmp_path: Path) -> None:
    first, second = parse_file(write_cards(tmp_path, CARDS))
    assert (first.title, dict(first.metadata)) == ("GC-1", {"family": "gift cards"})
    assert second.metadata == {
        "family": "gift cards", "title": "Lost gift card", "access": "public",
        "language": "en", "version": "2", "effective_from": "2025-01-01",
    }  # fmt: skip


def test_an_optional_field_that_is_not_text_is_refused(tmp_path: Path) -> None:
    card = CARDS[0] | {"access": ["public"]}
    with pytest.raises(IngestError, match="card 0: access must be text or a whole number"):
        parse_file(write_cards(tmp_path, [card]))


def test_indexed_cards_show_their_title_format_and_metadata(tmp_path: Path) -> None:
    docs = write_cards(tmp_path / "docs", CARDS).parent
    db = tmp_path / "kb.db"
    with kbsearch.open_kb(db, create=True, embedder="none") as kb:
        assert kb.index([docs], default_access="staff").ok
        stored = {d.document.doc_id: d.document for d in kb.documents()}
    assert stored["gc-1"].title == "GC-1" and stored["gc-1"].access == "staff"
    lost = stored["gc-2"]
    assert (lost.title, lost.version, lost.access, lost.format) == (
        "Lost gift card", "2", "public", "cards",
    )  # fmt: skip
    assert lost.effective_from == date(2025, 1, 1)
    shown = CliRunner().invoke(cli, ["show", "gc-2@v2#top", "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    assert shown.output.splitlines()[0].startswith("gc-2@v2#top  (cards, ")
    assert shown.output.splitlines()[1] == "Lost gift card"


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [("reference", ["r"], "a list"), ("text", 42, "a number"), ("family", {"a": 1}, "an object"),
     ("text", None, "null"), ("reference", True, "true")],
)  # fmt: skip
def test_a_card_field_of_the_wrong_type_is_one_line_naming_it(
    tmp_path: Path, field: str, value: object, shown: str
) -> None:
    """``{"id": 5, "reference": ["r"], "text": 42}`` was indexed as doc ``5`` titled
    ``['r']`` with the text ``42``."""
    card = CARDS[0] | {"id": 5, field: value}
    with pytest.raises(IngestError) as raised:
        parse_file(write_cards(tmp_path, [card]))
    message = str(raised.value)
    assert f"card 0: {field} must be text, not {shown}" in message and "\n" not in message


def test_a_card_of_the_wrong_types_is_not_indexed(tmp_path: Path) -> None:
    docs = write_cards(tmp_path / "docs", [{"id": 5, "reference": ["r"], "family": "f",
                                            "text": 42}]).parent  # fmt: skip
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        report = kb.index([docs], default_access="public")
        assert not report.ok and kb.documents() == []
    ((source, reason),) = report.failed
    assert "reference must be text" in reason
