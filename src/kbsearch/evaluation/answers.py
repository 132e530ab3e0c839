"""Scoring answers: does the answer hold a gold answer, and was its verdict the right one?

A question's gold is either gold answer strings (SQuAD-style sets such as PIAF: the answer
is right when it holds one of them) or ``keys`` (the policy assistant's question sets: the
answer is right when it holds all of them). Holding is containment after SQuAD's answer
normalisation, on word boundaries (so "50" is not held by "150"):

    normalize_answer(s) = white_space_fix(remove_articles(remove_punc(lower(s))))

from the official SQuAD v1.1 evaluation script (Rajpurkar et al. 2016, "SQuAD: 100,000+
Questions for Machine Comprehension of Text", ``evaluate-v1.1.py``): lower case, ASCII
punctuation (``string.punctuation``) removed, the English articles "a", "an", "the" removed,
white space collapsed. It is kept as published (no French articles, no typographic
punctuation), so the figures compare with other systems scored by it.

Each question gets one outcome (:data:`OUTCOMES`) from its verdict (``answered``,
``uncertain``, ``dont_say``), whether it is answerable and whether the answer is right:

============  =========================  ==============================  ===================
verdict       answerable, right          answerable, not right           unanswerable
============  =========================  ==============================  ===================
answered      ``right answer``           ``answered, misses the gold``   ``wrong answer``
uncertain     ``uncertain, right``       ``uncertain, misses the gold``  ``uncertain, none``
dont_say      ``wrong refusal``          ``wrong refusal``               ``right refusal``
============  =========================  ==============================  ===================

("The gold": a gold answer string, or all of the question's keys.) A question without a kind
or a language is grouped under :data:`UNKNOWN`.
"""

from __future__ import annotations

import re
import statistics
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kbsearch.errors import EvaluationError
from kbsearch.evaluation.questions import Question
from kbsearch.jsonl import json_lines
from kbsearch.records import Hit

ANSWERED, UNCERTAIN, DONT_SAY = "answered", "uncertain", "dont_say"
VERDICTS = (ANSWERED, UNCERTAIN, DONT_SAY)
OUTCOMES = (
    "right answer",
    "answered, misses the gold",
    "uncertain, right",
    "uncertain, misses the gold",
    "wrong refusal",
    "right refusal",
    "wrong answer",
    "uncertain, none",
)
UNKNOWN = "unknown"  # the group of a question without a kind or a language
ARTICLES = re.compile(r"\b(a|an|the)\b")
PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD v1.1's ``normalize_answer`` (module docstring), exactly."""
    lowered = text.lower()
    no_punctuation = "".join(ch for ch in lowered if ch not in PUNCTUATION)
    return " ".join(ARTICLES.sub(" ", no_punctuation).split())


def holds(answer: str, gold: str) -> bool:
    """True when the normalised ``answer`` contains the normalised ``gold`` on word
    boundaries; an empty normalised gold is never held."""
    wanted = normalize_answer(gold)
    return bool(wanted) and f" {wanted} " in f" {normalize_answer(answer)} "


def holds_any(answer: str, golds: Iterable[str]) -> bool:
    """The answer holds at least one of ``golds`` (SQuAD-style gold answers)."""
    return any(holds(answer, g) for g in golds)


def holds_all(answer: str, keys: Sequence[str]) -> bool:
    """The answer holds every one of ``keys`` (at least one key)."""
    return bool(keys) and all(holds(answer, k) for k in keys)


@dataclass(frozen=True)
class Gold:
    """What a right answer holds: any of ``answers``, or all of ``keys``."""

    answers: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()

    def right(self, answer: str | None) -> bool:
        """Whether ``answer`` (``None``: no answer) holds the gold."""
        if answer is None:
            return False
        if self.answers:
            return holds_any(answer, self.answers)
        return holds_all(answer, self.keys)

    def __bool__(self) -> bool:
        return bool(self.answers or self.keys)


def read_gold_answers(path: Path) -> dict[str, tuple[str, ...]]:
    """``{question id: gold answer strings}`` from a JSONL file of ``{"_id", "answers"}``
    (PIAF's ``answers.jsonl``).

    Raises:
        EvaluationError: unreadable, not UTF-8, not JSON, a record without ``_id`` or
            ``answers``.
    """
    out: dict[str, tuple[str, ...]] = {}

    def bad_line(number: int, _: ValueError | RecursionError) -> EvaluationError:
        return EvaluationError(f"{path}:{number}: expected {{'_id', 'answers'}}")

    try:
        for number, record in json_lines(path, bad_line, encoding="utf-8-sig"):
            try:
                qid, answers = str(record["_id"]), record["answers"]
            except (KeyError, TypeError):
                raise bad_line(number, ValueError()) from None
            if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
                raise EvaluationError(f"{path}:{number}: answers must be a list of strings")
            out[qid] = tuple(answers)
    except OSError as exc:
        raise EvaluationError(f"cannot read gold answers {path}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise EvaluationError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    return out


@dataclass(frozen=True)
class Judged:
    """One question's answer, judged: ``answerable`` (it has a relevant passage and is not
    marked abstain), ``verdict``, ``right`` (the answer text holds the gold), ``length`` of
    the answer text in characters (``None`` without one), ``cited_relevant`` (the cited
    passage is a relevant one; ``None`` without a citation)."""

    qid: str
    kind: str
    language: str
    answerable: bool
    verdict: str
    right: bool
    length: int | None
    cited_relevant: bool | None

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise EvaluationError(f"unknown verdict {self.verdict!r}")

    @property
    def outcome(self) -> str:
        """One of :data:`OUTCOMES` (module docstring's table)."""
        if not self.answerable:
            return {ANSWERED: "wrong answer", UNCERTAIN: "uncertain, none"}.get(
                self.verdict, "right refusal"
            )
        if self.verdict == DONT_SAY:
            return "wrong refusal"
        prefix = "right answer" if self.verdict == ANSWERED else "uncertain, right"
        if not self.right:
            prefix = (
                "answered, misses the gold"
                if self.verdict == ANSWERED
                else "uncertain, misses the gold"
            )
        return prefix


def judge(
    qid: str,
    kind: str,
    language: str,
    answerable: bool,
    verdict: str,
    text: str | None,
    gold: Gold,
    cited_relevant: bool | None,
) -> Judged:
    """The :class:`Judged` record of one answer (``text``: ``None`` for ``dont_say``)."""
    shown = None if verdict == DONT_SAY else text
    return Judged(
        qid, kind, language, answerable, verdict, gold.right(shown),
        None if shown is None else len(shown), cited_relevant,
    )  # fmt: skip


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def summarise(items: Sequence[Judged]) -> dict[str, Any]:
    """Counts per outcome and per verdict, and the shares the targets read:

    - ``answered_right``: answerable questions ``answered`` with a right answer, over the
      answerable; ``answered_wrong``: ``answered`` without it, over the answerable;
    - ``shown_right``: answerable questions whose shown answer (``answered`` or
      ``uncertain``) is right, over the answerable;
    - ``cited_relevant``: answerable questions whose cited passage is relevant, and
      ``right_when_cited_relevant``: the share of those whose shown answer is right;
    - ``median_length``: median characters of the shown answers (``None`` without one).
    """
    outcomes = {name: 0 for name in OUTCOMES}
    verdicts = {name: 0 for name in VERDICTS}
    for item in items:
        outcomes[item.outcome] += 1
        verdicts[item.verdict] += 1
    answerable = [i for i in items if i.answerable]
    cited = [i for i in answerable if i.cited_relevant]
    lengths = [i.length for i in items if i.length is not None]
    return {
        "questions": len(items),
        "answerable": len(answerable),
        "unanswerable": len(items) - len(answerable),
        "outcomes": outcomes,
        "verdicts": verdicts,
        "answered_right": _share(outcomes["right answer"], len(answerable)),
        "answered_wrong": _share(outcomes["answered, misses the gold"], len(answerable)),
        "shown_right": _share(sum(i.right for i in answerable), len(answerable)),
        "cited_relevant": len(cited),
        "right_when_cited_relevant": _share(sum(i.right for i in cited), len(cited)),
        "median_length": statistics.median(lengths) if lengths else None,
    }


def summarise_groups(
    items: Sequence[Judged], keys: Sequence[str] = ("kind", "language")
) -> dict[str, dict[str, dict[str, Any]]]:
    """:func:`summarise` per value of each of ``keys`` (attributes of :class:`Judged`), plus
    ``{"all": {"all": ...}}``."""
    out: dict[str, dict[str, dict[str, Any]]] = {"all": {"all": summarise(items)}}
    for key in keys:
        groups: dict[str, list[Judged]] = {}
        for item in items:
            groups.setdefault(str(getattr(item, key)), []).append(item)
        out[key] = {name: summarise(members) for name, members in sorted(groups.items())}
    return out


def gold_of(extra: Mapping[str, Any], answers: Mapping[str, Sequence[str]], qid: str) -> Gold:
    """A question's gold: its gold answers in ``answers`` when it has some, else the
    ``keys`` of its source record (``extra``)."""
    found = tuple(answers.get(qid, ()))
    keys = extra.get("keys") or ()
    return Gold(found, tuple(str(k) for k in keys) if not found else ())


def judge_question(
    question: Question,
    verdict: str,
    text: str | None,
    answers: Mapping[str, Sequence[str]],
    cited: Hit | None,
) -> Judged:
    """:func:`judge` for a question of a set: its gold from ``answers`` or its keys
    (:func:`gold_of`), ``cited_relevant`` from the cited passage's hit (``None``: no citation)
    matched against its relevant items (:func:`kbsearch.evaluation.judging.matches`)."""
    from kbsearch.evaluation.judging import matches

    relevant = () if question.abstain else question.relevant
    cited_relevant = None if cited is None else any(matches(item, cited) for item in relevant)
    return judge(
        question.qid, question.kind or UNKNOWN, question.language or UNKNOWN, question.has_relevant,
        verdict, text, gold_of(question.extra, answers, question.qid), cited_relevant,
    )  # fmt: skip
