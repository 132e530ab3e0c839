"""``kbsearch serve``'s start (uvicorn itself is not started): what it says about --report,
and a missing serve extra."""

from __future__ import annotations

import sys
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


@pytest.mark.parametrize(("command", "module"), [("serve", "uvicorn"), ("mcp", "mcp")])
def test_without_the_serve_extra_one_error_line_names_it(
    db: str, monkeypatch: pytest.MonkeyPatch, command: str, module: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # "not installed": importing it fails
    monkeypatch.delitem(sys.modules, "kbsearch.service.mcp_server", raising=False)  # imports mcp
    result = CliRunner().invoke(cli, [command, "--db", db])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"error: kbsearch {command} needs the serve extra (no module {module!r}): "
        "pip install 'kbsearch[serve]'"
    ]
