"""``kbsearch serve``'s start (uvicorn itself is not started): what it says about --report,
the address it listens on (one in use is one error line), and a missing serve extra."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

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
    result, _ = run_serve(["--db", db, "--report", str(report), "--port", "0"], monkeypatch)
    assert result.exit_code == 0, result.output
    return [line for line in result.stderr.splitlines() if " warning " in line]


def run_serve(args: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[Any]]:
    """``kbsearch serve ARGS`` with uvicorn's server loop replaced: the result, and the
    sockets the server was handed (with the port each was bound to)."""
    sockets: list[Any] = []

    def run(server: uvicorn.Server, sockets_: list[socket.socket]) -> None:
        sockets.extend((s.getsockname()[1], s.fileno() != -1) for s in sockets_)
        server.config.app.state.service.engine.close()

    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: run(self, sockets))
    return CliRunner().invoke(cli, ["serve", *args]), sockets


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


def test_serve_listens_on_the_socket_it_bound_and_says_so_after(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, sockets = run_serve(["--db", db, "--port", "0"], monkeypatch)
    assert result.exit_code == 0, result.output
    [(port, open_)] = sockets
    assert open_ and port > 0
    serving = [line for line in result.stderr.splitlines() if "serving" in line and "http" in line]
    assert len(serving) == 1 and serving[0].endswith(
        f"on http://127.0.0.1:{port} (search page at /, API at /docs)"
    ), serving


def test_a_port_in_use_is_one_error_line_before_anything_loads(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result, sockets = run_serve(["--db", db, "--port", str(port)], monkeypatch)
    assert result.exit_code == 1 and sockets == []
    assert result.stderr.splitlines() == [
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use; another server is "
        "listening there: stop it or choose another --port"
    ]


@pytest.mark.parametrize(("command", "module"), [("serve", "uvicorn"), ("mcp", "mcp")])
def test_without_the_serve_extra_one_error_line_names_it(
    db: str, monkeypatch: pytest.MonkeyPatch, command: str, module: str
) -> None:
    for name in [m for m in sys.modules if m.partition(".")[0] == module] or [module]:
        monkeypatch.setitem(sys.modules, name, None)  # "not installed": importing it fails
    monkeypatch.delitem(sys.modules, "kbsearch.service.mcp_server", raising=False)  # imports mcp
    result = CliRunner().invoke(cli, [command, "--db", db])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"error: kbsearch {command} needs the serve extra (no module {module!r}): "
        "pip install 'kbsearch[serve]'; in a checkout: pip install '.[serve]'"
    ]


def test_serve_parses_http_with_httptools_whose_url_limit_is_documented(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """uvicorn's "auto" choice may fall back to h11, whose 16 KiB request head would refuse
    a query of MAX_QUERY_CHARS 4-byte characters in plain text (docs/reference/api.md)."""
    configs: list[uvicorn.Config] = []
    monkeypatch.setattr(
        uvicorn.Server, "run", lambda self, sockets=None: configs.append(self.config)
    )
    result = CliRunner().invoke(cli, ["serve", "--db", db, "--port", "0"])
    assert result.exit_code == 0, result.output
    assert [c.http for c in configs] == ["httptools"]


def test_the_help_gives_the_upload_cap_beside_the_ingest_limits() -> None:
    """A file under max_file_bytes can still be over the upload cap: the help says both."""
    from kbsearch.ingest.limits import MAX_UPLOAD_BYTES, byte_size

    shown = " ".join(CliRunner().invoke(cli, ["serve", "--help"]).output.split())
    assert f"An uploaded file over {byte_size(MAX_UPLOAD_BYTES)} is refused (413)" in shown
    assert "max_file_bytes (67108864 bytes, 64 MiB)" in shown


def test_serve_keeps_a_given_kbsearch_threads_and_refuses_a_bad_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    started: list[str] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: started.append(
        os.environ["KBSEARCH_THREADS"]))  # fmt: skip
    db = cli_indexed_db(tmp_path, monkeypatch)
    monkeypatch.setenv("KBSEARCH_THREADS", "1")
    result = CliRunner().invoke(cli, ["serve", "--db", db, "--port", "0"])
    assert result.exit_code == 0, result.output
    for bad in ("abc", "999", "+2", "٣"):  # the last three were taken: 999 threads, 2, 3
        monkeypatch.setenv("KBSEARCH_THREADS", bad)
        result = CliRunner().invoke(cli, ["serve", "--db", db, "--port", "0"])
        assert result.exit_code == 1, bad
        assert "$KBSEARCH_THREADS must be a whole number from 1 to 64" in result.stderr
    result = CliRunner().invoke(cli, ["serve", "--db", db, "--port", "0", "--model-threads", "3"])
    assert result.exit_code == 0, result.output
    assert started == ["1", "3"]
