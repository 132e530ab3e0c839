"""A self-contained HTML report of an :class:`~kbsearch.evaluation.runner.EvaluationResult`.

The page holds the metric tables, a bar chart of hit@k per question kind and route (per route
when the questions have no kinds), the distribution of the rank of the first relevant result per
route, and the missed questions with their top results. Charts are drawn by matplotlib
(object API, no global pyplot state) and inlined as SVG, so the page needs no other file.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kbsearch.evaluation.runner import EvaluationResult
from kbsearch.outputs import write_output

if TYPE_CHECKING:  # matplotlib is imported when a chart is drawn, not when the CLI starts
    from matplotlib.figure import Figure

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:right;vertical-align:top}
th:first-child,td:first-child,td.text{text-align:left}
th{background:#f3f3f3} .chart svg{max-width:100%;height:auto}
"""


def _fmt(value: float | None, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.{digits}f}"


def _svg(figure: Figure) -> str:
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return f'<div class="chart">{text[text.index("<svg") :]}</div>'


def _grouped_bars(
    groups: Sequence[str], series: Mapping[str, Sequence[float]], title: str, ylabel: str
) -> str:
    width_in = min(11.0, max(6.0, 0.45 * len(groups) * max(1, len(series))))
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width_in, 3.8))
    axes = figure.add_subplot()
    width = 0.8 / max(1, len(series))
    positions = np.arange(len(groups))
    for index, (label, values) in enumerate(series.items()):
        axes.bar(positions + index * width, values, width, label=label)
    axes.set_xticks(positions + width * (len(series) - 1) / 2, list(groups))
    axes.set_title(title)
    axes.set_ylabel(ylabel)
    axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    axes.tick_params(axis="x", labelrotation=30 if len(groups) > 6 else 0)
    return _svg(figure)


def kind_chart(result: EvaluationResult) -> str:
    """SVG bar chart of hit@k per kind (or per route when there are no kinds) and route."""
    measure = f"hit@{result.k}"
    routes = list(result.routes)
    kinds = sorted({kind for r in result.routes.values() for kind in r.per_kind})
    groups = kinds or ["all questions"]
    series = {}
    for route in routes:
        res = result.routes[route]
        evals = [res.per_kind[kind] for kind in kinds] if kinds else [res.evaluation]
        series[route] = [
            0.0 if math.isnan(e.means.get(measure, math.nan)) else e.means[measure] for e in evals
        ]
    return _grouped_bars(groups, series, f"{measure} per kind and route", measure)


def rank_chart(result: EvaluationResult, last: int = 10) -> str:
    """SVG chart of how many evaluated questions have their first relevant result at rank
    1..``last``, beyond ``last``, or not retrieved, per route."""
    groups = [str(r) for r in range(1, last + 1)] + [f">{last}", "not found"]
    series = {}
    for route, res in result.routes.items():
        counts = [0] * len(groups)
        for rank in res.first_relevant.values():
            index = len(groups) - 1 if rank is None else min(rank, last + 1) - 1
            counts[index] += 1
        series[route] = [float(c) for c in counts]
    return _grouped_bars(groups, series, "Rank of the first relevant result", "questions")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def render_report(result: EvaluationResult, title: str = "kbsearch evaluation") -> str:
    """The report as an HTML string."""
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>",
        f"<style>{_STYLE}</style></head><body><h1>{escape(title)}</h1>",
        f"<p>Questions: {escape(result.source)} ({result.questions}); matching rule "
        f"<b>{escape(result.rule)}</b>; k = {result.k}; results asked per question "
        f"{result.depth}; written {datetime.now().isoformat(timespec='seconds')}.</p>",
        "<h2>Metrics per route</h2>",
    ]
    header = ["route", *result.measures, "evaluated", "no relevant", "no rel. w/ results"]
    header += ["mean ms", "p50 ms", "p95 ms"]
    rows = []
    for route, res in result.routes.items():
        ev, lat = res.evaluation, res.latency
        rows.append(
            [escape(route), *(_fmt(ev.means[m]) for m in result.measures)]
            + [str(ev.evaluated), str(ev.no_relevant_queries), str(ev.no_relevant_with_results)]
            + [_fmt(lat.mean_ms, 1), _fmt(lat.p50_ms, 1), _fmt(lat.p95_ms, 1)]
        )
    parts.append(_table(header, rows))
    kinds = sorted({kind for r in result.routes.values() for kind in r.per_kind})
    if kinds:
        parts.append("<h2>Per kind</h2>")
        for route, res in result.routes.items():
            parts.append(f"<h3>{escape(route)}</h3>")
            rows = [
                [escape(kind), *(_fmt(res.per_kind[kind].means[m]) for m in result.measures)]
                + [str(res.per_kind[kind].evaluated), str(res.per_kind[kind].no_relevant_queries)]
                for kind in kinds
            ]
            parts.append(_table(["kind", *result.measures, "evaluated", "no relevant"], rows))
    parts += ["<h2>Charts</h2>", kind_chart(result), rank_chart(result), "<h2>Missed</h2>"]
    for route, res in result.routes.items():
        parts.append(f"<h3>{escape(route)}: {len(res.missed)} missed in the top {result.k}</h3>")
        rows = [
            [
                escape(m.qid),
                escape(m.kind or ""),
                f"<span class='text'>{escape(m.text)}</span>",
                escape(", ".join(m.relevant)),
                "<br>".join(f"{h.rank}. {escape(h.passage_id)} ({h.score:.4g})" for h in m.top),
            ]
            for m in res.missed
        ]
        parts.append(_table(["qid", "kind", "question", "relevant", "top results"], rows))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(
    path: str | Path, result: EvaluationResult, title: str = "kbsearch evaluation"
) -> Path:
    """Write :func:`render_report` to ``path`` (UTF-8); returns the path.

    Raises:
        StorageError: the file cannot be written.
    """
    return write_output(path, render_report(result, title))
