"""Output of the ingest-side commands: the ``index`` report, the hint when a public search
finds nothing although staff-only passages match, and ``inventory --init``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from kbsearch.errors import InvalidArgumentError, StorageError
from kbsearch.index.indexer import IndexReport
from kbsearch.knowledge_base import MAX_K, KnowledgeBase
from kbsearch.records import Filters


def print_index_report(report: IndexReport, verbose: bool) -> None:
    """The index report as lines: counts on stdout, warnings and failures on stderr."""
    click.echo(
        f"added {report.added}, updated {report.updated}, unchanged {report.unchanged}, "
        f"removed {report.removed}, failed {len(report.failed)} "
        f"({report.passages} passages written, {report.embedded} embedded)"
    )
    label = report.default_access_label
    if report.default_access:
        hint = (
            "; public searches do not show them (--default-access public, or access: public "
            "in front matter or the inventory, makes documents public)"
            if label == "staff"
            else ""
        )
        click.echo(
            f"{report.default_access} document(s) have no access label and are {label}{hint}"
        )
    for document, old, new in report.access_changed:
        click.echo(f"access changed: {document} {old} -> {new}")
    if report.unsupported:
        click.echo(
            f"{len(report.unsupported)} unsupported file(s) skipped"
            + ("" if verbose else " (--verbose lists them)")
        )
        if verbose:
            for path in report.unsupported:
                click.echo(f"  skipped: {path}")
    if report.warnings:
        if verbose:
            for source, reason in report.warnings:
                click.echo(f"warning: {source}: {reason.removeprefix(f'{source}: ')}", err=True)
        else:
            click.echo(f"{len(report.warnings)} warning(s) (--verbose lists them)", err=True)
    for source, reason in report.failed:
        click.echo(f"failed: {source}: {reason.removeprefix(f'{source}: ')}", err=True)


def staff_only_matches(kb: KnowledgeBase, query: str, filters: Filters) -> int:
    """How many passages a staff search for ``query`` finds by keyword (at most ``MAX_K``)
    when the public search under ``filters`` found nothing. For the operator's CLI only:
    never say this to a public interface."""
    if filters.audience != "public":
        return 0
    staff = replace(filters, audience="staff")
    return len(kb.search(query, k=MAX_K, route="lexical", filters=staff))


# how a document becomes public: what search and ask say when the public sees nothing
MAKE_PUBLIC = (
    "If they are staff-only because their documents have no access label (indexed as staff by"
    " default), re-index with --default-access public, or set access: public in the front"
    " matter or the inventory; documents labelled staff stay staff-only."
)


def print_no_results(hidden: int) -> None:
    """``no results``, and when staff-only passages match, how to make documents public."""
    click.echo("no results")
    if hidden:
        count = f"{hidden}+" if hidden >= MAX_K else str(hidden)
        click.echo(
            f"{count} staff-only passage(s) match; public searches do not see them. Search "
            f"with --audience staff to see them. {MAKE_PUBLIC}",
            err=True,
        )


def write_starter_inventory(folder: str, output: str | None, force: bool) -> None:
    """Write the starter inventory of ``folder`` (see :mod:`kbsearch.ingest.starter`).

    Raises:
        InvalidArgumentError: the target exists and ``force`` is not set.
    """
    from kbsearch.ingest.starter import starter_inventory

    target = Path(output) if output else Path(folder) / "inventory.csv"
    if target.exists() and not force:
        raise InvalidArgumentError(f"{target} exists; pass --force to overwrite it")
    text, skipped = starter_inventory(folder)
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise StorageError(f"cannot write {target}: {exc.strerror or exc}") from exc
    rows = text.count("\n") - 1
    click.echo(f"wrote {target}: {rows} document(s); edit access, version and dates, then run")
    click.echo(f"  kbsearch index {folder} --inventory {target} --db DB")
    for file, reason in skipped:
        click.echo(f"not listed: {file}: {reason}", err=True)
