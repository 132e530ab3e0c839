"""`kbsearch demo` on an index without vectors shows and evaluates the lexical route only,
instead of failing half-way at the first dense search."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

import kbsearch
from kbsearch.cli import cli
from kbsearch.tasks.demo import demo_files, examples_dir


def test_demo_without_vectors_runs_the_lexical_route(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["demo", "--dir", str(tmp_path), "--embedder", "none"])
    assert result.exit_code == 0, result.output
    assert "public · lexical" in result.output
    assert "· dense" not in result.output and "· hybrid" not in result.output
    assert (tmp_path / "report.html").exists()
    said = " ".join(result.output.split())
    assert "What was measured: 79 of the 93 questions have a relevant passage" in said
    assert "the lexical route puts one in the top 5" in said and "The other 14 are not" in said
    assert "--route lexical" in said and "kbsearch ask" not in said  # no vectors: no answers
    result = CliRunner().invoke(cli, ["demo", "--dir", str(tmp_path), "--route", "dense"])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'helpcentre.db'} has no vectors (built with --embedder none):"
        " use --route lexical"
    ]


def test_a_demo_index_built_from_another_copy_is_rebuilt(tmp_path: Path) -> None:
    """The demo's data directory is shared by every checkout and install: an index built
    from another copy of the help centre made every bundled file fail ("already indexed
    from ..."), and the run still exited 0 evaluating the old index."""
    other = tmp_path / "other-checkout"
    shutil.copytree(examples_dir(), other)
    folder = tmp_path / "demo"
    folder.mkdir()
    with kbsearch.open_kb(folder / "helpcentre.db", create=True, embedder="none") as kb:
        assert kb.index(demo_files(other), inventory=other / "inventory.csv").ok
    result = CliRunner().invoke(cli, ["demo", "--dir", str(folder), "--route", "lexical"])
    assert result.exit_code == 0, result.output
    assert f"it was indexed from {other}" in result.output.replace("\n", "")
    assert "failed 0" in result.output and "already indexed" not in result.output


def test_an_index_of_ones_own_named_like_the_demos_is_never_replaced(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "pricing.md").write_text("# Pricing\n\nOur plans start at 5 euros.\n")
    db = folder / "helpcentre.db"
    folder.mkdir()
    with kbsearch.open_kb(db, create=True, embedder="none") as kb:
        assert kb.index([tmp_path / "docs"], default_access="public").ok
    before = db.read_bytes()
    result = CliRunner().invoke(cli, ["demo", "--dir", str(folder), "--route", "lexical"])
    assert result.exit_code == 1
    assert "is not a demo index (it holds pricing" in result.stderr
    assert "give another --dir" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert db.read_bytes() == before


def test_a_folder_with_markup_and_spaces_is_printed_as_it_is_and_quoted(tmp_path: Path) -> None:
    folder = tmp_path / "my [/] demo [bold]x"
    result = CliRunner().invoke(cli, ["demo", "--dir", str(folder), "--embedder", "none"])
    assert result.exit_code == 0, result.output
    assert f"HTML report: {folder / 'report.html'}" in result.output
    assert f"--db '{folder / 'helpcentre.db'}' --route lexical" in result.output


def test_a_demo_folder_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    result = CliRunner().invoke(cli, ["demo", "--dir", str(tmp_path / "loop1")])
    assert result.exit_code == 1, result.output
    assert result.stderr.strip().splitlines() == [
        f"error: cannot make the folder {tmp_path / 'loop1'}: something else is there"
    ]
