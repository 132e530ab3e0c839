"""`kbsearch demo` on an index without vectors shows and evaluates the lexical route only,
instead of failing half-way at the first dense search."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kbsearch.cli import cli


def test_demo_without_vectors_runs_the_lexical_route(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["demo", "--dir", str(tmp_path), "--embedder", "none"])
    assert result.exit_code == 0, result.output
    assert "public · lexical" in result.output
    assert "· dense" not in result.output and "· hybrid" not in result.output
    assert (tmp_path / "report.html").exists()
    result = CliRunner().invoke(cli, ["demo", "--dir", str(tmp_path), "--route", "dense"])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'helpcentre.db'} has no vectors (built with --embedder none):"
        " use --route lexical"
    ]
