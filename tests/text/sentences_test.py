"""Sentence segmentation (sentencex within lines)."""

from __future__ import annotations

from kbsearch.text.sentences import sentences


def _cut(text: str, language: str = "en") -> list[str]:
    return [text[s:e] for s, e in sentences(text, language)]


def test_never_ends_a_sentence_inside_brackets_or_quotes() -> None:
    text = "Install the certificate (see the docs!). Then restart « le serveur ! » now."
    assert _cut(text) == ["Install the certificate (see the docs!).", text[41:]]


def test_a_line_break_ends_a_sentence_and_list_markers_stay_with_their_item() -> None:
    assert _cut("Steps:\n1. Open the page.\n2. Click Save.") == [
        "Steps:",
        "1. Open the page.",
        "2. Click Save.",
    ]


def test_french_abbreviations_and_numbers() -> None:
    text = "M. Dupont est là. Voir l'art. 12 du code. Le prix est 3,50 €."
    assert _cut(text, "fr") == [
        "M. Dupont est là.",
        "Voir l'art. 12 du code.",
        "Le prix est 3,50 €.",
    ]


def test_offsets_count_characters_and_skip_white_space() -> None:
    text = "  Héllo wörld.   Ça va?  "
    spans = sentences(text, "fr")
    assert [text[s:e] for s, e in spans] == ["Héllo wörld.", "Ça va?"]
    assert sentences("", "en") == [] and sentences("\n\n", "en") == []
