"""``kbsearch serve``'s start (uvicorn itself is not started): what it says about --report."""

from __future__ import annotations

from pathlib import Path

import pytest
import uvicorn
from click.testing import CliRunner
from support import FILES, FakeEmbedder, write_files

from kbsearch import embedders
from kbsearch.cli import cli


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(embedders.EMBEDDERS, "fake", (lambda arg, threads: FakeEmbedder(), "test"))
    docs = write_files(tmp_path / "docs", FILES)
    path = str(tmp_path / "kb.db")
    args = ["index", str(docs), "--db", path, "--inventory", str(docs / "inventory.csv")]
    result = CliRunner().invoke(cli, [*args, "--embedder", "fake"])
    assert result.exit_code == 0, result.output
    return path


def start(db: str, report: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The warning lines ``kbsearch serve --report REPORT`` logs at start."""
    apps: list[object] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: apps.append(app))
    result = CliRunner().invoke(cli, ["serve", "--db", db, "--report", str(report)])
    assert result.exit_code == 0, result.output
    for app in apps:
        app.state.service.engine.close()  # type: ignore[attr-defined]
    return [line for line in result.stderr.splitlines() if " warning " in line]


def test_serve_warns_when_the_report_folder_holds_no_report(
    db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    warnings = start(db, runs, monkeypatch)
    assert len(warnings) == 1 and "holds no evaluation report" in warnings[0], warnings
    assert "kbsearch eval" in warnings[0]
    (runs / "report.html").write_text("<p>report</p>", encoding="utf-8")
    assert start(db, runs, monkeypatch) == []
