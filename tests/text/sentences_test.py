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


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("Le Dr. Martin est venu. Il a parlé.", "fr", ["Le Dr. Martin est venu.", "Il a parlé."]),
        ("Au XIXe s. la ville crût. Puis 1914.", "fr", ["Au XIXe s. la ville crût.", "Puis 1914."]),
        ("En 52 av. J.-C. au plus. Fin.", "fr", ["En 52 av. J.-C. au plus.", "Fin."]),
        ("Le 1er janv. 2020 il neige. Fin.", "fr", ["Le 1er janv. 2020 il neige.", "Fin."]),
        ("Voir Mme. Curie, p. 12. Fin.", "fr", ["Voir Mme. Curie, p. 12.", "Fin."]),
    ],
)  # fmt: skip
def test_no_sentence_ends_on_a_french_abbreviation(
    text: str, language: str, expected: list[str]
) -> None:
    assert _texts(text, language) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Ask Prof. Smith first. He knows.",
        "It is approx. 5 km away. Walk.",
        "See No. 5 on the list. Then go.",
    ],
)
def test_no_sentence_ends_on_an_english_abbreviation(text: str) -> None:
    assert len(_texts(text, "en")) == 2


def test_a_full_stop_after_a_word_that_is_no_abbreviation_ends_a_sentence() -> None:
    assert _texts("Louis XIV. Il régna.", "fr") == ["Louis XIV.", "Il régna."]
    assert _texts("Ils étaient sept. Puis huit.", "fr") == ["Ils étaient sept.", "Puis huit."]
    assert _texts("I said no. Then I left.", "en") == ["I said no.", "Then I left."]
    assert _texts("It is Alice's. Bob agrees.", "en") == ["It is Alice's.", "Bob agrees."]


def test_a_break_is_undone_on_its_own_line_only() -> None:
    assert _texts("Le Dr.\nMartin est venu.", "fr") == ["Le Dr.", "Martin est venu."]
