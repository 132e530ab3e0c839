"""``kbsearch serve --processes N``: N worker processes on one port (uvicorn's supervisor).
Run for real, on a lexical-only index (a spawned worker loads no test embedder): a write
answered by one process is read on every connection, ``/metrics`` sums every process, a
worker that dies is replaced and said so, SIGTERM stops them all; a worker that cannot start
stops the server with its error."""

from __future__ import annotations

import os
import pickle
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from support import cli_indexed_db

from kbsearch.cli import cli

READ = "processes-read-key-0001"
WRITE = "processes-write-key-0001"
MARKER = "zebracorn"


class Server:
    """``kbsearch serve ARGS`` in its own process; its stderr lines gathered as they come."""

    def __init__(self, args: list[str]) -> None:
        # a write waits for the other process's as long as the test allows: what is tested is
        # that none is lost, not how fast six writes pass each other on a loaded machine (at
        # the default 10 s, one of six PUTs got a 503 while two test suites shared the cores)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "KBSEARCH_BUSY_TIMEOUT": "60"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kbsearch", "serve", *args],
            stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float = 120) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if found := re.search(pattern, line):
                    return found
            if self.process.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"no line matching {pattern!r} in {self.lines}")

    def workers(self) -> list[int]:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        pids = [int(p) for p in children.read_text().split()]
        return [p for p in pids if "spawn_main" in Path(f"/proc/{p}/cmdline").read_text()]

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(60)


@pytest.fixture
def lexical_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    return cli_indexed_db(tmp_path, monkeypatch, embedder="none")


@pytest.fixture
def served(lexical_db: str, tmp_path: Path) -> Iterator[tuple[Server, str]]:
    keys = tmp_path / "keys.txt"
    keys.write_text(f"{READ} public read\n{WRITE} staff write\n", encoding="utf-8")
    args = ["--db", lexical_db, "--port", "0", "--keys", str(keys), "--processes", "2"]
    server = Server([*args, "--workers", "1"])
    try:
        found = server.wait_for(r"serving .* on (http://\S+) .*; 2 processes: (\d+), (\d+)$")
        yield server, found.group(1)
    finally:
        server.stop()


def _get(url: str, path: str, key: str = READ, **params: Any) -> httpx.Response:
    """On a new connection each time: the kernel hands each to one of the processes."""
    headers = {"Authorization": f"Bearer {key}"}
    return httpx.get(f"{url}{path}", params=params, headers=headers, timeout=30)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_processes_share_one_port_and_every_write(served: tuple[Server, str]) -> None:
    server, url = served
    assert len(server.workers()) == 2
    text = f"# Leaflet\n\n## Spare parts\n\nSpare parts for the {MARKER} kettle.\n"
    put = httpx.put(
        f"{url}/documents/leaflet",
        files={"file": ("leaflet.md", text.encode())},
        data={"access": "public", "language": "en"},
        headers={"Authorization": f"Bearer {WRITE}"},
        timeout=60,
    )
    assert put.status_code == 201, put.text
    for _ in range(12):  # whichever process answers, it reads the write
        hits = _get(url, "/search", q=MARKER, route="lexical").json()["hits"]
        assert [h["doc_id"] for h in hits][:1] == ["leaflet"]
    metrics = _get(url, "/metrics", key=WRITE).text
    searches = re.search(
        r'kbsearch_requests_total\{method="GET",route="/search",status="200"\} (\S+)', metrics
    )
    assert searches is not None and float(searches.group(1)) == 12  # both processes' counts

    # writes at once on several connections (so on both processes): each waits for the
    # other's transaction, none is lost, every process reads them all
    def put_memo(i: int) -> int:
        memo = f"# Memo {i}\n\n## Note\n\nThe {MARKER} memo number {i}.\n"
        return httpx.put(
            f"{url}/documents/memo-{i}",
            files={"file": (f"memo-{i}.md", memo.encode())},
            data={"access": "public", "language": "en"},
            headers={"Authorization": f"Bearer {WRITE}"},
            timeout=60,
        ).status_code

    with ThreadPoolExecutor(6) as pool:
        assert list(pool.map(put_memo, range(6))) == [201] * 6
    for _ in range(6):
        found = {d["doc_id"] for d in _get(url, "/documents").json()["documents"]}
        assert {f"memo-{i}" for i in range(6)} <= found

    first, second = server.workers()
    os.kill(second, signal.SIGKILL)
    replaced = server.wait_for(
        rf"server process {second} stopped \(killed by SIGKILL\); process (\d+) replaces it"
    )
    assert sorted(server.workers()) == sorted([first, int(replaced.group(1))])
    workers = server.workers()
    assert server.stop() == 0
    assert not [p for p in workers if Path(f"/proc/{p}").exists()]


def _errors(args: list[str]) -> list[str]:
    """The ``error:`` lines of ``kbsearch serve ARGS``, which must exit with status 1."""
    server = Server(args)
    assert server.process.wait(120) == 1
    server._reader.join(10)
    return [line for line in server.lines if line.startswith("error:")]


def test_a_server_that_cannot_start_says_why_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing index is found by the parent (one line, no worker started); an embedder the
    workers cannot load (the test's, registered in this process only) by each worker, whose
    start failure stops the parent instead of a restart loop."""
    none = tmp_path / "none.db"
    assert _errors(["--db", str(none), "--port", "0", "--processes", "2"]) == [
        f"error: no knowledge base at {none}; create it with `kbsearch index PATH --db {none}`"
    ]
    db = cli_indexed_db(tmp_path / "fake", monkeypatch)
    lines = _errors(["--db", db, "--port", "0", "--processes", "2"])
    assert lines[-1] == "error: a server process could not start (its error is above)"
    assert lines[0].startswith("error: ") and "fake" in lines[0], lines


def test_the_factory_each_worker_builds_its_app_with_pickles(
    lexical_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker is a new interpreter (``spawn``): what it is handed must pickle."""
    from kbsearch.cli import serve

    handed: list[tuple[Any, int, dict[str, Any]]] = []
    monkeypatch.setattr(
        "kbsearch.service.processes.serve_processes",
        lambda factory, sock, n, serving, **settings: handed.append((factory, n, settings)),
    )
    result = CliRunner().invoke(cli, ["serve", "--db", lexical_db, "--port", "0",
                                      "--processes", "3"])  # fmt: skip
    assert result.exit_code == 0, result.output
    [(factory, processes, settings)] = handed
    assert processes == 3 and settings["http"] == "httptools"
    again = pickle.loads(pickle.dumps(factory))
    assert again.func is serve.served_app and again.keywords["worker"] is True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_workers_stop_when_the_supervisor_is_killed(served: tuple[Server, str]) -> None:
    """SIGKILL reaches the supervisor alone (``kill -9``, the OOM killer): its workers went
    on serving the port, so a new server on it was refused ('address in use')."""
    server, url = served
    workers = server.workers()
    assert len(workers) == 2
    server.process.kill()
    server.process.wait(10)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in workers):
        time.sleep(0.1)
    assert not [p for p in workers if Path(f"/proc/{p}").exists()]
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/healthz", timeout=5)
