"""``kbsearch serve``'s start (uvicorn itself is not started): what it says about --report."""

from __future__ import annotations

from pathlib import Path

import pytest
import uvicorn
from click.testing import CliRunner
from support import cli_indexed_db

from kbsearch.cli import cli


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    return cli_indexed_db(tmp_path, monkeypatch)


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
