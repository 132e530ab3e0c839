"""``kbsearch demo``: index the bundled help centre, show example searches in each route,
evaluate the question set per route and kind, and write the HTML report."""

from __future__ import annotations

from pathlib import Path

import click

from .cli import fail_cleanly, snippet
from .records import ROUTES
from .search.fusion import DEFAULT_RRF_K


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
@click.option("--k", "k", default=5, show_default=True, type=click.IntRange(min=1))
@fail_cleanly
def demo_command(directory: Path | None, routes: tuple[str, ...], embedder: str | None,
                 k: int) -> None:  # fmt: skip
    """Index the bundled help centre, search it, and measure it."""
    from .cli_eval import _run, print_result, wide_console
    from .demo import default_demo_dir, demo_files, example_searches, examples_dir
    from .evaluation.questions import load_questions
    from .evaluation.report import write_report
    from .knowledge_base import open_kb
    from .progress import progress_bar

    console = wide_console()
    chosen = routes or ROUTES
    folder = directory or default_demo_dir()
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "helpcentre.db"
    examples = examples_dir()
    console.print(f"[bold]kbsearch demo[/bold]: the help centre in {examples}")
    with open_kb(db, create=True, embedder=embedder) as kb, progress_bar("embedding") as bar:
        report = kb.index(demo_files(examples), inventory=examples / "inventory.csv", progress=bar)
    console.print(
        f"index {db}: added {report.added}, updated {report.updated}, unchanged "
        f"{report.unchanged}, removed {report.removed}, failed {len(report.failed)} "
        f"({report.passages} passages written, {report.embedded} embedded)"
    )
    for source, reason in report.failed:
        console.print(f"[red]failed[/red] {source}: {reason}", markup=True)

    with open_kb(db) as kb:
        for example in example_searches(examples):
            console.rule(f"{example.title}: {example.query!r}")
            for label, filters in example.variants:
                for route in chosen:
                    hits = kb.search(example.query, k=3, route=route, filters=filters)
                    console.print(f"[bold]{label}[/bold] · {route}")
                    if not hits:
                        console.print("   no results")
                    for hit in hits:
                        console.print(
                            f"  {hit.rank}. {hit.score:.4f} {hit.passage_id}", markup=False
                        )
                        console.print(f"     {snippet(hit.text, 96)}", markup=False)

    console.rule("evaluation on the demo question set")
    questions = load_questions(examples / "questions.jsonl")
    result = _run(questions, db, tuple(chosen), k, 100, DEFAULT_RRF_K, (1.0, 1.0), None)
    print_result(result, console, show_missed=5)
    report_path = folder / "report.html"
    write_report(report_path, result)
    console.print(f"HTML report: {report_path}")
