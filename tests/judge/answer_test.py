"""The cited answer, the uncertain one and "the documents don't say"."""

from __future__ import annotations

from datetime import date

from kbsearch.judge.answer import (
    NO_ANSWER,
    UNCERTAIN_NOTE,
    compose,
    heading_prefix,
    render,
    verdict,
)
from kbsearch.judge.span import Span
from kbsearch.judge.verdict import Decision
from kbsearch.records import Document, Hit

TEXT = (
    "Delivery\nLost parcel\nWe track every parcel. A lost parcel is refunded in full within "
    "5 days. Ask the courier first."
)
HIT = Hit(1, "delivery@v1#lost-parcel", "delivery", "1", "Lost parcel", 0.3, TEXT)
DOC = Document(
    "delivery", "1", "Delivery", "en", "public", date(2025, 1, 1), None, source="delivery.md"
)
DOCS = {("delivery", "1"): DOC}


# the span is the best run of up to three sentences of one paragraph within 250 characters (the
# answer often stands just before or after the sentence that repeats the question's words)
SPAN = (
    "We track every parcel. A lost parcel is refunded in full within 5 days. Ask the courier first."
)


def test_answer_is_the_best_span_with_its_citation() -> None:
    decision = Decision(True, 0.9, 0.4)
    answer = compose("is a lost parcel refunded", decision, [HIT], DOCS, ["en"])
    assert answer.answerable and answer.verdict == "answered"
    assert answer.text == SPAN
    assert answer.span is not None and answer.span.coverage == 1.0
    assert TEXT[answer.start : answer.end] == answer.text
    assert answer.citation is not None and answer.citation.title == "Delivery"
    data = answer.to_dict()
    assert data["verdict"] == "answered" and data["note"] is None
    assert data["citation"]["effective_from"] == "2025-01-01"
    assert data["citation"]["effective_to"] is None
    printed = render(answer)
    assert "Delivery > Lost parcel (version 1, in force from 2025-01-01)" in printed
    assert "delivery@v1#lost-parcel" in printed and "delivery.md" in printed
    assert "Answered (confidence 0.90, answers from 0.40)" in printed


def test_abstention_keeps_the_nearest_passages() -> None:
    answer = compose("student discount", Decision(False, 0.1, 0.4), [HIT], DOCS, ["en"])
    assert not answer.answerable and answer.text is None and answer.citation is None
    assert answer.verdict == "dont_say" and answer.to_dict()["answer"] == NO_ANSWER
    printed = render(answer)
    assert printed.startswith(NO_ANSWER + " (confidence 0.10, below 0.40)")
    assert "1. delivery@v1#lost-parcel" in printed


def test_in_the_uncertain_band_the_span_is_shown_and_said_to_maybe_not_answer() -> None:
    # the old two-way answer abstained here; the band [0.3, 0.4) now shows the best span
    decision = Decision(False, 0.35, 0.4, floor=0.3)
    answer = compose("is a lost parcel refunded", decision, [HIT], DOCS, ["en"])
    assert answer.verdict == "uncertain" and not answer.answerable
    assert answer.text == SPAN
    assert answer.citation is not None
    data = answer.to_dict()
    assert data["note"] == UNCERTAIN_NOTE and data["uncertain_from"] == 0.3
    printed = render(answer)
    assert printed.startswith(UNCERTAIN_NOTE + ":")
    assert "Uncertain (confidence 0.35, answers from 0.40)" in printed
    assert "Other passages" not in printed  # the cited passage is the only hit


def test_an_uncertain_answer_lists_the_other_top_passages_for_checking() -> None:
    # the right answer may be the second hit: an uncertain answer says where else to look
    other = Hit(2, "returns@v1#abroad", "returns", "1", "Abroad", 0.2, "Returns\n\n30 jours.")
    decision = Decision(False, 0.35, 0.4, floor=0.3)
    answer = compose("is a lost parcel refunded", decision, [HIT, other], DOCS, ["en"])
    printed = render(answer)
    assert answer.citation is not None and answer.citation.passage_id == HIT.passage_id
    listed = printed.split("Other passages, for checking:\n")[1].splitlines()
    assert listed == ["  2. returns@v1#abroad  Abroad"]
    answered = render(
        compose("is a lost parcel refunded", Decision(True, 0.9, 0.4), [HIT, other], DOCS, ["en"])
    )
    assert "Other passages" not in answered


def test_the_span_and_verdict_the_stage_judged_are_the_ones_shown() -> None:
    # the stage judged "Ask the courier first." (not the span compose would choose) and said
    # uncertain although the confidence reaches the threshold: both are shown as judged
    start = TEXT.index("Ask the courier")
    span = Span(2, start, len(TEXT), 0.1, 0.0, 0.0, 0.0)  # passage 2 of the stage's list
    decision = Decision(True, 0.9, 0.4, verdict="uncertain", span=span, span_passage=HIT.passage_id)
    answer = compose("is a lost parcel refunded", decision, [HIT], DOCS, ["en"])
    assert answer.verdict == "uncertain" and answer.text == "Ask the courier first."
    assert answer.span is not None and answer.span.passage == 0  # the first of these hits
    assert answer.citation is not None and answer.citation.passage_id == HIT.passage_id


def test_a_refusal_keeps_its_span_counted_in_its_nearest_list() -> None:
    # the first hit has no document (not a candidate): the span's passage is counted in the
    # answer's nearest list, so span_text reads the passage the span lies in
    orphan = Hit(1, "gone@v1#top", "gone", "1", "", 0.4, "Nothing of a parcel here.")
    start = TEXT.index("Ask the courier")
    span = Span(0, start, len(TEXT), 0.1, 0.0, 0.0, 0.0)
    refused = Decision(False, 0.1, 0.4, verdict="dont_say", span=span, span_passage=HIT.passage_id)
    answer = compose("is a lost parcel refunded", refused, [orphan, HIT], DOCS, ["en"])
    assert answer.verdict == "dont_say" and answer.text is None
    assert answer.span is not None and answer.span.passage == 1
    assert answer.span_text == "Ask the courier first."
    shown = Decision(True, 0.9, 0.4, span=span, span_passage=HIT.passage_id)
    answered = compose("is a lost parcel refunded", shown, [orphan, HIT], DOCS, ["en"])
    assert answered.span_text == answered.text == "Ask the courier first."


def test_verdict_bands() -> None:
    assert verdict(0.5, 0.4, 0.3, 1.0) == "answered"
    assert verdict(0.35, 0.4, 0.3, 1.0) == "uncertain"
    assert verdict(0.25, 0.4, 0.3, 1.0) == "dont_say"
    assert verdict(0.5, 0.4, 0.3, None) == "dont_say"  # no span: nothing to show


def test_no_hit_abstains() -> None:
    answer = compose("anything", Decision(True, 0.9, 0.4), [], {}, ["en"])
    assert not answer.answerable and answer.verdict == "dont_say"


def test_the_citation_names_the_passage_the_span_came_from() -> None:
    other = Hit(1, "delivery@v1#times", "delivery", "1", "Times", 0.4, "Times\nWe deliver daily.")
    answer = compose(
        "is a lost parcel refunded", Decision(True, 0.9, 0.4), [other, HIT], DOCS, ["en"]
    )
    assert answer.citation is not None and answer.citation.passage_id == HIT.passage_id
    assert answer.text == SPAN


def test_heading_prefix_skips_title_and_heading_lines() -> None:
    assert heading_prefix(TEXT, ["Delivery", "Lost parcel"]) == len("Delivery\nLost parcel\n")
    assert heading_prefix("Body only.", ["Delivery"]) == 0


def test_the_answer_keeps_a_sentence_whole_across_a_semicolon() -> None:
    text = "Stores\nWe have no physical stores; every order is delivered to your door. Call us."
    hit = Hit(1, "s@v1#stores", "s", "1", "Stores", 0.3, text)
    doc = Document("s", "1", "Shop", "en", "public", None, None)
    answer = compose(
        "do you have a store in Paris?", Decision(True, 0.9, 0.4), [hit], {("s", "1"): doc}, ["en"]
    )
    assert str(answer.text).startswith(
        "We have no physical stores; every order is delivered to your door."
    )


def test_a_passage_without_a_section_is_cited_by_its_title_alone() -> None:
    card = Hit(1, "gc-1@v1#top", "gc-1", "1", "", 0.3, "GC-1\n\nA gift card has no refund.")
    doc = Document("gc-1", "1", "GC-1", "en", "public", None, None, format="json")
    answer = compose(
        "gift card refund", Decision(True, 0.9, 0.4), [card], {("gc-1", "1"): doc}, ["en"]
    )
    printed = render(answer)
    assert "Source: GC-1\n" in printed and " > " not in printed  # version 1, no dates: not said


def test_sentence_cosines_given_by_passage_choose_among_its_sentences() -> None:
    filler = " ".join(["Stores open every day from eight until eight."] * 12)  # a long body
    text = (
        "Returns\nPick a store to collect from at checkout.\n\n"
        f"They need photo ID to collect it.\n\n{filler}"
    )
    hit = Hit(1, "c@v1#collect", "c", "1", "Returns", 0.3, text)
    doc = Document("c", "1", "Returns", "en", "public", None, None)
    first = text.index("Pick"), text.index("checkout.") + len("checkout.")
    second = text.index("They"), text.index("it.") + 3
    args = ("where to collect", Decision(True, 0.9, 0.4), [hit], {("c", "1"): doc})
    assert str(compose(*args, ["en"]).text).startswith("Pick")
    cosines = {hit.passage_id: {first: 0.80, second: 0.86}}
    assert compose(*args, ["en"], sentence_cosines=cosines).text == text[second[0] : second[1]]


def test_a_nearest_passage_without_a_section_ends_its_line_without_blanks() -> None:
    card = Hit(1, "gc-1@v1#top", "gc-1", "1", "", 0.3, "GC-1\n\nA gift card has no refund.")
    doc = Document("gc-1", "1", "GC-1", "en", "public", None, None, format="json")
    answer = compose(
        "gift card refund", Decision(False, 0.1, 0.4), [card], {("gc-1", "1"): doc}, ["en"]
    )
    printed = render(answer)
    assert "  1. gc-1@v1#top\n" in printed + "\n"
    assert all(line == line.rstrip() for line in printed.split("\n"))


def test_a_span_under_a_merged_question_is_cited_by_that_question() -> None:
    # an FAQ entry too small to stand alone: its question is a line of the parent's passage;
    # the answer from under it names it, the passage id stays the parent's
    text = (
        "Warranty\nWhat it does not cover\n\nThe warranty does not cover crash damage or"
        " racing.\n\nIs the e-bike battery covered?\n\nThe battery of an e-bike is covered"
        " for 3 years.\n\nCustomer service\n\nCall us on weekdays for a battery check."
    )
    hit = Hit(1, "warranty@v1#what-it-does-not-cover", "warranty", "1", "What it does not cover",
              0.9, text)  # fmt: skip
    doc = Document("warranty", "1", "Warranty", "en", "public", None, None, source="w.md")
    docs = {("warranty", "1"): doc}
    answer = compose(
        "is the e-bike battery covered?", Decision(True, 0.9, 0.4), [hit], docs, ["en"]
    )
    assert answer.text == "The battery of an e-bike is covered for 3 years."
    assert answer.citation is not None
    assert answer.citation.section == "What it does not cover > Is the e-bike battery covered?"
    assert answer.citation.passage_id == "warranty@v1#what-it-does-not-cover"
    assert "Source: Warranty > What it does not cover > Is the e-bike" in render(answer)
    # a span above the sub-heading: the passage's own section
    above = compose("is crash damage covered?", Decision(True, 0.9, 0.4), [hit], docs, ["en"])
    assert above.text is not None and above.text.startswith("The warranty does not cover")
    assert above.citation is not None and above.citation.section == "What it does not cover"
    # under a short line that asks nothing (a heading, or a label, a caption): not named
    call = compose("when can I call for a battery check?", Decision(True, 0.9, 0.4), [hit], docs,
                   ["en"])  # fmt: skip
    assert call.text == "Call us on weekdays for a battery check."
    assert call.citation is not None and call.citation.section == "What it does not cover"
