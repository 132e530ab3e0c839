"""``kbsearch eval`` and ``kbsearch bench``: thin click wrappers over
:mod:`kbsearch.tasks.evaluate` and :mod:`kbsearch.evaluation` (``kbsearch compare``, which
compares their TREC runs, is :mod:`kbsearch.cli.compare`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, Unpack

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kbsearch.cli.progress import progress_bar
from kbsearch.evaluation.formats import READERS, load_questions
from kbsearch.evaluation.gold import Unreachable
from kbsearch.evaluation.questions import MATCH_RULES, QuestionSet
from kbsearch.evaluation.report import write_report
from kbsearch.evaluation.runner import DEFAULT_K, EvaluationResult
from kbsearch.evaluation.trec import write_trec_qrels, write_trec_run
from kbsearch.knowledge_base import open_kb
from kbsearch.pipeline import RankingOptions
from kbsearch.records import ROUTES
from kbsearch.rerank.rerankers import RerankSettings
from kbsearch.tasks.evaluate import (
    RerankLog,
    check_rerank_routes,
    check_search_options,
    evaluate_kb,
    index_corpus,
    unreachable,
)

from .eval_answers import (
    answers_ready,
    evaluate_answers,
    gold_answers_path,
    print_cuts,
    print_summary,
)
from .eval_stages import print_abstention, print_stage_gains
from .options import (
    ROUTE_LIST,
    depth_option,
    fusion_option,
    given_fusion_settings,
    k_option,
    rerank_options,
    rerank_settings,
    rrf_k_option,
    weights_option,
)


def wide_console(stderr: bool = False) -> Console:
    """A console at least 120 columns wide, so tables are not squeezed in logs and pipes."""
    console = Console(stderr=stderr)
    if not console.is_terminal:
        console = Console(stderr=stderr, width=120)
    return console


def fmt_mean(value: float, digits: int = 4) -> str:
    """``value`` with ``digits`` decimals; ``–`` for NaN (a measure with nothing to average)."""
    return "–" if math.isnan(value) else f"{value:.{digits}f}"


def print_result(result: EvaluationResult, console: Console, show_missed: int = 10) -> None:
    """Print the metric table (a column per route), per-kind tables and missed questions."""
    table = Table(title=f"{Path(result.source).name} (rule {result.rule}, k={result.k})")
    table.add_column("measure")
    for route in result.routes:
        table.add_column(route, justify="right")
    routes = list(result.routes.values())
    for measure in result.measures:
        table.add_row(measure, *(fmt_mean(r.evaluation.means[measure]) for r in routes))
    table.add_row("evaluated", *(str(r.evaluation.evaluated) for r in routes))
    table.add_row("no relevant", *(str(r.evaluation.no_relevant_queries) for r in routes))
    table.add_row(
        "no relevant, with results", *(str(r.evaluation.no_relevant_with_results) for r in routes)
    )
    for label, attr in (("latency mean ms", "mean_ms"), ("p50 ms", "p50_ms"), ("p95 ms", "p95_ms")):
        table.add_row(label, *(fmt_mean(getattr(r.latency, attr), 1) for r in routes))
    console.print(table)
    for res in routes:
        if res.per_kind:
            kinds = Table(title=f"{res.route} per kind")
            kinds.add_column("kind")
            # the main table's measures (as the HTML report), so the cut-offs follow --k
            for measure in (*result.measures, "evaluated", "no relevant"):
                kinds.add_column(measure, justify="right")
            for kind, ev in res.per_kind.items():
                values = [fmt_mean(ev.means[m], 3) for m in result.measures]
                kinds.add_row(escape(kind), *values, str(ev.evaluated), str(ev.no_relevant_queries))
            console.print(kinds)
    for res in routes:
        if res.refused:
            console.print(f"{res.route}: search refused {len(res.refused)} question(s) (scored 0)")
        shown = "" if len(res.missed) <= show_missed else f" (the first {show_missed}:)"
        console.print(
            f"{res.route}: {len(res.missed)} question(s) missed in the top {result.k}{shown}"
        )
        for missed in res.missed[:show_missed]:
            top = missed.top[0].passage_id if missed.top else "(no result)"
            console.print(f"  {missed.qid}: {missed.text[:70]!r} -> {top}", markup=False)


def _write_outputs(
    result: EvaluationResult, run_dir: Path | None, report: Path | None, console: Console
) -> None:
    if run_dir is not None:
        write_trec_qrels(run_dir / "qrels.txt", result.qrels)
        for route, res in result.routes.items():
            write_trec_run(run_dir / f"{route}.trec", res.run, f"kbsearch-{route}")
        console.print(f"runs and qrels written to {run_dir}", markup=False)
    if report is not None:
        write_report(report, result)
        console.print(f"report written to {report}", markup=False)


def run_evaluation(
    questions: QuestionSet,
    db: Path,
    routes: Sequence[str],
    k: int,
    *,
    embedder: str | None = None,
    index_corpus_first: bool = False,
    analyzer: str | None = None,
    rerank: RerankSettings | None = None,
    log: RerankLog | None = None,
    given: Collection[str] = (),
    **ranking: Unpack[RankingOptions],
) -> EvaluationResult:
    """Open DB (with ``index_corpus_first``: create it and index the question set's corpus
    when it holds no document), warn about unreachable relevant items, evaluate with the
    ``ranking`` options (``rerank`` for the ``ROUTE+rerank`` routes, whose stage reports go
    into ``log``; ``given``: the fusion options given on the command line)."""
    check_search_options(k, routes=routes, given=given, **ranking)
    check_rerank_routes(routes, rerank)
    with open_kb(db, create=index_corpus_first, embedder=embedder) as kb:
        if index_corpus_first:
            with progress_bar("embedding") as bar:
                report = index_corpus(kb, questions, analyzer=analyzer, progress=bar)
            if report is not None:
                click.echo(f"indexed {questions.corpus} into {db}: "
                           f"{json.dumps(report.to_dict())}", err=True)  # fmt: skip
        warn_unreachable(unreachable(kb, questions))
        return evaluate_kb(kb, questions, routes, k, rerank=rerank, log=log, **ranking)


def warn_unreachable(found: Sequence[Unreachable], show: int = 10) -> None:
    """Warn on stderr about relevant items no search can return."""
    if not found:
        return
    questions_hit = len({u.qid for u in found})
    click.echo(
        f"warning: {len(found)} relevant item(s) of {questions_hit} question(s) cannot be "
        "returned by any search (they score 0):",
        err=True,
    )
    for u in found[:show]:
        click.echo(f"  {u.qid}: {u.item}: {u.reason}", err=True)
    if len(found) > show:
        click.echo(f"  ... and {len(found) - show} more", err=True)


def _common(func: Callable[..., None]) -> Callable[..., None]:
    options = [
        click.option(
            "--db",
            "db",
            required=True,
            type=click.Path(path_type=Path),
            help="Knowledge base file.",
        ),  # fmt: skip
        click.option(
            "--routes",
            default=",".join(ROUTES),
            show_default=True,
            type=ROUTE_LIST,
            help="Routes to evaluate, a comma list; ROUTE+rerank is ROUTE then the --rerank"
            " stage (hybrid+rerank).",
        ),  # fmt: skip
        k_option("Hits scored per question (the metrics' cutoff).", DEFAULT_K),
        click.option("--split", default="test", show_default=True, help="BEIR qrels split."),
        click.option("--json", "as_json", is_flag=True, help="Print the results as JSON."),
        click.option(
            "--run-dir",
            type=click.Path(file_okay=False, path_type=Path),
            help="Write each route's TREC run and the qrels into this folder (ids with"
            " whitespace or % written percent-encoded, 'return%20policy@v1#refunds', as"
            " compare reads them back).",
        ),  # fmt: skip
        click.option(
            "--report",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Write an HTML report to this file.",
        ),  # fmt: skip
        rrf_k_option,
        depth_option,
        weights_option,
        click.option("--embedder", default=None, help="Embedder spec (default: the index's)."),
        fusion_option,
        rerank_options,
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _finish(
    result: EvaluationResult,
    as_json: bool,
    run_dir: Path | None,
    report: Path | None,
    log: RerankLog | None = None,
    more: Callable[[], dict[str, Any]] | None = None,
) -> None:
    """The evaluation's tables (with ``as_json``, its JSON, with what ``more`` adds to it:
    one document on stdout) and its run folder and report."""
    console = wide_console(stderr=as_json)
    stages = log.summary() if log is not None else {}
    if not as_json:
        print_result(result, console)
        if log is not None:
            print_stage_gains(result, log, console)
    _write_outputs(result, run_dir, report, console)
    if as_json:
        payload = result.to_dict() | ({"rerank": stages} if stages else {})
        payload |= more() if more is not None else {}
        click.echo(json.dumps(payload, ensure_ascii=False, indent=2))


@click.command("eval")
@click.argument("questions", type=click.Path(exists=True, path_type=Path))
@_common
@click.option("--kind", default=None, help="Evaluate only the questions of this kind.")
@click.option("--format", "fmt", type=click.Choice(list(READERS)), default=None,
              help="The question set's format [default: detected].")  # fmt: skip
@click.option("--rule", type=click.Choice(list(MATCH_RULES)), default=None,
              help="What a hit must match to count [default: the format's].")  # fmt: skip
@click.option(
    "--abstention",
    is_flag=True,
    help="Also measure answer-or-abstain (AUROC, abstention precision/recall, hit@k"
    " among answered, per kind and language; risk-coverage chart in --report).",
)
@click.option(
    "--answers",
    "answers",
    is_flag=True,
    help="Also judge kbsearch ask's answers: right answer (holds a gold answer string, SQuAD"
    " normalisation, or all the question's keys: the gold), answered or uncertain but missing"
    " the gold, right and wrong refusals, per verdict, kind and language (none given:"
    " unknown); median answer length.",
)
@click.option(
    "--gold-answers",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="JSONL of {_id, answers} [default: QUESTIONS/answers.jsonl when QUESTIONS is a folder"
    " holding one; for a single questions file, none: each question's keys are its gold].",
)
@click.option(
    "--answers-dump",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --answers: write each answer's JSON, one a line, to this file.",
)
def eval_command(questions: Path, db: Path, routes: tuple[str, ...], k: int, split: str,
                 as_json: bool, run_dir: Path | None, report: Path | None, rrf_k: float,
                 depth: int, weights: tuple[float, float], embedder: str | None,
                 fusion: str, rerank: str | None, rerank_top_n: int | None,
                 rerank_budget_ms: float | None, kind: str | None, fmt: str | None,
                 rule: str | None, abstention: bool, answers: bool,
                 gold_answers: Path | None, answers_dump: Path | None) -> None:  # fmt: skip
    """Evaluate every route of the index DB on a question set (BEIR folder, policy JSONL,
    tutorial JSON, TREC qrels + topics); ROUTE+rerank routes show the rerank stage's gain."""
    reranking = rerank_settings(rerank, rerank_top_n, rerank_budget_ms)
    qset = load_questions(questions, split, format=fmt, rule=rule)
    if kind is not None:
        qset = qset.only_kind(kind)
    log = RerankLog()
    ranking = RankingOptions(depth=depth, rrf_k=rrf_k, weights=weights, fusion=fusion)
    golds = (
        answers_ready(db, embedder, gold_answers_path(questions, gold_answers)) if answers else {}
    )
    result = run_evaluation(
        qset, db, routes, k, embedder=embedder, rerank=reranking, log=log,
        given=given_fusion_settings(), **ranking,
    )  # fmt: skip

    def judged() -> dict[str, Any]:
        """``--answers``' figures (:func:`evaluate_answers`)."""
        if not answers:
            return {}
        with open_kb(db, embedder=embedder) as kb:
            summary, cuts, refused = evaluate_answers(kb, qset, golds, k, answers_dump)
        return {"answers": summary, "by_min_confidence": cuts, "refused": list(refused)}

    # with --json, one document: the routes' figures and the answers' (abstention's tables go
    # to stderr, as they always have)
    _finish(result, as_json, run_dir, report, log, judged if as_json else None)
    if abstention:  # the same fusion as the routes' evaluation
        console = wide_console(stderr=as_json)
        with open_kb(db, embedder=embedder) as kb:
            print_abstention(kb, qset, k, console, report, **ranking)
    if answers and not as_json:
        shown = judged()
        console = wide_console()
        print_summary(shown["answers"], console)
        print_cuts(shown["by_min_confidence"], console)


@click.command("bench")
@click.argument("dataset", type=click.Path(exists=True, file_okay=False, path_type=Path))
@_common
@click.option(
    "--analyzer",
    type=click.Choice(["stem", "plain"]),
    default=None,
    help="Lexical analyzer when the index is created (default stem).",
)
def bench_command(dataset: Path, db: Path, routes: tuple[str, ...], k: int, split: str,
                  as_json: bool, run_dir: Path | None, report: Path | None, rrf_k: float,
                  depth: int, weights: tuple[float, float], embedder: str | None,
                  fusion: str, rerank: str | None, rerank_top_n: int | None,
                  rerank_budget_ms: float | None, analyzer: str | None) -> None:  # fmt: skip
    """Index the BEIR folder DATASET into DB when DB holds no document, then evaluate it."""
    reranking = rerank_settings(rerank, rerank_top_n, rerank_budget_ms)
    qset = load_questions(dataset, split, format="beir")
    log = RerankLog()
    result = run_evaluation(
        qset, db, routes, k, embedder=embedder, index_corpus_first=True, analyzer=analyzer,
        rerank=reranking, log=log, given=given_fusion_settings(), depth=depth, rrf_k=rrf_k,
        weights=weights, fusion=fusion,
    )  # fmt: skip
    _finish(result, as_json, run_dir, report, log)
