"""Compare two or more runs on the same queries: metric by metric, query by query, with a paired
significance test (:mod:`kbsearch.evaluation.significance`) of each run against the first.

Only the queries with a relevant document in the qrels are compared (the same set for every
run); a query a run did not answer scores 0 there. A difference is called a gain or a loss only
when the test finds it significant at ``alpha``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kbsearch.errors import EvaluationError
from kbsearch.evaluation.metrics import Qrels, Run, RunEvaluation, evaluate_run
from kbsearch.evaluation.significance import (
    ALPHA,
    RESAMPLES,
    SEED,
    SignificanceResult,
    paired_test,
)


@dataclass(frozen=True)
class MeasureComparison:
    """One measure, baseline vs one other run: the test result and per-query differences
    (``other - baseline``) keyed by qid."""

    measure: str
    baseline: str
    other: str
    test: SignificanceResult
    differences: Mapping[str, float]

    @property
    def verdict(self) -> str:
        """``gain``/``loss`` when significant, else ``no significant difference``."""
        if not self.test.significant:
            return "no significant difference"
        return "gain" if self.test.difference < 0 else "loss"

    @property
    def wins_losses_ties(self) -> tuple[int, int, int]:
        """How many queries the other run scores higher, lower, equal (to 1e-12)."""
        values = self.differences.values()
        wins = sum(1 for d in values if d > 1e-12)
        losses = sum(1 for d in values if d < -1e-12)
        return wins, losses, len(self.differences) - wins - losses


@dataclass(frozen=True)
class Comparison:
    """Every run's evaluation (``evaluations``, keyed by run name, baseline first) and the
    comparisons of each other run with the baseline, per measure."""

    measures: tuple[str, ...]
    evaluations: Mapping[str, RunEvaluation]
    comparisons: tuple[MeasureComparison, ...]

    def to_dict(self) -> dict[str, object]:
        """A JSON-able dict."""
        return {
            "measures": list(self.measures),
            "means": {name: dict(ev.means) for name, ev in self.evaluations.items()},
            "evaluated": {name: ev.evaluated for name, ev in self.evaluations.items()},
            "comparisons": [
                {
                    "measure": c.measure,
                    "baseline": c.baseline,
                    "other": c.other,
                    **c.test.to_dict(),
                    **_other_minus_baseline(c.test),
                    "verdict": c.verdict,
                    "wins_losses_ties": list(c.wins_losses_ties),
                    "differences": dict(c.differences),
                }
                for c in self.comparisons
            ],
        }


def _other_minus_baseline(test: SignificanceResult) -> dict[str, float | None]:
    """The difference (and interval) as ``other - baseline``, the sign the table shows and
    the per-query differences use (the test itself computes ``baseline - other``)."""
    low = None if test.ci_high is None else -test.ci_high
    high = None if test.ci_low is None else -test.ci_low
    return {"difference": -test.difference, "ci_low": low, "ci_high": high}


def compare_runs(
    qrels: Qrels,
    runs: Mapping[str, Run],
    measures: Sequence[str],
    *,
    test: str = "randomization",
    resamples: int = RESAMPLES,
    seed: int = SEED,
    alpha: float = ALPHA,
) -> Comparison:
    """Score each run and test every other run against the first one, measure by measure.

    The test's ``mean_a``/``mean_b`` are the baseline's and the other run's means; its
    ``difference`` is ``baseline - other``.

    Raises:
        EvaluationError: fewer than two runs, no query with a relevant document, a duplicate id
            in a run, an unknown measure or test.
    """
    if len(runs) < 2:
        raise EvaluationError("compare needs at least two runs")
    queries = [qid for qid, judged in qrels.items() if any(g >= 1 for g in judged.values())]
    if not queries:
        raise EvaluationError("no query has a relevant document: nothing to compare")
    evaluations = {
        name: evaluate_run(qrels, run, measures, queries=queries) for name, run in runs.items()
    }
    names = list(evaluations)
    baseline = evaluations[names[0]]
    comparisons = []
    for other_name in names[1:]:
        other = evaluations[other_name]
        for measure in baseline.measures:
            a = [baseline.per_query[q][measure] for q in queries]
            b = [other.per_query[q][measure] for q in queries]
            result = paired_test(test, a, b, resamples=resamples, seed=seed, alpha=alpha)
            diffs = {q: y - x for q, x, y in zip(queries, a, b, strict=True)}
            comparisons.append(MeasureComparison(measure, names[0], other_name, result, diffs))
    return Comparison(baseline.measures, evaluations, tuple(comparisons))
