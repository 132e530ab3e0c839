"""``kbsearch serve --processes N``: N server processes on one listening socket.

One process's searches share one GIL: the Python work of a search (~8 ms of the demo's
~12 ms of CPU a unique hybrid query; the query's encoding runs outside it) caps one process
below what the cores could answer. The parent binds the socket and supervises N worker
processes (uvicorn's :class:`~uvicorn.supervisors.Multiprocess`: each one started with
``spawn``, pinged, restarted when it dies); each worker builds its own app, engine and
embedder from the app factory and accepts connections on the shared socket (the kernel hands
each connection to one of them). Ctrl-C or SIGTERM stops them all.

What each process holds on its own, and why that is right:

- the index in memory (snapshots, the model): each process loads them, so the memory is N
  times one process's (the demo: ~270 MB each); every write is a new generation in the file,
  and a read that finds another process's newer generation waits for its own snapshot of it
  (:mod:`kbsearch.backends.background`), so every process reads what any has answered;
- writes: each process writes on its own thread; two processes' writes wait for each other
  (SQLite's busy timeout, ``$KBSEARCH_BUSY_TIMEOUT``) and an upload's files are held by a
  journal lock (:mod:`kbsearch.store.upload_files`), so none is lost;
- API keys: each process reads the same keys file at start;
- ``/metrics``: the request counters and latency histograms of every process, summed
  (``prometheus_client``'s multiprocess mode, its files in a folder the parent makes and
  removes; :mod:`kbsearch.service.metrics`); the index gauges are read from the file;
- uploads are answered when written (no job to look up later), so no state is per process.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from socket import socket
from typing import Any

from uvicorn.config import STARTUP_FAILURE, Config
from uvicorn.supervisors.multiprocess import Multiprocess

from ..errors import ServerStartError
from . import access_log
from .metrics import MULTIPROCESS_DIR

START_SECONDS = 300.0  # a worker's start (the model and the first snapshot) at most


class Supervisor(Multiprocess):
    """uvicorn's supervisor, saying in the service log when every process serves and when
    one dies (uvicorn says it at level info, below the warning level ``serve`` runs at)."""

    def __init__(self, config: Config, sockets: list[socket], serving: str) -> None:
        super().__init__(config, sockets)
        self.serving = serving

    def init_processes(self) -> None:
        super().init_processes()
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
        before = list(self.processes)
        super().keep_subprocess_alive()
        for old, new in zip(before, self.processes, strict=True):
            if new is not old:
                access_log.warn(
                    f"server process {old.pid} stopped (exit status {old.exitcode}); "
                    f"process {new.pid} replaces it"
                )

    def failed_to_start(self) -> bool:
        return any(p.exitcode == STARTUP_FAILURE for p in self.processes)


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
    """Serve ``factory()``'s app on ``sock`` from ``processes`` worker processes until
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
    with shared_metrics():
        supervisor = Supervisor(config, [sock], serving)
        supervisor.run()
    if supervisor.failed_to_start():
        raise ServerStartError("a server process could not start (its error is above)")
