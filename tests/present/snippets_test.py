"""Snippets: the best sentence for the query, widened or narrowed to the width, words marked
the way the lexical route matches them (case, accents, stems)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kbsearch.present.snippets import make_snippet, trigram_scores
from kbsearch.text.matching import sentence_spans

PASSAGE = (
    "Returns policy\nReturn window\n"
    "You can return unused items. Refunds are paid within 14 days of receipt. "
    "Gift cards cannot be refunded."
)


def test_best_sentence_is_chosen_and_words_marked() -> None:
    snip = make_snippet(PASSAGE, "when is my refund paid", width=50, skip_prefix=29)
    assert snip.text == "Refunds are paid within 14 days of receipt."
    assert [snip.text[s:e] for s, e in snip.marks] == ["Refunds", "paid"]
    assert PASSAGE[snip.start : snip.end] == snip.text
    assert snip.truncated_left and snip.truncated_right


def test_stems_accents_and_case_match() -> None:
    text = "Les données personnelles sont supprimées après 3 ans."
    snip = make_snippet(text, "Donnees supprimees", ["fr"])
    assert [snip.text[s:e] for s, e in snip.marks] == ["données", "supprimées"]


def test_ligatures_match_both_spellings() -> None:
    snip = make_snippet("Le coût de la main-d'œuvre et nos vœux.", "oeuvre voeux", ["fr"])
    assert [snip.text[s:e] for s, e in snip.marks] == ["œuvre", "vœux"]
    snip = make_snippet("La main-d'oeuvre coûte cher.", "œuvre", ["fr"])
    assert [snip.text[s:e] for s, e in snip.marks] == ["oeuvre"]


def test_stop_words_of_the_query_are_not_marked() -> None:
    # the lexical route searches "long return item": those words alone are marked
    text = "How long do I have to return an item? You have 30 days to return it."
    snip = make_snippet(text, "how long do I have to return an item", ["en"])
    assert [snip.text[s:e] for s, e in snip.marks] == ["long", "return", "item", "return"]


def test_stop_words_pick_no_sentence() -> None:
    # a sentence of the query's stop words must not outscore the one with its content word
    text = "How do I do it? I have to do what I can. Refunds take 14 days."
    snip = make_snippet(text, "how do I get a refund", ["en"], width=40)
    assert snip.text == "Refunds take 14 days."
    assert [snip.text[s:e] for s, e in snip.marks] == ["Refunds"]


def test_a_query_of_stop_words_only_marks_them() -> None:
    # nothing else is left: the lexical route searches them, and the snippet marks them
    snip = make_snippet("Here is how you do it: press the button.", "how do I", ["en"])
    assert [snip.text[s:e] for s, e in snip.marks] == ["how", "do"]


def test_french_elisions_and_stop_words_are_not_marked() -> None:
    text = "Pour changer l'adresse de livraison, ouvrez votre compte."
    snip = make_snippet(text, "comment changer l'adresse de livraison ?", ["fr"])
    assert [snip.text[s:e] for s, e in snip.marks] == ["changer", "adresse", "livraison"]
    snip = make_snippet("L’adresse est modifiée.", "l’adresse modifiee", ["fr"])
    assert [snip.text[s:e] for s, e in snip.marks] == ["adresse", "modifiée"]


def test_sentence_widened_with_neighbours_up_to_width() -> None:
    snip = make_snippet(PASSAGE, "gift cards", width=240)
    assert snip.text.endswith("Gift cards cannot be refunded.")
    assert len(snip.text) <= 240
    assert snip.start == 0 and not snip.truncated_left


def test_long_sentence_cut_to_densest_window_at_word_boundaries() -> None:
    text = " ".join(["filler"] * 60) + " warranty claims need a receipt " + " ".join(["x"] * 60)
    snip = make_snippet(text, "warranty receipt", width=60)
    assert len(snip.text) <= 60
    assert "warranty" in snip.text and "receipt" in snip.text
    assert not snip.text[0].isspace() and text[snip.start - 1] == " "


def test_no_word_in_common_uses_sentence_scores_else_first_body_sentence() -> None:
    spans = sentence_spans(PASSAGE)
    scores = [0.1] * len(spans)
    scores[-1] = 0.9
    by_score = make_snippet(PASSAGE, "voucher", width=40, sentence_scores=scores, skip_prefix=29)
    assert by_score.text == "Gift cards cannot be refunded." and by_score.marks == ()
    first = make_snippet(PASSAGE, "voucher", width=40, skip_prefix=29)
    assert first.text == "You can return unused items."


def test_trigram_scores_find_a_word_no_stem_matches() -> None:
    sentences = ["Our shop opens at nine.", "Delivery takes two days.", "Délivrance du reçu."]
    scores = trigram_scores(sentences, "deliverable")
    assert scores[1] > scores[2] > scores[0] == 0.0
    # " de" "del" "eli" "liv" "ive" "ver" "era" "rab" "abl" "ble" "le ": 6 of 11 in "delivery"
    assert scores[1] == 6 / 11
    assert trigram_scores(sentences, "?!") == [0.0, 0.0, 0.0]
    snip = make_snippet(" ".join(sentences), "deliverable", width=40,
                        sentence_scores=trigram_scores(sentences, "deliverable"))  # fmt: skip
    assert snip.text.startswith("Delivery takes two days.")


def test_marked_escapes_html() -> None:
    snip = make_snippet("Use <b> tags & refunds.", "refunds")
    assert snip.marked(escape=True) == "Use &lt;b&gt; tags &amp; <mark>refunds</mark>."


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="width"):
        make_snippet(PASSAGE, "refund", width=10)
    with pytest.raises(ValueError, match="sentence scores"):
        make_snippet(PASSAGE, "refund", sentence_scores=[1.0])


@given(st.text(min_size=1, max_size=400), st.text(min_size=1, max_size=40))
def test_window_is_a_slice_with_marks_inside(text: str, query: str) -> None:
    snip = make_snippet(text, query, width=80)
    assert text[snip.start : snip.end] == snip.text
    assert len(snip.text) <= max(80, len(text))
    for s, e in snip.marks:
        assert 0 <= s < e <= len(snip.text)


@pytest.mark.parametrize("mark", ["\u00ad", "\u200b", "\u2060"])
def test_an_invisible_character_in_the_query_still_marks_the_word(mark: str) -> None:
    snip = make_snippet("Change your password here.", f"pass{mark}word")
    assert [snip.text[s:e] for s, e in snip.marks] == ["password"]


def test_an_acronym_of_the_query_is_marked() -> None:
    snip = make_snippet("The IT helpdesk resets passwords; it opens at 8.", "IT helpdesk hours")
    assert [snip.text[s:e] for s, e in snip.marks] == ["IT", "helpdesk", "it"]
