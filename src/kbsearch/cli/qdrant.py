"""``kbsearch verify`` / ``kbsearch sync`` and the ``--backend qdrant`` options: thin wrappers
over :func:`kbsearch.tasks.workflows.verify_copy` and :func:`kbsearch.tasks.workflows.sync_copy`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from kbsearch.errors import InvalidArgumentError
from kbsearch.tasks.workflows import sync_copy, verify_copy

from .options import db_option

F = TypeVar("F", bound=Callable[..., Any])


def qdrant_options(func: F) -> F:
    """``--backend sqlite|qdrant``, ``--qdrant-url URL``, ``--qdrant-path DIR``."""
    options = [
        click.option(
            "--backend",
            type=click.Choice(["sqlite", "qdrant"]),
            default=None,
            help="Where searches run: the SQLite file (default) or a Qdrant copy of it "
            "(recorded in the index; later commands use it without these options).",
        ),
        click.option("--qdrant-url", help="Qdrant server or cluster URL (qdrant-client)."),
        click.option(
            "--qdrant-path",
            type=click.Path(file_okay=False),
            help="Folder of an in-process Qdrant Edge shard (qdrant-edge-py).",
        ),
        click.option(
            "--qdrant-cluster",
            metavar="SHARDS,REPLICATION,WRITE_CONSISTENCY",
            help="Cluster settings of a new collection at --qdrant-url, e.g. 6,2,2.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def target_from_options(
    backend: str | None, url: str | None, path: str | None, cluster: str | None = None
) -> Any:
    """The :class:`~kbsearch.backends.qdrant.target.QdrantTarget` the options name, or
    ``None`` (the index's recorded backend).

    Raises:
        InvalidArgumentError: ``--backend qdrant`` without a place, a place with
            ``--backend sqlite``, both places, malformed cluster settings.
    """
    if backend == "sqlite":
        if url or path:
            raise InvalidArgumentError("--qdrant-url/--qdrant-path need --backend qdrant")
        return None
    if backend is None and not (url or path):
        return None
    from kbsearch.backends.qdrant.target import QdrantTarget

    settings = None
    if cluster:
        parts = cluster.split(",")
        if len(parts) != 3 or not all(p.strip().isdigit() for p in parts):
            raise InvalidArgumentError(
                f"--qdrant-cluster is SHARDS,REPLICATION,WRITE_CONSISTENCY, got {cluster!r}"
            )
        settings = (int(parts[0]), int(parts[1]), int(parts[2]))
    return QdrantTarget(url=url, path=path, cluster=settings)


@click.command("verify")
@db_option
@qdrant_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def verify_command(
    db: str,
    backend: str | None,
    qdrant_url: str | None,
    qdrant_path: str | None,
    qdrant_cluster: str | None,
    as_json: bool,
) -> None:
    """Compare the Qdrant copy with the SQLite file (point ids, versions, access, text,
    dense dimension, length statistics). Exit 1 when they differ."""
    report = verify_copy(db, target_from_options(backend, qdrant_url, qdrant_path, qdrant_cluster))
    if as_json:
        click.echo(json.dumps({**report.__dict__, "ok": report.ok}, indent=2))
    else:
        click.echo("\n".join(report.lines()))
    if not report.ok:
        sys.exit(1)


@click.command("sync")
@db_option
@qdrant_options
def sync_command(
    db: str,
    backend: str | None,
    qdrant_url: str | None,
    qdrant_path: str | None,
    qdrant_cluster: str | None,
) -> None:
    """Bring the Qdrant copy level with the SQLite file: delete points SQLite no longer has,
    write the missing, changed and stale ones. With --qdrant-url/--qdrant-path, the index
    records that copy (an existing index moves to Qdrant)."""
    target = target_from_options(backend, qdrant_url, qdrant_path, qdrant_cluster)
    report, changed, after = sync_copy(db, target)
    click.echo(
        f"deleted {len(report.extra)}, wrote {len(report.to_rewrite)} points "
        f"({changed} changed); {after.points} points for {after.expected} passages: "
        + ("in sync" if after.ok else "still drifting, run sync again")
    )
    if not after.ok:
        sys.exit(1)
