"""``kbsearch demo``: index the bundled help centre, show example searches in each route,
evaluate the question set per route and kind, and write the HTML report."""

from __future__ import annotations

from pathlib import Path
from shlex import quote

import click
from rich.markup import escape

from kbsearch.cli.progress import progress_bar
from kbsearch.errors import InvalidArgumentError
from kbsearch.evaluation.formats import load_questions
from kbsearch.evaluation.report import write_report
from kbsearch.evaluation.runner import EvaluationResult
from kbsearch.knowledge_base import open_kb
from kbsearch.outputs import make_folder
from kbsearch.records import ROUTES
from kbsearch.store.staging import remove_database
from kbsearch.tasks.demo import (
    DEMO_K,
    built_elsewhere,
    default_demo_dir,
    demo_files,
    example_searches,
    examples_dir,
)
from kbsearch.tasks.workflows import index_files

from .eval import print_result, run_evaluation, wide_console
from .ingest import report_line
from .search import snippet

EXAMPLE_HITS = 3  # hits shown per example search


@click.command("demo")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the demo index and report go (default: the user data directory).",
)
@click.option(
    "--route",
    "routes",
    multiple=True,
    type=click.Choice(ROUTES),
    help="Routes to show and evaluate (repeatable; default all three).",
)
@click.option("--embedder", default=None, help="Embedder spec for a new demo index.")
@click.option(
    "--k", "k", default=DEMO_K, show_default=True, type=click.IntRange(min=1),
    help="Cutoff of the evaluation (hit@k, R@k).",
)  # fmt: skip
def demo_command(directory: Path | None, routes: tuple[str, ...], embedder: str | None,
                 k: int) -> None:  # fmt: skip
    """Index the bundled help centre, search it, and measure it."""
    console = wide_console()
    chosen = routes or ROUTES
    folder = directory or default_demo_dir()
    make_folder(folder)
    db = folder / "helpcentre.db"
    examples = examples_dir()
    console.print(f"[bold]kbsearch demo[/bold]: the help centre in {escape(str(examples))}")
    elsewhere = built_elsewhere(db, examples)
    if elsewhere is not None:  # its documents would clash with these files' doc ids
        console.print(f"rebuilding {db}: it was indexed from {elsewhere}", markup=False)
        remove_database(db)
    with progress_bar("embedding") as bar:
        report = index_files(
            db, demo_files(examples), embedder=embedder, progress=bar,
            inventory=examples / "inventory.csv",
        )  # fmt: skip
    console.print(f"index {db}: {report_line(report)}", markup=False)
    for source, reason in report.failed:
        console.print(f"[red]failed[/red] {escape(f'{source}: {reason}')}", markup=True)

    with open_kb(db) as kb:
        if not kb.routes["dense"].available():  # built with --embedder none
            if routes and set(routes) != {"lexical"}:
                raise InvalidArgumentError(
                    f"{db} has no vectors (built with --embedder none): use --route lexical"
                )
            chosen = ("lexical",)
        for example in example_searches(examples):
            console.rule(f"{example.title}: {example.query!r}")
            for label, filters in example.variants:
                for route in chosen:
                    hits = kb.search(example.query, k=EXAMPLE_HITS, route=route, filters=filters)
                    console.print(f"[bold]{escape(label)}[/bold] · {route}")
                    if not hits:
                        console.print("   no results")
                    for hit in hits:
                        console.print(
                            f"  {hit.rank}. {hit.score:.4f} {hit.passage_id}", markup=False
                        )
                        console.print(f"     {snippet(hit.text, 96)}", markup=False)

    console.rule("evaluation on the demo question set")
    questions = load_questions(examples / "questions.jsonl")
    result = run_evaluation(questions, db, chosen, k)
    print_result(result, console, show_missed=5)
    report_path = folder / "report.html"
    write_report(report_path, result)
    console.print(f"HTML report: {report_path} (every question, every miss)", markup=False)
    console.print()
    for line in what_was_measured(result, db, examples / "questions.jsonl", "dense" in chosen):
        console.print(line, markup=False, soft_wrap=True)  # commands stay whole, to copy


def what_was_measured(
    result: EvaluationResult, db: Path, questions: Path, vectors: bool
) -> list[str]:
    """The demo's closing lines in words: what the tables measured on the best route shown
    (hybrid when evaluated), what the questions without a relevant passage are, and the
    commands to try next: with ``vectors``, an answer and the answers judged; else a search
    (answers need vectors)."""
    res = result.routes.get("hybrid") or next(iter(result.routes.values()))
    ev = res.evaluation
    hit = next((m for m in result.measures if m.startswith("hit@")), None)
    found = f"{ev.means[hit]:.0%}" if hit is not None else "?"
    return [
        f"What was measured: {ev.evaluated} of the {result.questions} questions have a relevant"
        f" passage; the {res.route} route puts one in the top {result.k} for {found} of them"
        f" ({hit}), and MRR@10 and nDCG@10 also reward ranking it first.",
        f"The other {ev.no_relevant_queries} are not answered by the documents: every route"
        " still returns passages for them ('no relevant, with results'); saying \"the"
        " documents don't say\" is the answer's job, not the search's.",
    ] + (
        [
            "Next, an answer with its citation, then every answer of the question set judged:",
            f'  kbsearch ask "is there a student discount?" --db {quote(str(db))}',
            f"  kbsearch eval {quote(str(questions))} --db {quote(str(db))} --answers"
            f" --k {result.k}",
        ]
        if vectors
        else [
            "Next, a search of your own (answers need vectors: run the demo without"
            " --embedder none):",
            f'  kbsearch search "is there a student discount?" --db {quote(str(db))}'
            " --route lexical",
        ]
    )
