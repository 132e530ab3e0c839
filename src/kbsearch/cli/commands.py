"""The ``kbsearch`` command group: registers every command; :mod:`kbsearch.cli.errors` turns
library errors into one line and exit 1 for all of them (usage errors exit 2, Ctrl-C 130);
:func:`kbsearch.cli.main` is the console script."""

from __future__ import annotations

import click

from .admin import backup_command, delete_command, inventory_command, stats_command
from .ask import ask_command
from .compare import compare_command
from .demo import demo_command
from .errors import Group
from .eval import bench_command, eval_command
from .index import index_command
from .model import model_group
from .qdrant import sync_command, verify_command
from .search import explain_command, search_command, show_command
from .serve import mcp_command, serve_command

COMMANDS: tuple[click.Command, ...] = (
    index_command,
    search_command,
    ask_command,
    explain_command,
    show_command,
    inventory_command,
    stats_command,
    delete_command,
    backup_command,
    eval_command,
    bench_command,
    compare_command,
    demo_command,
    model_group,
    serve_command,
    mcp_command,
    verify_command,
    sync_command,
)


@click.group(cls=Group)
@click.version_option(package_name="kbsearch")
def cli() -> None:
    """kbsearch: find the passage that answers a question, and prove it with numbers."""


for _command in COMMANDS:
    cli.add_command(_command)
