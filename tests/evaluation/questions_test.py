"""Readers of question sets on small fixtures of each format."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from support import FIXTURES_ROOT

from kbsearch.errors import EvaluationError
from kbsearch.evaluation.formats import detect_format, load_questions
from kbsearch.evaluation.judging import set_qrels
from kbsearch.evaluation.questions import Relevant

FIXTURES = FIXTURES_ROOT / "eval"


def test_beir_folder_graded_and_split() -> None:
    qset = load_questions(FIXTURES / "beir")
    assert qset.format == "beir" and qset.rule == "document"
    assert qset.corpus == FIXTURES / "beir" / "corpus.jsonl"
    assert [q.qid for q in qset.questions] == ["q1", "q2", "q3"]  # q4 is not judged
    q1 = qset.questions[0]
    assert q1.text == "how long to return an item"
    assert q1.relevant == (Relevant(doc_id="d1", grade=2), Relevant(doc_id="d3", grade=1))
    assert qset.questions[2].relevant == ()  # score 0: judged, not relevant
    assert set_qrels(qset)["q1"] == {"d1": 2, "d3": 1}
    dev = load_questions(FIXTURES / "beir", split="dev")
    assert [q.qid for q in dev.questions] == ["q2"]
    with pytest.raises(EvaluationError, match="train"):
        load_questions(FIXTURES / "beir", split="train")


def test_policy_jsonl() -> None:
    qset = load_questions(FIXTURES / "policy_questions.jsonl")
    assert qset.format == "policy" and qset.rule == "section" and qset.access_aware
    p1, p2, p3, p4 = qset.questions
    assert p1.as_of == date(2025, 3, 1) and p1.public_ok and p1.kind == "answerable"
    assert p1.relevant == (
        Relevant(doc_id="returns", version="3", section="Opened items", access="public"),
    )
    assert p1.extra["wrong_version"] == ["returns@v4#opened-items"]
    assert p1.extra["reference_answer"] == "14 days."
    assert not p2.public_ok and p2.language == "fr"
    assert p2.relevant[0].version == "1"  # numbers become strings
    assert p3.abstain and not p3.has_relevant and p3.as_of is None
    assert p4.relevant == (Relevant(passage_id="fees@v2#table-of-fees"),)
    assert qset.kinds == ("answerable", "staff-only", "table")
    assert len(qset.only_kind("answerable")) == 2


def test_policy_passage_rule_uses_relevant_chunks() -> None:
    qset = load_questions(FIXTURES / "policy_questions.jsonl", rule="passage")
    assert qset.questions[0].relevant == (Relevant(passage_id="returns@v3#opened-items"),)


def test_tutorial_json() -> None:
    qset = load_questions(FIXTURES / "tutorial_questions.json")
    assert qset.format == "tutorial" and qset.rule == "document"
    q1, q2, q3 = qset.questions
    assert (q1.qid, q1.name, q1.relevant) == ("q1", "error code", (Relevant(doc_id="card-07"),))
    assert len(q2.relevant) == 2 and q3.relevant == ()


def test_trec_tsv_topics() -> None:
    qset = load_questions(FIXTURES / "trec" / "qrels.txt")
    assert qset.format == "trec"
    assert [(q.qid, q.text) for q in qset.questions] == [
        ("t1", "return an item"),
        ("t2", "warranty length"),
    ]
    assert set_qrels(qset) == {"t1": {"d1": 1}, "t2": {"d3": 2}}
    assert detect_format(FIXTURES / "trec") == "trec"


def test_trec_sgml_topics() -> None:
    qset = load_questions(FIXTURES / "trec_sgml")
    assert [(q.qid, q.text) for q in qset.questions] == [
        ("301", "returns policy"),
        ("302", "shipping delays"),
    ]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.jsonl", '{"id": "x"}\n', "question"),
        ("bad2.jsonl", "not json\n", "not JSON"),
        ("bad3.jsonl", '{"id": "x", "question": "q", "as_of": "01/02/2025"}\n', "date"),
        ("bad.json", '{"question": "q"}', "list"),
        ("bad2.json", '[{"question": "q", "relevant": "card-1"}]', "list of strings"),
        ("kind.jsonl", '{"id": "x", "question": "q", "kind": ["a"]}\n', "'kind' must be a string"),
        ("lang.jsonl", '{"id": "x", "question": "q", "language": {}}\n', "'language' must be"),
        ("abst.jsonl", '{"id": "x", "question": "q", "abstain": "false"}\n', "true or false"),
        ("pub.jsonl", '{"id": "x", "question": "q", "public_ok": "no"}\n', "true or false"),
        ("nest.jsonl", '{"id": "x", "question": {"text": "hi"}}\n', "non-empty string"),
        ("blank.jsonl", '{"id": "x", "question": "  "}\n', "non-empty string"),
        ("keys.jsonl", '{"id": "x", "question": "q", "keys": 42}\n', "keys: expected a list"),
        ("keys2.jsonl", '{"id": "x", "question": "q", "keys": "opened"}\n', "list of strings"),
        ("keys3.jsonl", '{"id": "x", "question": "q", "keys": [null]}\n', "list of strings"),
        ("keys4.jsonl", '{"id": "x", "question": "q", "keys": ["ok", " The "]}\n', "empty once"),
        ("deep.json", "[" * 100_000 + "]" * 100_000, "not JSON"),
        ("rel.jsonl", '{"id": "x", "question": "q", "relevant": [{"doc_id": null}]}\n', "'doc_id'"),
        ("rel2.jsonl", '{"id": "x", "question": "q", "relevant": [{"doc_id": ["a"]}]}\n', "text"),
        (
            "rel3.jsonl",
            '{"id": "x", "question": "q", "relevant": [{"doc_id": "a", "version": 1.5}]}\n',
            "'version'",
        ),
        (
            "rel4.jsonl",
            '{"id": "x", "question": "q", "relevant": [{"doc_id": "a", "section": 2}]}\n',
            "'section'",
        ),
        ("long.json", '[{"question": "q", "n": ' + "1" * 5000 + "}]", "not JSON"),
        # keys: a string was read one character a key; punctuation alone is held by no answer
        ("keys5.jsonl", '{"id": "x", "question": "q", "keys": "7 days"}\n', "list of strings"),
        ("key.jsonl", '{"id": "x", "question": "q", "keys": ["ok", "..."]}\n', "empty once"),
        ("the.jsonl", '{"id": "x", "question": "q", "keys": ["The"]}\n', "empty once"),
        ("empty.jsonl", "\n\n", "no questions"),
        ("empty.json", "[]", "no questions"),
    ],
)
def test_malformed_input(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(EvaluationError, match=message):
        load_questions(path)


@pytest.mark.parametrize("grade", ["inf", "-inf", "nan", "1e400"])
def test_a_grade_that_is_no_integer_is_refused(tmp_path: Path, grade: str) -> None:
    (tmp_path / "topics.tsv").write_text("1\tdelivery\n", encoding="utf-8")
    (tmp_path / "qrels.txt").write_text(f"1 0 d1 {grade}\n", encoding="utf-8")
    with pytest.raises(EvaluationError, match="grade must be a number"):
        load_questions(tmp_path)


def test_duplicate_question_id(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    path.write_text('{"id": "a", "question": "x"}\n{"id": "a", "question": "y"}\n')
    with pytest.raises(EvaluationError, match="duplicate"):
        load_questions(path)


def test_missing_path_and_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match="not found"):
        load_questions(tmp_path / "nope.jsonl")
    with pytest.raises(EvaluationError, match="neither|not a BEIR"):
        load_questions(tmp_path)
    with pytest.raises(EvaluationError, match="unknown question format"):
        load_questions(FIXTURES / "beir", format="csv")


def test_a_question_file_not_in_utf8_is_one_error_and_a_bom_is_read(tmp_path: Path) -> None:
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes('{"id": "x", "question": "où est ma commande ?"}\n'.encode("latin-1"))
    with pytest.raises(EvaluationError, match="not UTF-8 text"):
        load_questions(latin)
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + b'{"id": "x", "question": "where is my parcel?"}\n')
    assert [q.text for q in load_questions(bom).questions] == ["where is my parcel?"]
