"""``kbsearch eval --answers``: the answers themselves judged (:mod:`kbsearch.evaluation.answers`):
the outcomes per verdict, the shares the targets read, per kind and per language."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kbsearch.evaluation.answers import (
    OUTCOMES,
    by_min_confidence,
    read_gold_answers,
    summarise_groups,
)
from kbsearch.evaluation.questions import Question, QuestionSet
from kbsearch.facade.searching import no_vectors_to_answer
from kbsearch.judge.answer import Answer
from kbsearch.knowledge_base import KnowledgeBase, open_kb
from kbsearch.outputs import write_output
from kbsearch.tasks.evaluate import answer_questions

GOLD_FILE = "answers.jsonl"  # a BEIR folder's gold answer strings (PIAF's)
# the minimum confidences the cut table reads, beside the index's own bands
CUTS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8)
SHARES = (
    ("answered_right", "answered, holds the gold (of answerable)"),
    ("answered_wrong", "answered, misses the gold (of answerable)"),
    ("shown_right", "shown answer holds the gold (answered or uncertain, of answerable)"),
    ("right_when_cited_relevant", "holds the gold when the cited passage is relevant"),
)


def gold_answers_path(questions: Path, given: Path | None) -> Path | None:
    """``given``, else ``QUESTIONS/answers.jsonl`` when QUESTIONS is a folder holding one;
    else ``None`` (a single questions file: each question's ``keys`` are its gold)."""
    if given is not None:
        return given
    found = questions / GOLD_FILE
    return found if questions.is_dir() and found.is_file() else None


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


# each outcome's column in the per-kind and per-language tables (the overall table's legend)
SHORT = {
    "right answer": "right",
    "answered, misses the gold": "ans. w/o",
    "uncertain, right": "unc. right",
    "uncertain, misses the gold": "unc. w/o",
    "wrong refusal": "wrong ref.",
    "right refusal": "right ref.",
    "wrong answer": "wrong ans.",
    "uncertain, none": "unc. none",
}


def in_words(overall: Mapping[str, Any]) -> str:
    """The overall outcomes in one sentence (answerable first, then unanswerable)."""
    counts = overall["outcomes"]
    answerable = overall["questions"] - overall["unanswerable"]
    return (
        f"Of {answerable} answerable questions, {counts['right answer']} were answered with the"
        f" gold and {counts['answered, misses the gold']} without it,"
        f" {counts['uncertain, right']} got an uncertain answer holding it, and"
        f' {counts["wrong refusal"]} were refused ("the documents don\'t say"); of'
        f" {overall['unanswerable']} unanswerable, {counts['right refusal']} were refused,"
        f" {counts['uncertain, none']} got an uncertain answer and {counts['wrong answer']} an"
        " answer."
    )


def print_summary(groups: Mapping[str, Mapping[str, Mapping[str, Any]]], console: Console) -> None:
    """The overall table (outcomes, verdicts, shares, median length) and its sentence
    (:func:`in_words`), then one row per kind and per language (``n`` questions, of them
    ``unans.`` unanswerable, the outcomes by their short names, :data:`SHORT`)."""
    overall = groups["all"]["all"]
    table = Table(
        title="answers: outcomes",
        caption="gold: a gold answer string, or all of the question's keys; uncertain, none:"
        " an uncertain answer to an unanswerable question",
    )
    table.add_column("outcome")
    table.add_column("questions", justify="right")
    for name in OUTCOMES:
        table.add_row(f"{name} ({SHORT[name]})", str(overall["outcomes"][name]))
    for name, count in overall["verdicts"].items():
        table.add_row(f"verdict {name}", str(count))
    for key, label in SHARES:
        table.add_row(label, _cell(overall[key]))
    table.add_row("cited passage relevant (answerable)", _cell(overall["cited_relevant"]))
    table.add_row("median answer length (chars)", _length(overall["median_length"]))
    console.print(table)
    console.print(in_words(overall), markup=False)
    for key in ("kind", "language"):
        per = Table(title=f"answers per {key}")
        per.add_column(key, no_wrap=True)
        columns = ("n", "unans.", *(SHORT[o] for o in OUTCOMES), "right share", "chars")
        for column in columns:
            per.add_column(column, justify="right", no_wrap=column in ("n", "unans.", "chars"))
        for name, s in groups.get(key, {}).items():
            values = [s["questions"], s["unanswerable"], *(s["outcomes"][o] for o in OUTCOMES),
                      s["answered_right"]]  # fmt: skip
            cells = [*(_cell(v) for v in values), _length(s["median_length"])]
            per.add_row(escape(str(name)), *cells)
        console.print(per)


def _length(value: Any) -> str:
    """A median length in whole characters."""
    return "–" if value is None else f"{value:.0f}"


def answers_ready(
    db: str | Path, embedder: str | None, gold_path: Path | None
) -> dict[str, tuple[str, ...]]:
    """What ``eval --answers`` needs, checked before the routes' evaluation (minutes on a
    large set) rather than after it: the gold answers of ``gold_path`` (``None``: none, the
    questions' keys), returned, and an index with vectors.

    Raises:
        EvaluationError: the gold answers cannot be read.
        NoVectorsError: the index has no vectors (answering reads both routes).
        KnowledgeBaseNotFoundError and what :func:`kbsearch.open_kb` raises.
    """
    answers = read_gold_answers(gold_path) if gold_path is not None else {}
    with open_kb(db, embedder=embedder) as kb:
        if not kb.routes["dense"].available():
            raise no_vectors_to_answer()
    return answers


def evaluate_answers(
    kb: KnowledgeBase,
    questions: QuestionSet,
    answers: Mapping[str, Sequence[str]],
    k: int,
    dump: Path | None,
) -> tuple[dict[str, Any], list[dict[str, Any]], Sequence[str]]:
    """Answer every question and summarise (:func:`summarise_groups`) against the gold
    ``answers`` (by question id; a question without: its keys); the answers at each minimum
    confidence of :data:`CUTS` and the index's two bands
    (:func:`~kbsearch.evaluation.answers.by_min_confidence`, each row's ``band`` naming the
    default cut and the uncertain band's floor); with ``dump``, each answer's JSON
    (``Answer.to_dict`` with the question id) as one line of that file; and the refused
    question ids.

    Raises:
        StorageError: the dump cannot be written.
    """
    lines: list[str] = []

    bands: dict[float, str] = {}

    def keep(question: Question, answer: Answer) -> None:
        bands.setdefault(answer.threshold, "default (answered from)")
        bands.setdefault(answer.floor, "uncertain from")
        if dump is not None:
            lines.append(json.dumps({"qid": question.qid, **answer.to_dict()}, ensure_ascii=False))

    items, refused = answer_questions(kb, questions, answers, k=k, on_answer=keep)
    if dump is not None:
        write_output(dump, "".join(f"{line}\n" for line in lines))
    # a cut shown as one of the bands (0.50 beside 0.498) is that band's row
    cuts = [c for c in CUTS if all(round(c, 2) != round(b, 2) for b in bands)]
    rows = by_min_confidence(items, (*cuts, *bands))
    for row in rows:
        row["band"] = bands.get(row["min_confidence"])
    return summarise_groups(items), rows, refused


def print_cuts(rows: Sequence[Mapping[str, Any]], console: Console) -> None:
    """The answers at each minimum confidence (:func:`evaluate_answers`' rows), and how to
    answer from another cut."""
    table = Table(
        title="answers by minimum confidence",
        caption="at each cut: answered (of every question; not those shown as uncertain), right"
        " and without the gold (of the answerable), unanswerable answered; right share: right"
        " over every answerable question; precision: right over the answerable answered (the"
        " unanswerable answered left out); the span is the same at every cut",
    )
    for column in ("min confidence", "answered", "right", "w/o gold", "unans. answered",
                   "right share", "precision"):  # fmt: skip
        table.add_column(column, justify="left" if column == "min confidence" else "right")
    for row in rows:
        cut = f"{row['min_confidence']:.2f}"
        if row["band"]:
            cut += f" {row['band']}"
        values = ("answered", "right", "without", "unanswerable", "right_share", "precision")
        table.add_row(cut, *(_cell(row[v]) for v in values))
    console.print(table)
    console.print(
        "kbsearch ask and search answer from another cut with --min-confidence"
        " (min_confidence in the HTTP API and the MCP tools); choose it on questions of your"
        " own that you do not report on.",
        markup=False,
    )
