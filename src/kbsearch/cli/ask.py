"""``kbsearch ask``: a cited answer, or "the documents don't say" (kbsearch.judge.answer);
and the ``--min-confidence`` option and decision fields ``search`` shares with it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click

from kbsearch.judge.answer import render, verdict_line
from kbsearch.judge.verdict import DONT_SAY, Decision
from kbsearch.knowledge_base import open_kb

from .ingest import MAKE_PUBLIC, staff_hint
from .options import (
    NumberRange,
    color_option,
    db_option,
    filter_options,
    json_option,
    k_option,
    make_filters,
)

F = TypeVar("F", bound=Callable[..., Any])


def min_confidence_option(func: F) -> F:
    """``--min-confidence``: answer only from this confidence on (default: the model's)."""
    return click.option(
        "--min-confidence",
        type=NumberRange(0.0, 1.0),
        default=None,
        help="Answer only from this confidence on (default: the shipped model's, 0.50, chosen on"
        " dev data so that answered questions the documents answer show a right span at least"
        " 70% of the time; below it, down to the uncertain band's floor, 0.28, the answer is"
        " shown as uncertain).",
    )(func)


def decision_line(decision: Decision) -> str:
    """The line ``search`` prints above its hits: the decision's verdict (the one ``ask``
    gives), in ``ask``'s words (:func:`kbsearch.judge.answer.verdict_line`)."""
    found = decision.verdict
    floor = decision.threshold if decision.floor is None else decision.floor
    line = verdict_line(found, decision.confidence, decision.threshold, floor)
    return f"{line}; the nearest passages:" if found == DONT_SAY else line


@click.command("ask")
@click.argument("question")
@db_option
@k_option("Passages shown when abstaining (the confidence is about the top 5, whatever --k).")
@filter_options
@min_confidence_option
@json_option
@color_option
def ask_command(question: str, db: str, k: int, audience: str, as_of: str | None,
                lang: str | None, doc_ids: tuple[str, ...], min_confidence: float | None,
                as_json: bool, color: bool | None) -> None:  # fmt: skip
    """Answer QUESTION with the span of the top passages that answers it and its citation;
    uncertain (the best span, said to maybe not answer); or the documents don't say (with the
    confidence and the nearest passages)."""
    filters = make_filters(audience, as_of, lang, doc_ids)
    with open_kb(db) as kb:
        answer = kb.ask(question, k=k, filters=filters, min_confidence=min_confidence)
        declined = not as_json and answer.verdict == DONT_SAY and bool(answer.nearest)
        hint = staff_hint(kb, question, filters, "ask") if declined else None
    if as_json:
        click.echo(json.dumps(answer.to_dict(), indent=2, ensure_ascii=False))
        return
    # the answer's matched words in bold, as search's snippets
    click.echo(render(answer, mark=lambda words: click.style(words, bold=True)), color=color)
    if not answer.nearest and filters.audience == "public":
        # nothing at all under these filters (dense search always has a nearest passage
        # otherwise): why, as search says it, counting nothing the public may not see
        click.echo(
            "no passage is visible to the public audience (with these filters). Ask with"
            f" --audience staff to see staff-only ones. {MAKE_PUBLIC}",
            err=True,
        )
    elif hint is not None:
        click.echo(hint, err=True)
