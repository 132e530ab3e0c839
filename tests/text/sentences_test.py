"""Sentence segmentation: maintained rules for English and French, offsets into the text."""

from __future__ import annotations

import pytest

from kbsearch.text.sentences import sentences


def _texts(text: str, language: str | None) -> list[str]:
    return [s.text for s in sentences(text, language)]


def test_offsets_point_into_the_text() -> None:
    text = "  First one.  Second one?\n\nThird, après un saut de ligne !  "
    found = sentences(text, "fr")
    assert [text[s.start : s.end] for s in found] == [s.text for s in found]
    assert [s.text for s in found] == [
        "First one.",
        "Second one?",
        "Third, après un saut de ligne !",
    ]


def test_no_cut_inside_brackets() -> None:
    text = "Install it (yes, really!) and restart. Then sign in."
    assert _texts(text, "en") == ["Install it (yes, really!) and restart.", "Then sign in."]


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("Call Mr. Smith today. He knows.", "en", ["Call Mr. Smith today.", "He knows."]),
        ("Voir M. Dupont au guichet. Merci.", "fr", ["Voir M. Dupont au guichet.", "Merci."]),
        ("It costs 3.5 euros. Pay later.", None, ["It costs 3.5 euros.", "Pay later."]),
    ],
)
def test_abbreviations_and_numbers(text: str, language: str | None, expected: list[str]) -> None:
    assert _texts(text, language) == expected


def test_line_breaks_end_sentences_and_blank_text_has_none() -> None:
    assert _texts("- step one\n- step two", "en") == ["- step one", "- step two"]
    assert sentences(" \n ", "en") == []
