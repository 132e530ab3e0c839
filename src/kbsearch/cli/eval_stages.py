"""What each stage adds in ``kbsearch eval``: for every evaluated ``ROUTE+rerank`` whose
``ROUTE`` is evaluated too, each measure's gain over ``ROUTE``, the search latency it adds,
and the reranking stage's own wall time and budget stops (:class:`kbsearch.workflows.RerankLog`).
"""

from __future__ import annotations

import math

from rich.console import Console
from rich.table import Table

from kbsearch.evaluation.runner import EvaluationResult
from kbsearch.workflows import RerankLog, base_route


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
