"""``kbsearch compare``: a thin click wrapper over :func:`kbsearch.evaluation.compare.compare_runs`.

Compare works on TREC run files (what ``eval --run-dir`` writes, or any other system's), so the
same command compares routes of one index, two indexes, or two settings::

    kbsearch eval questions.jsonl --db a.db --run-dir runs/a
    kbsearch eval questions.jsonl --db b.db --run-dir runs/b
    kbsearch compare runs/a/hybrid.trec runs/b/hybrid.trec --qrels runs/a/qrels.txt
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from kbsearch.evaluation.compare import Comparison, compare_runs
from kbsearch.evaluation.formats import load_questions, read_trec_qrels
from kbsearch.evaluation.judging import set_qrels
from kbsearch.evaluation.significance import ALPHA, RESAMPLES, SEED, TESTS
from kbsearch.evaluation.trec import read_trec_run

from .eval import fmt_mean
from .options import NumberRange, json_option

COMPARE_MEASURES = ("nDCG@10", "MRR@10", "R@10", "R@100")


def print_comparison(comparison: Comparison, console: Console, show: int) -> None:
    """Print the means side by side, the tests, and the queries with the largest differences."""
    names = list(comparison.evaluations)
    table = Table(title="means")
    table.add_column("measure")
    for name in names:
        table.add_column(name, justify="right")
    for measure in comparison.measures:
        table.add_row(measure, *(fmt_mean(comparison.evaluations[n].means[measure]) for n in names))
    table.add_row("evaluated", *(str(comparison.evaluations[n].evaluated) for n in names))
    console.print(table)
    first = comparison.comparisons[0].test
    tests = Table(
        title=f"paired {first.test} test against {names[0]}: {first.resamples} resamples, "
        f"seed {first.seed}, alpha {first.alpha}"
    )
    for column in ("run", "measure", "difference", "p-value", "result", "+/-/="):
        tests.add_column(column, overflow="fold")
    for c in comparison.comparisons:
        wins, losses, ties = c.wins_losses_ties
        label = f"significant {c.verdict}" if c.test.significant else "not significant"
        tests.add_row(
            c.other, c.measure, f"{0.0 - c.test.difference:+.4f}", f"{c.test.p_value:.4f}",
            label, f"{wins}/{losses}/{ties}",
        )  # fmt: skip
    console.print(tests)
    for c in comparison.comparisons:
        if c.measure != comparison.measures[0] or show <= 0:
            continue
        top = sorted(c.differences.items(), key=lambda item: (-abs(item[1]), item[0]))[:show]
        diffs = Table(title=f"{c.measure} per query, largest differences")
        for column in ("qid", c.baseline, c.other, "difference"):
            diffs.add_column(column, justify="left" if column == "qid" else "right")
        base_scores = comparison.evaluations[c.baseline].per_query
        other_scores = comparison.evaluations[c.other].per_query
        for qid, diff in top:
            diffs.add_row(
                qid,
                f"{base_scores[qid][c.measure]:.4f}",
                f"{other_scores[qid][c.measure]:.4f}",
                f"{diff:+.4f}",
            )
        console.print(diffs)


def _labels(paths: Sequence[Path]) -> list[str]:
    stems = [p.stem for p in paths]
    labels = stems if len(set(stems)) == len(stems) else [str(p) for p in paths]
    if len(set(labels)) != len(labels):
        raise click.BadParameter("the same run file is given twice")
    return labels


@click.command("compare")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--qrels", type=click.Path(exists=True, path_type=Path), help="TREC qrels file.")
@click.option("--questions", type=click.Path(exists=True, path_type=Path), help="Question set.")
@click.option("--split", default="test", show_default=True, help="BEIR qrels split.")
@click.option("--measure", "measures", multiple=True, help="Repeatable; default nDCG@10 ...")
@click.option("--test", "test", type=click.Choice(list(TESTS)), default="randomization",
              show_default=True, help="Paired significance test.")  # fmt: skip
@click.option("--resamples", default=RESAMPLES, show_default=True, type=click.IntRange(min=1),
              help="Permutations or bootstrap samples.")  # fmt: skip
@click.option("--seed", default=SEED, show_default=True, type=int, help="Random seed.")
@click.option(
    "--alpha",
    default=ALPHA,
    show_default=True,
    type=NumberRange(0, 1, min_open=True, max_open=True),
    help="Significance level.",
)
@click.option("--show", default=10, show_default=True, help="Per-query differences to list.")
@json_option
def compare_command(runs: tuple[Path, ...], qrels: Path | None, questions: Path | None,
                    split: str, measures: tuple[str, ...], test: str, resamples: int, seed: int,
                    alpha: float, show: int, as_json: bool) -> None:  # fmt: skip
    """Compare two or more TREC RUNS (the first is the baseline) on the same queries, with a
    paired significance test per measure. Judgements come from --qrels or --questions."""
    if len(runs) < 2:
        raise click.UsageError("compare needs at least two runs")
    if (qrels is None) == (questions is None):
        raise click.UsageError("give exactly one of --qrels or --questions")
    labels = _labels(runs)
    if qrels is not None:
        judged = read_trec_qrels(qrels)
    elif questions is not None:
        judged = set_qrels(load_questions(questions, split))
    loaded = {label: read_trec_run(path) for label, path in zip(labels, runs, strict=True)}
    comparison = compare_runs(
        judged, loaded, measures or COMPARE_MEASURES,
        test=test, resamples=resamples, seed=seed, alpha=alpha,
    )  # fmt: skip
    if as_json:
        click.echo(json.dumps(comparison.to_dict(), ensure_ascii=False, indent=2))
    else:
        print_comparison(comparison, Console(), show)
