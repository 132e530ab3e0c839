"""``kbsearch serve`` (HTTP API and search page on uvicorn) and ``kbsearch mcp`` (an MCP server
over stdio). The service code lives in :mod:`kbsearch.service`; the one error adapter is
:mod:`kbsearch.cli.errors`."""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kbsearch.errors import InvalidArgumentError, KbsearchError, ServerStartError, install_hint
from kbsearch.ingest.limits import IngestLimits

from .options import NumberRange, served_ingest_limits_option

if TYPE_CHECKING:
    from fastapi import FastAPI

LOOPBACK_NAMES = ("localhost",)


@contextmanager
def serve_extra(command: str) -> Iterator[None]:
    """Imports of the ``serve`` extra's packages (uvicorn, FastAPI, mcp...): one missing is
    :class:`ServerStartError` naming the extra to install, not a traceback."""
    try:
        yield
    except ModuleNotFoundError as exc:
        package = (exc.name or "kbsearch").partition(".")[0]
        if package == "kbsearch":
            raise  # a module of kbsearch itself: a bug, not a missing extra
        raise ServerStartError(
            f"kbsearch {command} needs the serve extra (no module {package!r}): "
            + install_hint("serve")
        ) from None


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (not yet listening: uvicorn listens on it once the
    server is ready), so that an address in use is known before the model loads.

    Raises:
        ServerStartError: the port is in use, or the host is not an address of this machine.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: TIME_WAIT is fine
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        hint = "; another server is listening there: stop it or choose another --port"
        raise ServerStartError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}"
            + (hint if exc.errno == errno.EADDRINUSE else "")
        ) from None
    return sock


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command("serve")
@click.option("--db", required=True, type=click.Path(dir_okay=False), help="Knowledge base.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (another than loopback needs --keys).")  # fmt: skip
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on.")  # fmt: skip
@click.option(
    "--keys",
    type=click.Path(dir_okay=False),
    help="Keys file (KEY AUDIENCE read|write per line). Without it: public, read-only, "
    "loopback only.",
)
@click.option("--processes", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Server processes on the one port, each with its own search threads, "
              "model and index in memory (the demo: 250 MB each idle, up to 430 MB under "
              "load). One process's searches share one Python lock (GIL): on a machine with "
              "more cores than one process keeps busy, 2 or more answer more searches a "
              "second. A write answered by one is read by all; /metrics sums all.")  # fmt: skip
@click.option("--workers", default=4, show_default=True, type=click.IntRange(1, 64),
              help="Search threads (of each process).")  # fmt: skip
@click.option("--model-threads", type=click.IntRange(1, 64),
              help="Model threads: query encodings that run at once, one thread each; also "
              "a large dense scan's threads (default: $KBSEARCH_THREADS, else the search "
              "threads, at most the CPU count).")  # fmt: skip
@click.option("--time-limit", default=5.0, show_default=True, type=NumberRange(0.01),
              help="Seconds a search may take before it is answered with 503.")  # fmt: skip
@click.option("--report", type=click.Path(path_type=Path),
              help="Evaluation report (HTML) or a folder of them, shown at /report.")  # fmt: skip
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Access log lines on stderr: text or JSON.")  # fmt: skip
@served_ingest_limits_option
def serve_command(db: str, host: str, port: int, keys: str | None, processes: int,
                  workers: int, model_threads: int | None, time_limit: float,
                  report: Path | None, log_format: str,
                  ingest_limits: IngestLimits) -> None:  # fmt: skip
    """Serve the knowledge base DB over HTTP: JSON API, search page, /metrics, /docs."""
    with serve_extra("serve"):
        import uvicorn

        from kbsearch.service import access_log
        from kbsearch.service.app import HTTP_PARSER
        from kbsearch.service.keys import KeyRing
        from kbsearch.service.pages import latest_report, missing_report
        from kbsearch.service.processes import serve_processes
    from kbsearch.embedders.onnx_backend import resolve_threads
    from kbsearch.knowledge_base import open_kb

    if keys is None and not is_loopback(host):
        raise InvalidArgumentError(
            f"without --keys the server is public and read-only on loopback only; "
            f"--host {host} needs a keys file"
        )
    sock = bind(host, port)  # before the model loads: an address in use fails at once
    try:
        if model_threads is not None or not os.environ.get("KBSEARCH_THREADS"):
            encodings = model_threads or min(workers, os.cpu_count() or 1)
            os.environ["KBSEARCH_THREADS"] = str(encodings)  # read when the embedder loads
        resolve_threads(None)  # a bad $KBSEARCH_THREADS fails here, not at the first query
        if keys is not None:
            KeyRing.load(keys)  # a malformed keys file fails here, before any process starts
        factory = partial(
            served_app, db, keys=keys, workers=workers, time_limit=time_limit, report=report,
            log_format=log_format, ingest_limits=ingest_limits, worker=processes > 1,
            parent=os.getpid(),
        )  # fmt: skip
        if processes > 1:  # a missing or unreadable index: one error, before any worker
            open_kb(db).close()
            app = None
        else:  # the model and the index load first: an error is the only line
            app = factory()
        access_log.configure(log_format)
        if keys is None:
            access_log.note(
                "no keys file: serving the public audience, read-only, to loopback clients only"
            )
        else:
            access_log.note(f"keys from {keys}: each key's audience and write access apply")
        if report is not None and latest_report(report) is None:
            access_log.warn(f"{missing_report(report)}: /report answers 404 until then")
        port = sock.getsockname()[1]  # the one the system chose for --port 0
        where = f"[{host}]" if ":" in host else host
        serving = f"serving {db} on http://{where}:{port} (search page at /, API at /docs)"
        settings: dict[str, Any] = {"access_log": False, "log_level": "warning",
                                    "http": HTTP_PARSER}  # fmt: skip
        if app is None:
            serve_processes(factory, sock, processes, serving, **settings)
            return
        server = uvicorn.Server(uvicorn.Config(app, **settings))
        access_log.note(serving)
        server.run(sockets=[sock])  # uvicorn listens on it
    finally:
        sock.close()


def served_app(
    db: str, *, keys: str | None, workers: int, time_limit: float, report: Path | None,
    log_format: str, ingest_limits: IngestLimits, worker: bool = False,
    parent: int | None = None,
) -> FastAPI:  # fmt: skip
    """The app ``serve`` runs, settled (:meth:`~kbsearch.service.context.Service.settle`):
    the factory each of ``--processes`` builds its own with. In a ``worker`` process, an
    error that stops it from serving is its one ``error:`` line and uvicorn's start-failure
    status, so the parent stops instead of restarting it. An outdated converted model is
    said by each process that loads it. A ``worker`` stops when its ``parent`` (the
    supervisor's process id) is gone (:func:`~kbsearch.service.processes.exit_with_parent`)."""
    from kbsearch.embedders.convert.export import outdated_embedder
    from kbsearch.service import access_log
    from kbsearch.service.app import create_app
    from kbsearch.service.processes import exit_with_parent

    if worker and parent is not None:
        exit_with_parent(parent)

    try:
        app = create_app(
            db, keys=keys, workers=workers, time_limit=time_limit, report=report,
            log_format=log_format, ingest_limits=ingest_limits,
        )  # fmt: skip
    except KbsearchError as error:
        if not worker:
            raise
        from uvicorn.config import STARTUP_FAILURE

        from .errors import report as report_error

        report_error(error)
        sys.exit(STARTUP_FAILURE)
    outdated = outdated_embedder(app.state.service.engine.embedder)
    if outdated:
        access_log.note(outdated)
    app.state.service.settle()
    return app


@click.command("mcp")
@click.option("--db", required=True, type=click.Path(dir_okay=False), help="Knowledge base.")
@click.option("--audience", type=click.Choice(["public", "staff"]), default="public",
              show_default=True, help="Fixed for the whole session.")  # fmt: skip
def mcp_command(db: str, audience: str) -> None:
    """Serve the knowledge base DB to an assistant over MCP (stdio): search, ask, explain, show,
    documents."""
    with serve_extra("mcp"):
        from kbsearch.service.mcp_server import serve_stdio

    serve_stdio(db, audience)
