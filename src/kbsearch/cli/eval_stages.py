"""What each stage adds in ``kbsearch eval``: for every evaluated ``ROUTE+rerank`` whose
``ROUTE`` is evaluated too, each measure's gain over ``ROUTE``, the search latency it adds,
and the reranking stage's own wall time and budget stops
(:class:`kbsearch.tasks.evaluate.RerankLog`);
with ``--abstention``, the abstention stage's answer-or-abstain measures.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Unpack

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kbsearch.evaluation.questions import QuestionSet
from kbsearch.evaluation.runner import EvaluationResult
from kbsearch.judge.verdict import shown_confidence
from kbsearch.knowledge_base import KnowledgeBase
from kbsearch.pipeline import RankingOptions
from kbsearch.tasks.evaluate import RerankLog, assess_questions, base_route


def stage_pairs(result: EvaluationResult) -> list[tuple[str, str]]:
    """``(ROUTE, ROUTE+rerank)`` for each reranked route whose base route was evaluated."""
    pairs = []
    for route in result.routes:
        base, reranked = base_route(route)
        if reranked and base in result.routes:
            pairs.append((base, route))
    return pairs


def _diff(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:+.4f}"


def print_stage_gains(result: EvaluationResult, log: RerankLog, console: Console) -> None:
    """A table per reranked route: the gain of the stage and what it costs."""
    summary = log.summary()
    for base, route in stage_pairs(result):
        before, after = result.routes[base], result.routes[route]
        table = Table(title=f"the rerank stage: {route} against {base}")
        table.add_column("measure")
        for column in (base, route, "gain"):
            table.add_column(column, justify="right")
        for measure in result.measures:
            a, b = before.evaluation.means[measure], after.evaluation.means[measure]
            table.add_row(measure, f"{a:.4f}", f"{b:.4f}", _diff(b - a))
        for label, attr in (("search p50 ms", "p50_ms"), ("search p95 ms", "p95_ms")):
            a, b = getattr(before.latency, attr), getattr(after.latency, attr)
            table.add_row(label, f"{a:.1f}", f"{b:.1f}", f"{b - a:+.1f}")
        console.print(table)
        stage = summary.get(route)
        if stage is not None:
            console.print(
                f"{route}: {stage['reranker']}, stage p50 {stage['p50_ms']} ms, p95"
                f" {stage['p95_ms']} ms, {stage['mean_scored']} passages scored on average;"
                f" the budget ran out on {stage['stopped']} of {stage['searches']} searches"
                " (warm-up included)",
                markup=False,
            )


def _cell(value: object) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def print_abstention(kb: KnowledgeBase, qset: QuestionSet, k: int, console: Console,
                     report: Path | None, **ranking: Unpack[RankingOptions]) -> None:  # fmt: skip
    """The abstention stage on every question (``eval --abstention``, with its ``ranking``
    options): a table per kind and language, and its section appended to the HTML
    ``report`` when there is one."""
    from kbsearch.evaluation.abstention import abstention_html, summarise_groups

    items, refused = assess_questions(kb, qset, k, **ranking)
    if refused:
        console.print(f"abstention: the search refused {len(refused)} question(s), left out: "
                      f"{', '.join(refused[:10])}", markup=False)  # fmt: skip
    if not items:
        console.print("abstention: this index has no vectors, so no confidence")
        return
    threshold = float(str(items[0]["threshold"]))
    groups = summarise_groups(items, ["kind", "language"], threshold)
    table = Table(title=f"answer or abstain (minimum confidence {shown_confidence(threshold)})")
    columns = ["group", "questions", "unanswerable", "AUROC", "abstained", "precision",
               "recall", "answered", "hit@k answered"]  # fmt: skip
    for name in columns:
        table.add_column(name, justify="left" if name == "group" else "right")
    for name, g in groups.items():
        values = [g["questions"], g["unanswerable"], g["auroc"], g["abstained"], g["precision"],
                  g["recall"], g["answered_share"], g["hit_among_answered"]]  # fmt: skip
        table.add_row(escape(str(name)), *(_cell(v) for v in values))
    console.print(table)
    if report is not None:
        text = report.read_text(encoding="utf-8")
        section = abstention_html(items, threshold)
        report.write_text(text.replace("</body>", section + "</body>", 1), encoding="utf-8")
