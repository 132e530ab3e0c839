"""``kbsearch inventory``, ``stats``, ``delete`` and ``backup``: thin wrappers over
:meth:`KnowledgeBase.documents`, :meth:`KnowledgeBase.stats`, :meth:`KnowledgeBase.delete`
and :func:`kbsearch.tasks.workflows.backup`."""

from __future__ import annotations

import json

import click

from kbsearch.knowledge_base import open_kb
from kbsearch.present.sources import UPLOADS_SUFFIX
from kbsearch.tasks.workflows import backup

from .ingest import write_starter_inventory
from .options import db_option, json_option


@click.command("inventory")
@click.option("--db", "db", type=click.Path(dir_okay=False), help="Knowledge base file.")
@click.option(
    "--init",
    "init_folder",
    type=click.Path(file_okay=False),
    help="Write a starter inventory CSV for FOLDER (FOLDER/inventory.csv, or --output).",
)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Where --init writes.")
@click.option("--force", is_flag=True, help="Let --init overwrite an existing file.")
@json_option
def inventory_command(
    db: str | None, init_folder: str | None, output: str | None, force: bool, as_json: bool
) -> None:
    """List the indexed documents (--db), or write a starter inventory (--init FOLDER)."""
    if init_folder is not None:
        write_starter_inventory(init_folder, output, force)
        return
    if db is None:
        raise click.UsageError("give --db to list an index, or --init FOLDER")
    with open_kb(db) as kb:
        docs = kb.documents()
    if as_json:
        rows = [{**d.document.to_dict(), "passages": d.passages} for d in docs]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for d in docs:
        doc = d.document
        period = f"{doc.effective_from or '…'} to {doc.effective_to or '…'}"
        click.echo(
            f"{doc.doc_id}@v{doc.version}  {doc.access:6} {doc.language}  {period}  "
            f"{d.passages} passages  {doc.title}"
        )


@click.command("stats")
@db_option
@json_option
def stats_command(db: str, as_json: bool) -> None:
    """Counts and settings of the knowledge base."""
    with open_kb(db) as kb:
        values = kb.stats()
    if as_json:
        click.echo(json.dumps(values, indent=2))
        return
    for key, value in values.items():
        click.echo(f"{key}: {value}")


@click.command("delete")
@click.argument("doc_id")
@db_option
@click.option("--version", "version", help="Remove this version only (default: every one).")
def delete_command(doc_id: str, db: str, version: str | None) -> None:
    """Remove document DOC_ID (every version, or --version) from the index, its Qdrant copy
    and the upload store, each version in one transaction."""
    with open_kb(db) as kb:
        removed = kb.delete(doc_id, version)
    click.echo(f"deleted {doc_id} v{', v'.join(removed)}")


@click.command("backup")
@click.argument("destination", type=click.Path(dir_okay=False))
@db_option
@click.option("--force", is_flag=True, help="Overwrite DESTINATION if it exists.")
def backup_command(destination: str, db: str, force: bool) -> None:
    """Write a consistent copy of the knowledge base to DESTINATION and of its uploaded files
    to DESTINATION.uploads (SQLite's online backup: readers and writers may continue). The
    copy is an index of its own: restore it the same way (`kbsearch backup DB --db COPY
    --force`, the server stopped)."""
    done = backup(db, destination, force=force)
    if done.uploads_folder is None:
        uploads = "no uploaded files"
    else:
        files = "file" if done.uploads == 1 else "files"
        uploads = (
            f"{done.uploads} uploaded {files}, {done.upload_bytes:,} bytes,"
            f" to {destination}{UPLOADS_SUFFIX}"
        )
    versions = "version" if done.documents == 1 else "versions"
    click.echo(f"backed up {db} to {destination}: {done.documents} document {versions}; {uploads}")
    if done.missing:
        click.echo(
            f"warning: {len(done.missing)} uploaded file(s) the index names were missing from"
            f" the upload store, not copied: {', '.join(done.missing)}",
            err=True,
        )
    if done.detached:
        click.echo(
            "the copy is a SQLite index: it does not share this index's Qdrant copy"
            " (`kbsearch sync --db COPY --qdrant-path FOLDER` gives it its own)"
        )
