"""``kbsearch serve --processes N``: N server processes on one port.

One process's searches share one GIL: the Python work of a search (~8 ms of the demo's
~12 ms of CPU a unique hybrid query; the query's encoding runs outside it) caps one process
below what the cores could answer. The parent checks the port is free, binds one socket a
process on it (``SO_REUSEPORT``: the kernel spreads the connections over them,
:func:`port_sockets`) and supervises N worker processes (uvicorn's
:class:`~uvicorn.supervisors.Multiprocess`: each one started with ``spawn``, pinged,
replaced when it dies); each worker builds its own app, engine and embedder from the app
factory and accepts connections on its socket. Ctrl-C or SIGTERM stops them all. A
connection stays with the process that accepted it: while a process is replaced (a few
seconds), the new connections the kernel hands its socket wait for the replacement.

What each process holds on its own, and why that is right:

- the index in memory (snapshots, the model): each process loads them, so the memory is N
  times one process's (the demo: 250 MB each idle, up to 430 MB under load); every write is
  a new generation in the file, and a read that finds another process's newer generation
  waits for its own snapshot of it (:mod:`kbsearch.backends.background`), so every process
  reads what any has answered;
- writes: each process writes on its own thread; two processes' writes wait for each other
  (SQLite's busy timeout, ``$KBSEARCH_BUSY_TIMEOUT``) and an upload's files are held by a
  journal lock (:mod:`kbsearch.store.upload_files`), so none is lost;
- API keys: each process reads the same keys file at start;
- ``/metrics``: the request counters and latency histograms of every process, summed
  (``prometheus_client``'s multiprocess mode, its files in a folder the parent makes and
  removes; :mod:`kbsearch.service.metrics`); the index gauges are read from the file;
- a repeated search's kept result (:class:`~kbsearch.service.engine.GenerationResults`): per
  process, each keyed by the generation it read, so a kept result is the one any process
  would give; each process keeps its own;
- uploads are answered when written (no job to look up later), so no state is per process;
  there are no rate limits to share; ``kbsearch mcp`` stays one process (stdio).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket as socket_module
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from socket import socket
from typing import Any

from uvicorn.config import STARTUP_FAILURE, Config
from uvicorn.supervisors.multiprocess import Multiprocess, Process

from ..errors import ServerStartError
from . import access_log
from .metrics import MULTIPROCESS_DIR

START_SECONDS = 300.0  # a worker's start (the model and the first snapshot) at most


def stop_reason(exitcode: int | None, wait: float) -> str:
    """Why a server process stopped, as the log says it: ``killed by SIGKILL`` (a signal),
    ``exit status 1``, or, ``exitcode`` None, it was alive but did not answer the
    supervisor's check in ``wait`` seconds and was killed (it read ``exit status -9`` for
    both)."""
    if exitcode is None:
        return f"it did not answer the supervisor's check in {wait:g} s, so it was killed"
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit status {exitcode}"


class Supervisor(Multiprocess):
    """uvicorn's supervisor with one listening socket per process (:func:`port_sockets`;
    the same one for all where the system lacks ``SO_REUSEPORT``): a process that dies is
    replaced on its socket. It says in the service log when every process serves and when
    one dies (uvicorn says it at level info, below the warning level ``serve`` runs at).
    The number of processes is fixed (SIGTTIN and SIGTTOU, uvicorn's signals to add or
    remove one, are ignored: a new one would need a socket of its own)."""

    def __init__(self, config: Config, sockets: list[socket], serving: str) -> None:
        super().__init__(config, sockets)
        self.serving = serving

    def _socket(self, index: int) -> list[socket]:
        return [self.sockets[index % len(self.sockets)]]

    def _start(self, index: int) -> Process:
        process = Process(self.config, self._socket(index))
        process.start()
        return process

    def init_processes(self) -> None:
        self.processes = [self._start(i) for i in range(self.processes_num)]
        deadline = time.monotonic() + START_SECONDS
        for process in self.processes:
            while (
                not self.signal_queue
                and process.process.is_alive()
                and time.monotonic() < deadline
                and not process.is_ready(timeout=1)
            ):
                time.sleep(0.1)
        if all(p.process.is_alive() for p in self.processes) and not self.signal_queue:
            pids = ", ".join(str(p.pid) for p in self.processes)
            access_log.note(f"{self.serving}; {len(self.processes)} processes: {pids}")

    def keep_subprocess_alive(self) -> None:
        """uvicorn's, a replacement started on the socket of the process it replaces."""
        for index, process in enumerate(self.processes):
            if self.should_exit.is_set():
                return
            wait = self.config.timeout_worker_healthcheck
            if process.is_alive(timeout=wait):
                continue
            dead = process.exitcode is not None
            process.kill()  # hung, or dead already
            process.join()
            if process.exitcode == STARTUP_FAILURE:  # broken: it would fail again
                access_log.warn(f"server process {process.pid} could not start; stopping")
                self.should_exit.set()
                return
            if self.should_exit.is_set():
                return
            self.processes[index] = self._start(index)
            hung = not dead and process.exitcode == -signal.SIGKILL  # killed by kill() above
            access_log.warn(
                f"server process {process.pid} stopped"
                f" ({stop_reason(None if hung else process.exitcode, wait)}); "
                f"process {self.processes[index].pid} replaces it"
            )

    def restart_all(self) -> None:
        """SIGHUP: each process replaced in turn, the new one serving before the old stops."""
        for index, old in enumerate(self.processes):
            if self.should_exit.is_set():
                return
            new = self._start(index)  # a start loads the model: uvicorn's 5 s is too short
            if not new.wait_until_ready(START_SECONDS, self.should_exit):
                new.kill()
                new.join()
                access_log.warn(f"server process {new.pid} was not ready in time; restart stopped")
                return
            old.terminate()
            old.join()
            self.processes[index] = new

    def handle_ttin(self) -> None:
        access_log.warn("SIGTTIN ignored: the number of processes is --processes")

    def handle_ttou(self) -> None:
        access_log.warn("SIGTTOU ignored: the number of processes is --processes")

    def failed_to_start(self) -> bool:
        return any(p.exitcode == STARTUP_FAILURE for p in self.processes)


def exit_with_parent(parent: int, every: float = 0.5) -> None:
    """In a worker process: a daemon thread that sends it SIGTERM (uvicorn's graceful stop)
    once ``parent`` is no longer its parent, looked at every ``every`` seconds. A supervisor
    killed with SIGKILL (``kill -9``, the OOM killer, a service manager's last resort)
    stops nothing: its workers went on serving the port, and a new ``kbsearch serve`` on it
    was refused ('address in use')."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="kbsearch-parent", daemon=True).start()


def port_sockets(sock: socket, count: int) -> list[socket]:
    """``count`` sockets bound to ``sock``'s address with ``SO_REUSEPORT``, ``sock`` closed
    (``[sock]`` where the system lacks the option): the kernel hands each new connection to
    one of them by a hash of its addresses, so each process gets a share of the connections.
    With one socket shared by every process, the process that woke first accepted every
    connection waiting (asyncio accepts them all at once): the 8 keep-alive connections of
    ``benchmarks/http_load.py``, opened together, all went to one process of two in one run.

    Raises:
        ServerStartError: the address was taken meanwhile.
    """
    if count == 1 or not hasattr(socket_module, "SO_REUSEPORT"):
        return [sock]
    address = sock.getsockname()
    family = sock.family
    sock.close()  # it holds the port alone: it was bound without SO_REUSEPORT
    sockets: list[socket] = []
    try:
        for _ in range(count):
            shared = socket(family, socket_module.SOCK_STREAM)
            sockets.append(shared)
            shared.setsockopt(socket_module.SOL_SOCKET, socket_module.SO_REUSEADDR, 1)
            shared.setsockopt(socket_module.SOL_SOCKET, socket_module.SO_REUSEPORT, 1)
            shared.bind(address)
    except OSError as exc:
        for shared in sockets:
            shared.close()
        raise ServerStartError(f"cannot listen on port {address[1]}: {exc}") from None
    return sockets


@contextmanager
def shared_metrics() -> Iterator[None]:
    """Within: the processes started write their metrics to one folder
    (``$PROMETHEUS_MULTIPROC_DIR``, read when a process imports ``prometheus_client``; made
    here and removed after, unless it was set already)."""
    given = os.environ.get(MULTIPROCESS_DIR)
    folder = given or tempfile.mkdtemp(prefix="kbsearch-metrics-")
    os.environ[MULTIPROCESS_DIR] = folder
    try:
        yield
    finally:
        if given is None:
            os.environ.pop(MULTIPROCESS_DIR, None)
            shutil.rmtree(folder, ignore_errors=True)


def serve_processes(
    factory: Callable[[], Any], sock: socket, processes: int, serving: str, **uvicorn: Any
) -> None:
    """Serve ``factory()``'s app on ``sock``'s address (a socket each:
    :func:`port_sockets`) from ``processes`` worker processes until
    Ctrl-C or SIGTERM; ``factory`` must pickle (a module's function, or a
    :func:`functools.partial` of one), since each worker is a new interpreter. ``serving``:
    the line the log says once every worker serves. ``uvicorn``: :class:`uvicorn.Config`'s
    other settings.

    Raises:
        ServerStartError: a worker failed before it served (its error is on stderr).
    """
    if os.name == "nt":
        raise ServerStartError(
            "--processes over 1 needs the file locks (flock) of a POSIX system to keep the "
            "upload store in step; serve one process on Windows"
        )
    config = Config(factory, factory=True, workers=processes, **uvicorn)
    sockets = port_sockets(sock, processes)
    try:
        with shared_metrics():
            supervisor = Supervisor(config, sockets, serving)
            supervisor.run()
    finally:
        for shared in sockets:
            shared.close()
    if supervisor.failed_to_start():
        raise ServerStartError("a server process could not start (its error is above)")
