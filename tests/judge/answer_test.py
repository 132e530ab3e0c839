"""The cited answer and the abstention text."""

from __future__ import annotations

from datetime import date

from kbsearch.judge.answer import NO_ANSWER, compose, heading_prefix, render
from kbsearch.judge.confidence import Decision
from kbsearch.records import Document, Hit

TEXT = (
    "Delivery\nLost parcel\nWe track every parcel. A lost parcel is refunded in full within "
    "5 days. Ask the courier first."
)
HIT = Hit(1, "delivery@v1#lost-parcel", "delivery", "1", "Lost parcel", 0.3, TEXT)
DOC = Document(
    "delivery", "1", "Delivery", "en", "public", date(2025, 1, 1), None, source="delivery.md"
)


def test_answer_is_the_best_sentence_with_its_citation() -> None:
    decision = Decision(True, 0.9, 0.4)
    answer = compose("is a lost parcel refunded", decision, [HIT], DOC, ["en"])
    assert answer.answerable
    assert answer.text == "A lost parcel is refunded in full within 5 days."
    assert TEXT[answer.start : answer.end].strip() == answer.text
    assert answer.citation is not None and answer.citation.title == "Delivery"
    data = answer.to_dict()
    assert data["citation"]["effective_from"] == "2025-01-01"
    assert data["citation"]["effective_to"] is None
    printed = render(answer)
    assert "Delivery > Lost parcel (version 1, in force from 2025-01-01)" in printed
    assert "delivery@v1#lost-parcel" in printed and "delivery.md" in printed


def test_abstention_keeps_the_nearest_passages() -> None:
    answer = compose("student discount", Decision(False, 0.1, 0.4), [HIT], DOC, ["en"])
    assert not answer.answerable and answer.text is None and answer.citation is None
    assert answer.to_dict()["answer"] == NO_ANSWER
    printed = render(answer)
    assert printed.startswith(NO_ANSWER + " (confidence 0.10, below 0.40)")
    assert "1. delivery@v1#lost-parcel" in printed


def test_no_hit_abstains() -> None:
    answer = compose("anything", Decision(True, 0.9, 0.4), [], None, ["en"])
    assert not answer.answerable


def test_heading_prefix_skips_title_and_heading_lines() -> None:
    assert heading_prefix(TEXT, ["Delivery", "Lost parcel"]) == len("Delivery\nLost parcel\n")
    assert heading_prefix("Body only.", ["Delivery"]) == 0


def test_the_answer_keeps_a_sentence_whole_across_a_semicolon() -> None:
    from kbsearch.judge.answer import best_sentence

    text = "Stores\nWe have no physical stores; every order is delivered to your door. Call us."
    span = best_sentence(text, "do you have a store in Paris?", ["en"], None, len("Stores\n"))
    assert span.text == "We have no physical stores; every order is delivered to your door."


def test_a_passage_without_a_section_is_cited_by_its_title_alone() -> None:
    card = Hit(1, "gc-1@v1#top", "gc-1", "1", "", 0.3, "GC-1\n\nA gift card has no refund.")
    doc = Document("gc-1", "1", "GC-1", "en", "public", None, None, format="json")
    printed = render(compose("gift card refund", Decision(True, 0.9, 0.4), [card], doc, ["en"]))
    assert "Source: GC-1 (version 1, no effective dates)" in printed and " > " not in printed
