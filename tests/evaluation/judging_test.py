"""Judging hits against relevant items: passage, document, document+version+section."""

from __future__ import annotations

import pytest

import kbsearch.index.chunking  # noqa: F401
from kbsearch.errors import EvaluationError
from kbsearch.evaluation.judging import judge_hits, matches, question_qrels, relevant_key
from kbsearch.evaluation.metrics import evaluate_run
from kbsearch.evaluation.questions import Question, Relevant
from kbsearch.records import Hit


def hit(passage_id: str, section: str = "", rank: int = 1) -> Hit:
    doc, _, rest = passage_id.partition("@v")
    version = rest.partition("#")[0]
    return Hit(rank, passage_id, doc, version, section, 1.0, "text")


V3 = Relevant(doc_id="returns", version="3", section="Opened items")


def test_other_version_does_not_count() -> None:
    assert matches(V3, hit("returns@v3#opened-items", "Opened items"))
    assert not matches(V3, hit("returns@v4#opened-items", "Opened items"))
    question = Question("q", "opened items?", relevant=(V3,))
    run = judge_hits(question, [hit("returns@v4#opened-items", "Opened items")], "section")
    scores = evaluate_run({"q": question_qrels(question)}, {"q": run}, ["hit@10"])
    assert scores.means["hit@10"] == 0.0


def test_section_matches_last_component_of_a_nested_hit_section() -> None:
    assert matches(V3, hit("returns@v3#opened-items", "Returns > Opened items"))
    assert not matches(V3, hit("returns@v3#refunds", "Refunds"))
    assert not matches(V3, hit("other@v3#opened-items", "Opened items"))
    # slug comparison: accents and case do not matter
    item = Relevant(doc_id="d", version="1", section="Délais de rétractation")
    assert matches(item, hit("d@v1#delais-de-retractation", "DELAIS de retractation"))


def test_a_sub_section_passage_lies_inside_its_relevant_section() -> None:
    # passages follow the heading hierarchy: "Opened items > Refund times" is inside the
    # relevant section; a sibling section is not
    assert matches(V3, hit("returns@v3#opened-items/refund-times", "Opened items > Refund times"))
    assert not matches(V3, hit("returns@v3#sealed-items/refund-times", "Sealed items > Refund"))


def test_split_section_counts_once_at_its_first_rank() -> None:
    question = Question("q", "?", relevant=(V3,))
    hits = [
        hit("returns@v3#refunds", "Refunds", 1),
        hit("returns@v3#opened-items", "Opened items", 2),
        hit("returns@v3#opened-items-2", "Opened items", 3),
        hit("faq@v1#top", "", 4),
    ]
    run = judge_hits(question, hits, "section")
    assert run == ["returns@v3#refunds", relevant_key(V3), "faq@v1#top"]


def test_a_section_of_any_version_is_judged_under_a_key_without_version() -> None:
    item = Relevant(doc_id="returns", section="Opened items")
    question = Question("q", "?", relevant=(item,))
    hits = [
        hit("returns@v3#refunds", "Refunds", 1),
        hit("returns@v4#opened-items", "Opened items", 2),
    ]
    assert question_qrels(question) == {"returns#opened-items": 1}  # it read returns@vNone#...
    assert judge_hits(question, hits, "section") == ["returns@v3#refunds", "returns#opened-items"]


def test_document_rule_collapses_passages_of_one_document() -> None:
    question = Question("q", "?", relevant=(Relevant(doc_id="b"),))
    hits = [hit("a@v1#x"), hit("a@v1#y"), hit("b@v1#x"), hit("b@v1#z")]
    assert judge_hits(question, hits, "document") == ["a", "b"]


def test_passage_rule() -> None:
    question = Question("q", "?", relevant=(Relevant(passage_id="a@v1#y"),))
    hits = [hit("a@v1#x"), hit("a@v1#y")]
    assert judge_hits(question, hits, "passage") == ["a@v1#x", "a@v1#y"]
    assert not matches(Relevant(passage_id="a@v1#y"), hit("a@v1#x"))


def test_abstain_question_has_no_relevant() -> None:
    question = Question("q", "?", abstain=True, relevant=(V3,))
    assert question_qrels(question) == {}
    assert not question.has_relevant


def test_same_passage_twice_is_an_error() -> None:
    question = Question("q", "?", relevant=(V3,))
    with pytest.raises(EvaluationError, match="twice"):
        judge_hits(question, [hit("a@v1#x"), hit("a@v1#x")], "passage")


def test_unknown_rule() -> None:
    with pytest.raises(EvaluationError, match="rule"):
        judge_hits(Question("q", "?"), [hit("a@v1#x")], "paragraph")
