"""Measuring answer-or-abstain: AUROC, abstention precision and recall, risk-coverage.

A question is *answerable* when a relevant passage exists for it in the collection; abstaining
is right on an unanswerable one. ``confidence`` is the abstention stage's score (higher = more
likely answerable); the system answers when ``confidence >= threshold``.

- AUROC: probability that an answerable question gets a higher confidence than an unanswerable
  one, ties counting one half (Hanley & McNeil, 1982; scikit-learn's ``roc_auc_score``).
- Abstention precision: unanswerable among the abstentions; recall: abstentions among the
  unanswerable. ``None`` when undefined (nothing abstained / nothing unanswerable).
- Hit@k among answered: answerable questions answered whose top k holds a relevant passage,
  over answerable questions answered.
- Risk-coverage (El-Yaniv & Wiener, "On the foundations of noise-free selective
  classification", JMLR 2010): answering the questions in decreasing confidence, coverage is the
  share answered and risk the share of answered ones without a relevant passage in the top k.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


def auroc(confidence: Sequence[float], answerable: Sequence[bool]) -> float | None:
    """AUROC of ``confidence`` for separating answerable from unanswerable; ``None`` when one
    class is missing."""
    y = np.asarray(answerable, dtype=bool)
    if y.all() or not y.any():
        return None
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, np.asarray(confidence, dtype=np.float64)))


@dataclass(frozen=True)
class Abstention:
    """Counts and rates at one threshold (module docstring)."""

    threshold: float
    questions: int
    unanswerable: int
    abstained: int
    abstained_right: int  # abstentions on unanswerable questions
    answered_answerable: int
    answered_hits: int  # of those, with a relevant passage in the top k

    @property
    def precision(self) -> float | None:
        return self.abstained_right / self.abstained if self.abstained else None

    @property
    def recall(self) -> float | None:
        return self.abstained_right / self.unanswerable if self.unanswerable else None

    @property
    def answered_share(self) -> float | None:
        """Answerable questions answered, over the answerable ones."""
        answerable = self.questions - self.unanswerable
        return self.answered_answerable / answerable if answerable else None

    @property
    def hit_among_answered(self) -> float | None:
        return self.answered_hits / self.answered_answerable if self.answered_answerable else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "questions": self.questions,
            "unanswerable": self.unanswerable,
            "abstained": self.abstained,
            "precision": self.precision,
            "recall": self.recall,
            "answered_share": self.answered_share,
            "hit_among_answered": self.hit_among_answered,
        }


def abstention(
    confidence: Sequence[float],
    answerable: Sequence[bool],
    hit: Sequence[bool],
    threshold: float,
) -> Abstention:
    """Counts at ``threshold``; ``hit[i]``: a relevant passage is in question i's top k (False
    for unanswerable ones)."""
    c = np.asarray(confidence, dtype=np.float64)
    a = np.asarray(answerable, dtype=bool)
    h = np.asarray(hit, dtype=bool)
    answer = c >= threshold
    return Abstention(
        threshold=threshold,
        questions=len(c),
        unanswerable=int((~a).sum()),
        abstained=int((~answer).sum()),
        abstained_right=int((~answer & ~a).sum()),
        answered_answerable=int((answer & a).sum()),
        answered_hits=int((answer & a & h).sum()),
    )


def risk_coverage(
    confidence: Sequence[float], hit: Sequence[bool]
) -> list[tuple[float, float, float]]:
    """``(threshold, coverage, risk)`` points, one per distinct confidence, coverage rising.

    ``hit[i]``: question i's top k holds a relevant passage (so answering it is right).
    """
    c = np.asarray(confidence, dtype=np.float64)
    wrong = ~np.asarray(hit, dtype=bool)
    points = []
    for t in np.unique(c)[::-1]:
        answered = c >= t
        count = int(answered.sum())
        points.append((float(t), count / len(c), float(wrong[answered].sum()) / count))
    return points


def summarise_groups(
    items: Iterable[Mapping[str, Any]], keys: Sequence[str], threshold: float
) -> dict[str, dict[str, Any]]:
    """Per value of each key in ``keys`` (and ``all``): AUROC and the counts at ``threshold``.

    Each item has ``confidence``, ``answerable``, ``hit`` and the grouping keys.
    """
    rows = list(items)
    groups: dict[str, list[Mapping[str, Any]]] = {"all": rows}
    for key in keys:
        for row in rows:
            groups.setdefault(f"{key}={row[key]}", []).append(row)
    out = {}
    for name, members in groups.items():
        conf = [float(m["confidence"]) for m in members]
        ans = [bool(m["answerable"]) for m in members]
        hit = [bool(m["hit"]) for m in members]
        out[name] = {"auroc": auroc(conf, ans)} | abstention(conf, ans, hit, threshold).as_dict()
    return out


def summarise(
    table: Sequence[Mapping[str, str]], model: Any, threshold: float, k: int = 5
) -> dict[str, Any]:
    """The figures of ``benchmarks/train_abstain.py report`` for a feature table.

    Per dataset: AUROC answerable (``present``) vs ``removed``, vs ``other`` and vs both; the
    counts at ``threshold`` on present + removed and on present + other; hit@k over all present
    questions (unchanged by abstention) and among the answered ones.
    """
    rows = []
    for r in table:
        values = {n: float(r[n]) for n in model.names}
        rows.append(
            {
                "dataset": r["dataset"],
                "condition": r["condition"],
                "language": r["language"],
                "confidence": model.confidence(values),
                "answerable": r["condition"] == "present",
                "hit": 0 < int(r["first_rank"]) <= k,
            }
        )
    out: dict[str, Any] = {}
    for dataset in sorted({r["dataset"] for r in rows}) + ["all"]:
        mine = [r for r in rows if dataset in ("all", r["dataset"])]
        present = [r for r in mine if r["condition"] == "present"]
        entry: dict[str, Any] = {"present": len(present)}
        for other in ("removed", "other"):
            pair = present + [r for r in mine if r["condition"] == other]
            conf = [r["confidence"] for r in pair]
            ans = [r["answerable"] for r in pair]
            hit = [r["hit"] for r in pair]
            entry[f"auroc_vs_{other}"] = auroc(conf, ans)
            entry[f"at_threshold_vs_{other}"] = abstention(conf, ans, hit, threshold).as_dict()
        entry["auroc_vs_both"] = auroc(
            [r["confidence"] for r in mine], [r["answerable"] for r in mine]
        )
        entry[f"hit@{k}_all_present"] = (
            sum(r["hit"] for r in present) / len(present) if present else None
        )
        out[dataset] = entry
    return out


def risk_coverage_chart(curves: Mapping[str, Sequence[tuple[float, float, float]]]) -> str:
    """An inline SVG of risk against coverage, one line per name in ``curves`` (each the
    output of :func:`risk_coverage`); matplotlib's object API, no global state."""
    import io

    import matplotlib
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.0, 3.8))
    axes = figure.add_subplot()
    for name, points in curves.items():
        if points:
            axes.plot([p[1] for p in points], [p[2] for p in points], label=name)
    axes.set_xlabel("coverage (share of questions answered)")
    axes.set_ylabel("risk (answered without a relevant passage in the top k)")
    axes.set_xlim(0.0, 1.0)
    axes.set_ylim(bottom=0.0)
    axes.set_title("Risk-coverage (answering in decreasing confidence)")
    if len(curves) > 1:
        axes.legend(frameon=False)
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return f'<div class="chart">{text[text.index("<svg") :]}</div>'


def abstention_html(items: Sequence[Mapping[str, Any]], threshold: float) -> str:
    """The report's abstention section: AUROC, abstention precision / recall, answered share
    and hit@k among answered, for all questions, per kind and per language, and the
    risk-coverage chart."""
    from html import escape

    groups = summarise_groups(items, ["kind", "language"], threshold)

    def cell(value: Any) -> str:
        return (
            "–" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))
        )

    header = ["group", "questions", "unanswerable", "AUROC", "abstained", "precision", "recall",
              "answered", "hit@k answered"]  # fmt: skip
    rows = "".join(
        "<tr>" + "".join(f"<td>{cell(v)}</td>" for v in (
            escape(name), g["questions"], g["unanswerable"], g["auroc"], g["abstained"],
            g["precision"], g["recall"], g["answered_share"], g["hit_among_answered"],
        )) + "</tr>"
        for name, g in groups.items()
    )  # fmt: skip
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    points = risk_coverage(
        [float(i["confidence"]) for i in items], [bool(i["answerable"] and i["hit"]) for i in items]
    )
    return (
        # 2 decimals, as every confidence is shown (kbsearch.judge.verdict.shown_confidence)
        f"<h2>Answer or abstain (minimum confidence {threshold:.2f})</h2>"
        f"<table><tr>{head}</tr>{rows}</table>" + risk_coverage_chart({"hybrid": points})
    )
