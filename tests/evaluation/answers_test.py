"""Answer scoring: SQuAD's normalisation, holding a gold answer or all keys, the outcomes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbsearch.errors import EvaluationError
from kbsearch.evaluation.answers import (
    Gold,
    Judged,
    by_min_confidence,
    gold_of,
    holds,
    judge,
    normalize_answer,
    read_gold_answers,
    summarise,
    summarise_groups,
)


def test_normalisation_is_squads() -> None:
    # lower case, ASCII punctuation out, articles a/an/the out, white space collapsed
    assert normalize_answer("The  Eiffel Tower, in Paris!") == "eiffel tower in paris"
    assert normalize_answer("An apple a day") == "apple day"
    # kept as published: French articles and typographic punctuation stay
    assert normalize_answer("L’Ougandais, le roi") == "l’ougandais le roi"
    assert normalize_answer("14,2 milliards") == "142 milliards"


def test_holding_is_on_word_boundaries() -> None:
    assert holds("Il y avait 100 000 habitants.", "100 000")
    assert not holds("Il y avait 150 habitants.", "50")
    assert holds("It costs £1,000.", "£1,000")
    assert not holds("anything", "!!")  # an empty normalised gold is never held


def test_gold_answers_or_all_keys() -> None:
    assert Gold(answers=("Richter", "pasteur")).right("Le pasteur Richter")
    assert Gold(answers=("Richter",)).right("richter.")
    keys = Gold(keys=("48 hours", "photos"))
    assert keys.right("Send photos within 48 hours.")
    assert not keys.right("Send photos soon.")
    assert not keys.right(None)
    assert not Gold().right("anything")  # no gold: never right


def test_a_key_is_held_across_the_punctuation_squad_joins() -> None:
    text = "one file is renamed to <filename>.sync-conflict-<date>.<ext>; it costs £69.00"
    keys = Gold(keys=("sync-conflict", "£69"))
    assert keys.right(text)
    assert not Gold(keys=("sync",)).right("a syncconflict file")  # still whole words
    assert not Gold(keys=("50",)).right("It costs £1,050.")
    # gold answer strings keep SQuAD's rule alone
    assert not Gold(answers=("sync-conflict",)).right(text)


@pytest.mark.parametrize(
    ("text", "key", "held"),
    [
        ("the ratio is 3, 5 or more", "3.5", False),  # a decimal mark is no space
        ("it needs 3.5 GB", "3", False),
        ("since v1.10", "1", False),
        ("1,000 users", "1", False),
        ("ip 10.0.0.1", "10", False),
        ("since version 2.0", "2", True),  # zero decimals dropped
        ("costs £1,000.00", "£1,000", True),
        ("69,00 € par an", "69 €", True),
        ("ports 80/443", "80 443", True),  # a slash between digits is still a space
        ("l’option --home", "l'option", True),  # typographic punctuation as ASCII's
        ("de 2–3 jours", "2-3", True),
        ("«quoted» here", "« quoted »", True),
        ("see 3 below", "§3", False),  # a section mark is no punctuation to drop
        ("add a CNAME record", "A-record", False),  # an article joined by a mark stays
        ("an A-record for the host", "A-record", True),
        ("it is (the) end", "the end", True),
    ],
)
def test_a_key_across_punctuation_keeps_a_numbers_marks(text: str, key: str, held: bool) -> None:
    assert Gold(keys=(key,)).right(text) is held


def test_gold_of_prefers_gold_strings_to_keys() -> None:
    assert gold_of({"keys": ["a"]}, {"q1": ["x"]}, "q1") == Gold(answers=("x",))
    assert gold_of({"keys": ["a"]}, {}, "q1") == Gold(keys=("a",))


def _j(answerable: bool, verdict: str, right: bool, length: int | None = 10,
       cited: bool | None = True, kind: str = "k", language: str = "en") -> Judged:  # fmt: skip
    return Judged("q", kind, language, answerable, verdict, right, length, cited)


def test_each_verdict_gets_its_outcome() -> None:
    assert _j(True, "answered", True).outcome == "right answer"
    assert _j(True, "answered", False).outcome == "answered, misses the gold"
    assert _j(True, "uncertain", True).outcome == "uncertain, right"
    assert _j(True, "uncertain", False).outcome == "uncertain, misses the gold"
    assert _j(True, "dont_say", False).outcome == "wrong refusal"
    assert _j(False, "dont_say", False).outcome == "right refusal"
    assert _j(False, "answered", False).outcome == "wrong answer"
    assert _j(False, "uncertain", False).outcome == "uncertain, none"
    with pytest.raises(EvaluationError):
        _j(True, "maybe", False)


def test_judge_drops_the_text_of_a_refusal() -> None:
    refused = judge("q", "k", "en", True, "dont_say", "holds x", Gold(("x",)), None)
    assert not refused.right and refused.length is None
    shown = judge("q", "k", "en", True, "uncertain", "holds x", Gold(("x",)), True)
    assert shown.right and shown.length == 7


def test_a_refusal_still_says_whether_its_span_holds_the_gold() -> None:
    refused = judge("q", "k", "en", True, "dont_say", None, Gold(("x",)), None, 0.2, "holds x")
    assert not refused.right and refused.span_right and refused.confidence == 0.2
    assert judge("q", "k", "en", True, "dont_say", None, Gold(("x",)), None).span_right is None


def _c(answerable: bool, confidence: float | None, span_right: bool | None) -> Judged:
    verdict = "answered" if confidence is not None and confidence >= 0.5 else "dont_say"
    return Judged("q", "k", "en", answerable, verdict, False, None, None, confidence, span_right)


def test_answers_by_minimum_confidence_by_hand() -> None:
    items = [
        _c(True, 0.9, True),
        _c(True, 0.4, True),
        _c(True, 0.3, False),
        _c(True, 0.8, None),  # no span: never answered
        _c(False, 0.35, False),
        _c(False, 0.1, False),
        _c(True, None, True),  # no confidence: not counted
    ]
    low, mid, high = by_min_confidence(items, [0.5, 0.0, 0.35])
    assert low == {"min_confidence": 0.0, "answered": 5, "right": 2, "without": 1,
                   "unanswerable": 2, "right_share": 2 / 4, "precision": 2 / 3}  # fmt: skip
    assert (mid["answered"], mid["right"], mid["without"], mid["unanswerable"]) == (3, 2, 0, 1)
    assert (high["answered"], high["right"], high["precision"]) == (1, 1, 1.0)
    assert by_min_confidence([_c(False, 0.9, False)], [0.5])[0]["precision"] is None
    with pytest.raises(EvaluationError, match="from 0 to 1"):
        by_min_confidence(items, [1.5])


def test_summary_by_hand() -> None:
    items = [
        _j(True, "answered", True, 100, True),
        _j(True, "answered", False, 300, True),
        _j(True, "uncertain", True, 50, False),
        _j(True, "dont_say", False, None, None),
        _j(False, "dont_say", False, None, None, language="fr"),
    ]
    s = summarise(items)
    assert (s["questions"], s["answerable"], s["unanswerable"]) == (5, 4, 1)
    assert s["answered_right"] == 1 / 4 and s["answered_wrong"] == 1 / 4
    assert s["shown_right"] == 2 / 4
    assert s["cited_relevant"] == 2 and s["right_when_cited_relevant"] == 1 / 2
    assert s["median_length"] == 100  # of 100, 300, 50
    assert s["verdicts"] == {"answered": 2, "uncertain": 1, "dont_say": 2}
    assert s["outcomes"]["right refusal"] == 1 and s["outcomes"]["wrong refusal"] == 1
    groups = summarise_groups(items)
    assert groups["language"]["fr"]["questions"] == 1 and groups["all"]["all"] == s


def test_gold_answers_file(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text('{"_id": "q1", "answers": ["a", "b"]}\n\n{"_id": 2, "answers": []}\n')
    assert read_gold_answers(path) == {"q1": ("a", "b"), "2": ()}
    path.write_text('{"_id": "q1"}\n')
    with pytest.raises(EvaluationError, match=":1:"):
        read_gold_answers(path)
    path.write_text('{"_id": "q1", "answers": []}\nnot JSON\n')
    with pytest.raises(EvaluationError, match=":2: expected"):
        read_gold_answers(path)
    with pytest.raises(EvaluationError):
        read_gold_answers(tmp_path / "missing.jsonl")


def test_a_gold_answers_file_not_in_utf8_is_one_error_and_a_bom_is_read(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_bytes('{"_id": "q1", "answers": ["où"]}\n'.encode("latin-1"))
    with pytest.raises(EvaluationError, match="not UTF-8 text"):
        read_gold_answers(path)
    path.write_bytes(b"\xef\xbb\xbf" + '{"_id": "q1", "answers": ["où"]}\n'.encode())
    assert read_gold_answers(path) == {"q1": ("où",)}


def test_a_question_without_kind_or_language_is_grouped_as_unknown() -> None:
    from kbsearch.evaluation.answers import judge_question
    from kbsearch.evaluation.questions import Question

    judged = judge_question(Question("q1", "hot tubs?", abstain=True), "dont_say", None, {}, None)
    assert (judged.kind, judged.language) == ("unknown", "unknown")
