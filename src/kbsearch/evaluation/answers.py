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

A key is also held when it is held with every punctuation mark read as a space, in the
answer and in the key (:func:`holds_key`, :func:`split_answer`): SQuAD's rule joins the words
a mark separates, so the key ``sync-conflict`` ("syncconflict") was not held by
``<file>.sync-conflict-<date>`` ("filesyncconflictdate"), nor ``£69`` by "£69.00". A number
keeps its own marks (``3.5`` is not held by "3, 5", nor ``3`` by "3.5 GB") and drops zero
decimals (``£69`` is held by "£69.00"). Gold answer strings keep SQuAD's rule alone.

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

:func:`by_min_confidence` reads the same answers at other minimum confidences (``ask
--min-confidence``): a question is answered at a cut when its confidence is at least the cut
and it has a span, whatever its verdict at the index's default; the span is the same at every
cut (the verdict never changes which span is chosen), so each row follows from one search.
"""

from __future__ import annotations

import re
import statistics
import string
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

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
# in split_answer: a mark between two digits (3.5, 1,000, 12:30) and a number's zero decimals
_NUMBER_MARK = re.compile(r"(?<=\d)[.,:](?=\d)")
_ARTICLE_WORDS = frozenset(("a", "an", "the"))
_TYPOGRAPHIC = frozenset(("Pd", "Pi", "Pf", "Ps", "Pe"))  # dashes, quotes, brackets
_ZERO_DECIMALS = re.compile(r"(?<![\d.,])(\d{1,3}(?:[.,]\d{3})+|\d+)[.,]00?(?![.,]?\d)")


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


def split_answer(text: str) -> str:
    """:func:`normalize_answer` with each punctuation mark read as a space (ASCII's and the
    typographic ones: ``l’option`` is ``l'option``, ``2–3`` is ``2-3``), but a number's own
    marks: a decimal or thousands mark or a time's colon between two digits is kept (``3.5``
    is neither ``3, 5`` nor a ``3`` beside a ``5``), and zero decimals are dropped (``£69.00``
    is ``£69``, ``2.0`` is ``2``). An article is dropped where it is a word of its own
    (``the`` in "(the) end"), not where a mark joins it to the next (``A-record`` is ``a
    record``, not ``record``)."""
    lowered = _ZERO_DECIMALS.sub(r"\1", text.lower())
    kept = {m.start() for m in _NUMBER_MARK.finditer(lowered)}
    words = []
    for found in re.finditer(r"\S+", lowered):
        word, start = found.group(), found.start()
        if _strip_marks(word) in _ARTICLE_WORDS:
            continue
        words.append(
            "".join(
                " " if start + i not in kept and _is_punctuation(ch) else ch
                for i, ch in enumerate(word)
            )
        )
    return " ".join(" ".join(words).split())


def _strip_marks(word: str) -> str:
    start, end = 0, len(word)
    while start < end and _is_punctuation(word[start]):
        start += 1
    while end > start and _is_punctuation(word[end - 1]):
        end -= 1
    return word[start:end]


def _is_punctuation(ch: str) -> bool:
    """ASCII punctuation, or a typographic mark of the same use: a dash, a quote, a bracket,
    ``…`` ``¡`` ``¿``; not ``§`` or ``¶``, which name what follows (``§3`` is no ``3``)."""
    return ch in PUNCTUATION or ch in "…¡¿" or unicodedata.category(ch) in _TYPOGRAPHIC


def holds_key(answer: str, key: str) -> bool:
    """:func:`holds`, or the same containment after :func:`split_answer` (module
    docstring)."""
    if holds(answer, key):
        return True
    wanted = split_answer(key)
    return bool(wanted) and f" {wanted} " in f" {split_answer(answer)} "


def holds_any(answer: str, golds: Iterable[str]) -> bool:
    """The answer holds at least one of ``golds`` (SQuAD-style gold answers)."""
    return any(holds(answer, g) for g in golds)


def holds_all(answer: str, keys: Sequence[str]) -> bool:
    """The answer holds every one of ``keys`` (at least one key; :func:`holds_key`)."""
    return bool(keys) and all(holds_key(answer, k) for k in keys)


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
    passage is a relevant one; ``None`` without a citation); ``confidence`` (``None``: not
    given) and ``span_right`` (the chosen span holds the gold, whatever the verdict, so
    whether it would be a right answer at a lower cut; ``None``: no span, or not given), for
    :func:`by_min_confidence`."""

    qid: str
    kind: str
    language: str
    answerable: bool
    verdict: str
    right: bool
    length: int | None
    cited_relevant: bool | None
    confidence: float | None = None
    span_right: bool | None = None

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
    confidence: float | None = None,
    span_text: str | None = None,
) -> Judged:
    """The :class:`Judged` record of one answer (``text``: ``None`` for ``dont_say``;
    ``span_text``: the chosen span's text whatever the verdict, ``None`` without one)."""
    shown = None if verdict == DONT_SAY else text
    return Judged(
        qid, kind, language, answerable, verdict, gold.right(shown),
        None if shown is None else len(shown), cited_relevant, confidence,
        None if span_text is None else gold.right(span_text),
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


def by_min_confidence(items: Sequence[Judged], cuts: Iterable[float]) -> list[dict[str, Any]]:
    """Per minimum confidence ``cut`` (ascending), the answers ``ask --min-confidence cut``
    would give (module docstring): ``answered`` questions, ``right`` (answerable, the span
    holds the gold), ``without`` (answerable, it does not), ``unanswerable`` (an
    unanswerable question answered), ``right_share`` (``right`` over the answerable) and
    ``precision`` (``right`` over the answered answerable; ``None`` without one). Only the
    items with a confidence count; an item without a span is never answered.

    Raises:
        EvaluationError: a cut outside [0, 1].
    """
    scored = [i for i in items if i.confidence is not None]
    answerable = sum(i.answerable for i in scored)
    rows = []
    for cut in sorted(set(cuts)):
        if not 0.0 <= cut <= 1.0:
            raise EvaluationError(f"a minimum confidence must be from 0 to 1, got {cut}")
        shown = [i for i in scored if i.span_right is not None and cast(float, i.confidence) >= cut]
        right = sum(i.answerable and bool(i.span_right) for i in shown)
        asked = sum(i.answerable for i in shown)
        rows.append({
            "min_confidence": cut,
            "answered": len(shown),
            "right": right,
            "without": asked - right,
            "unanswerable": len(shown) - asked,
            "right_share": _share(right, answerable),
            "precision": _share(right, asked),
        })  # fmt: skip
    return rows


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
    confidence: float | None = None,
    span_text: str | None = None,
) -> Judged:
    """:func:`judge` for a question of a set: its gold from ``answers`` or its keys
    (:func:`gold_of`), ``cited_relevant`` from the cited passage's hit (``None``: no citation)
    matched against its relevant items (:func:`kbsearch.evaluation.judging.matches`);
    ``confidence`` and ``span_text`` as :func:`judge`'s."""
    from kbsearch.evaluation.judging import matches

    relevant = () if question.abstain else question.relevant
    cited_relevant = None if cited is None else any(matches(item, cited) for item in relevant)
    return judge(
        question.qid, question.kind or UNKNOWN, question.language or UNKNOWN, question.has_relevant,
        verdict, text, gold_of(question.extra, answers, question.qid), cited_relevant,
        confidence, span_text,
    )  # fmt: skip
