"""Output of the ingest-side commands: the ``index`` report, the hint when a public search
or question finds nothing or is not answered although staff-only passages match, and
``inventory --init``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from kbsearch.errors import InvalidArgumentError, StorageError
from kbsearch.index.indexer import IndexReport
from kbsearch.knowledge_base import MAX_K, KnowledgeBase
from kbsearch.records import Filters


def report_line(report: IndexReport) -> str:
    """``added 1, updated 0, ... (n passages written, m embedded[, h headings embedded])``."""
    headings = f", {report.headings_embedded} headings embedded" if report.headings_embedded else ""
    return (
        f"added {report.added}, updated {report.updated}, unchanged {report.unchanged}, "
        f"removed {report.removed}, failed {len(report.failed)} "
        f"({report.passages} passages written, {report.embedded} embedded{headings})"
    )


def print_index_report(report: IndexReport, verbose: bool) -> None:
    """The index report as lines: counts on stdout (:func:`report_line` first), warnings and
    failures on stderr."""
    click.echo(report_line(report))
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


def staff_only_match(kb: KnowledgeBase, query: str, filters: Filters) -> bool:
    """Whether the best keyword match of a staff search for ``query`` is a passage that the
    public search under ``filters`` does not find (at most ``MAX_K``): the case of documents
    left staff-only by mistake, not of every question whose words also occur in a staff page.
    For the operator's CLI only (who holds the file, so may see every passage): never say
    this to a public interface."""
    if filters.audience != "public":
        return False
    staff = kb.search(query, k=1, route="lexical", filters=replace(filters, audience="staff"))
    if not staff:
        return False
    public = {h.passage_id for h in kb.search(query, k=MAX_K, route="lexical", filters=filters)}
    return staff[0].passage_id not in public


# how a document becomes public: what search and ask say when the public sees nothing
MAKE_PUBLIC = (
    "If they are staff-only because their documents have no access label (indexed as staff by"
    " default), re-index with --default-access public, or set access: public in the front"
    " matter or the inventory; documents labelled staff stay staff-only."
)


def staff_hint(kb: KnowledgeBase, query: str, filters: Filters, command: str) -> str | None:
    """The line for stderr when a public ``search`` or ``ask`` (``command``) found nothing or
    its verdict is "the documents don't say": that a staff-only passage is the best keyword
    match, if it is (:func:`staff_only_match`), and how documents become public; else
    ``None``. No count: how many passages the public may not see is not said to it."""
    if not staff_only_match(kb, query, filters):
        return None
    return (
        "staff-only passages match best by keyword; public searches do not see them."
        f" {command.capitalize()} with --audience staff to see them. {MAKE_PUBLIC}"
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
