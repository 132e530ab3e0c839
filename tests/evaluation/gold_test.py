"""Relevant items that no search can return are reported, not silently scored 0."""

from __future__ import annotations

from datetime import date

from kbsearch.evaluation.gold import unreachable_relevant
from kbsearch.evaluation.questions import Question, QuestionSet, Relevant
from kbsearch.records import Document

DOCS = [
    Document("returns", "1", "Returns", "en", "public", None, date(2026, 3, 31)),
    Document("returns", "2", "Returns", "en", "public", date(2026, 4, 1), None),
    Document("goodwill", "1", "Goodwill", "en", "staff"),
]


def ask(qid: str, item: Relevant, public_ok: bool = True, as_of: date | None = None) -> Question:
    return Question(qid, "q", as_of=as_of or date(2026, 5, 1), public_ok=public_ok,
                    relevant=(item,))  # fmt: skip


def test_each_kind_of_unreachable_item() -> None:
    questions = QuestionSet(
        (
            ask("ok", Relevant(doc_id="returns", version="2", section="Window")),
            ask("typo", Relevant(doc_id="retruns", version="2", section="Window")),
            ask("version", Relevant(doc_id="returns", version="7", section="Window")),
            ask("hidden", Relevant(doc_id="goodwill", version="1", section="Amount")),
            ask("staff", Relevant(doc_id="goodwill", version="1"), public_ok=False),
            ask("expired", Relevant(doc_id="returns", version="1", section="Window")),
            ask("passage", Relevant(passage_id="returns@v2#nope")),
        ),
        rule="section",
        format="policy",
        access_aware=True,
    )
    found = {u.qid: u.reason for u in unreachable_relevant(questions, DOCS, {"returns@v2#w"})}
    assert found == {
        "typo": "no such document in the index",
        "version": "no such version in the index",
        "hidden": "hidden from the question's audience",
        "expired": "not in force on 2026-05-01",
        "passage": "no such passage",
    }


def test_access_unaware_sets_are_searched_as_staff() -> None:
    questions = QuestionSet(
        (ask("q", Relevant(doc_id="goodwill")),), rule="document", format="beir"
    )
    assert unreachable_relevant(questions, DOCS) == []


def test_a_staff_passage_named_for_a_public_question_is_reported() -> None:
    questions = QuestionSet(
        (
            ask("c1", Relevant(passage_id="goodwill@v1#amount")),
            ask("c2", Relevant(passage_id="returns@v2#w")),
            ask("c3", Relevant(passage_id="goodwill@v1#amount"), public_ok=False),
        ),
        rule="section",
        format="policy",
        access_aware=True,
    )
    access = {"goodwill@v1#amount": "staff", "returns@v2#w": "public"}
    found = [(u.qid, u.reason) for u in unreachable_relevant(questions, DOCS, access)]
    assert found == [("c1", "hidden from the question's audience")]


def test_a_section_no_passage_of_the_document_is_in_is_reported() -> None:
    questions = QuestionSet(
        (
            ask("ok", Relevant(doc_id="returns", version="2", section="Window")),
            ask("nested", Relevant(doc_id="returns", version="2", section="Refund window")),
            ask("misspelt", Relevant(doc_id="returns", version="2", section="Widnow")),
            ask("other version", Relevant(doc_id="returns", section="Exchanges")),
            ask("any version", Relevant(doc_id="returns", section="Window")),
        ),
        rule="section",
        format="policy",
        access_aware=True,
    )
    sections = {
        ("returns", "1"): {"Exchanges"},
        ("returns", "2"): {"Window", "Money back > Refund window"},
    }
    found = [
        (u.qid, u.item, u.reason) for u in unreachable_relevant(questions, DOCS, None, sections)
    ]
    # version 1 (the only one with "Exchanges") is no longer in force on the question's date
    assert found == [
        ("misspelt", "returns@v2#Widnow", "no such section"),
        ("other version", "returns#Exchanges", "no such section"),
    ]
    assert unreachable_relevant(questions, DOCS) == unreachable_relevant(questions, DOCS, None, {
        ("returns", "2"): {"Window", "Refund window", "Widnow", "Exchanges"}
    })  # fmt: skip
