"""``kbsearch index --backend qdrant``, ``kbsearch verify`` and ``kbsearch sync`` end to end
on Qdrant Edge (lexical-only index: no model needed)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from support import FILES, write_files

from kbsearch.backends.qdrant.edge import EdgeCollection
from kbsearch.cli import cli


def test_index_verify_drift_sync(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "docs", FILES)
    db, edge = str(tmp_path / "kb.db"), str(tmp_path / "edge")
    runner = CliRunner()
    args = ["index", str(docs), "--db", db, "--inventory", str(docs / "inventory.csv")]
    result = runner.invoke(
        cli, [*args, "--embedder", "none", "--backend", "qdrant", "--qdrant-path", edge]
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["verify", "--db", db])
    assert result.exit_code == 0, result.output
    assert "in sync" in result.output
    result = runner.invoke(
        cli, ["search", "lost parcel refunded", "--db", db, "--route", "lexical"]
    )
    assert result.exit_code == 0, result.output
    assert "delivery@v1" in result.output

    shard = EdgeCollection(edge)  # drift: a point vanishes behind kbsearch's back
    shard.ensure(None)
    shard.delete(["delivery@v1#lost-parcel"])
    shard.close()
    result = runner.invoke(cli, ["verify", "--db", db])
    assert result.exit_code == 1
    assert "missing from Qdrant: 1 (delivery@v1#lost-parcel)" in result.output
    result = runner.invoke(cli, ["sync", "--db", db])
    assert result.exit_code == 0, result.output
    assert "in sync" in result.output
    assert runner.invoke(cli, ["verify", "--db", db]).exit_code == 0


def test_verify_without_a_qdrant_copy_is_one_line_error(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "docs", FILES)
    db = str(tmp_path / "kb.db")
    runner = CliRunner()
    runner.invoke(cli, ["index", str(docs), "--db", db, "--embedder", "none"])
    result = runner.invoke(cli, ["verify", "--db", db])
    assert result.exit_code == 1
    assert result.output.strip().startswith("error:") and "no Qdrant copy" in result.output
    result = runner.invoke(cli, ["verify", "--db", db, "--backend", "sqlite", "--qdrant-path", "x"])
    assert result.exit_code == 1 and "need --backend qdrant" in result.output
