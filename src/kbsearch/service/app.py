"""The ASGI app: ``create_app(db, keys=...)`` builds the FastAPI application that serves one
knowledge base (JSON API, search page, metrics). ``kbsearch serve`` runs it on uvicorn.

Access: with a keys file (:mod:`kbsearch.service.keys`) every request but ``/healthz`` and the
OpenAPI pages needs a key (``Authorization: Bearer KEY``, ``X-API-Key: KEY``, or the page's
cookie), and the key alone decides the audience. Without one the server answers loopback
clients only, as the public audience, read-only.

Errors are ``{"error": MESSAGE}`` with 401 (no or unknown key), 403 (no write access, or not
loopback), 404 (missing, or hidden from this audience: one message for both), 413, 415, 422
(malformed or out-of-range argument), 503 (over the time limit, or the index cannot answer).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import errors
from ..embedders import Embedder
from ..errors import SearchTimeout
from ..ingest.limits import IngestLimits, byte_size
from . import access_log
from .context import HERE, Service, answer_head
from .docs import declare_keys, install_docs
from .engine import Engine
from .keys import Caller, KeyRing
from .messages import shown_error
from .operations import Limits
from .statuses import error_status
from .uploads import MAX_UPLOAD_BYTES, recover_uploads

MAX_BODY_BYTES = 1024 * 1024  # a request body but an upload's (a JSON search: a few KB)
MAX_UPLOAD_BODY_BYTES = MAX_UPLOAD_BYTES + 1024 * 1024  # PUT: the file and its form fields
# uvicorn's HTTP parser for `kbsearch serve` (httptools, a dependency; uvicorn's "auto" would
# fall back to h11, whose 16 KiB request head refuses a longest query of 4-byte characters).
# It refuses a longer URL (path and query string as sent, percent-encoded) with uvicorn's own
# plain-text 400 before the app sees the request: its URL offsets are 16-bit (measured with
# httptools 0.9, uvicorn 0.54). A query of MAX_QUERY_CHARS characters takes at most 12 bytes
# a character, so every query up to ~4 times that length gets the API's JSON error.
HTTP_PARSER = "httptools"
MAX_URL_BYTES = 65535


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


LOCATIONS = ("query", "body", "path", "header", "cookie")


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for item in exc.errors():
        loc = tuple(item.get("loc", ()))
        if loc and loc[0] in LOCATIONS:  # where FastAPI found it, not a name (a field may be
            loc = loc[1:]  # called "query")
        where = ".".join(str(x) for x in loc)
        parts.append(f"{where or 'request'}: {item.get('msg', 'invalid')}")
    return "; ".join(parts)


def _install_handlers(app: FastAPI) -> None:
    @app.exception_handler(errors.KbsearchError)
    async def library_error(request: Request, exc: errors.KbsearchError) -> JSONResponse:
        engine = request.app.state.service.engine
        return _error(error_status(exc), await shown_error(engine, exc))

    @app.exception_handler(SearchTimeout)
    async def timeout(request: Request, exc: SearchTimeout) -> JSONResponse:
        return _error(503, str(exc), {"Retry-After": "1"})

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, _validation_message(exc))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status_code == 401 else None
        if exc.status_code == 401 and "text/html" in request.headers.get("accept", ""):
            from .pages import key_page

            return key_page(request, str(exc.detail))
        return _error(exc.status_code, str(exc.detail), headers)


class _LogAndCount:
    """One log line and the metrics per HTTP request, as plain ASGI middleware (Starlette's
    ``BaseHTTPMiddleware`` runs each request in a task group behind a streaming response:
    several per cent of a busy server's CPU). The status is the response's first message's;
    the route template is the one the router recorded in the scope."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500
        logged = False

        def log() -> None:
            nonlocal logged
            logged = True
            seconds = time.perf_counter() - start
            template = getattr(scope.get("route"), "path", None) or "(unmatched)"
            caller: Caller | None = scope.get("state", {}).get("caller")
            audience = caller.audience if caller else "-"
            self.service.metrics.observe(template, scope["method"], status, seconds)
            access_log.request_line(scope["method"], scope["path"], status, seconds, audience)

        async def sent(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                log()  # before the last part leaves: the client never sees it first
            await send(message)

        try:
            await self.app(scope, receive, sent)
        finally:
            if not logged:  # no complete response (an error)
                log()


class _BodyLimit:
    """Answers 413 to a request whose body is over :data:`MAX_BODY_BYTES`
    (:data:`MAX_UPLOAD_BODY_BYTES` for a ``PUT``) before the app reads it: by its
    ``Content-Length``, or, sent in chunks, once it has received that much (the app then
    reads a client that went away). FastAPI reads a whole body before any dependency runs,
    the key check included: without this, anyone could make the server hold any amount."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = MAX_UPLOAD_BODY_BYTES if scope["method"] == "PUT" else MAX_BODY_BYTES
        message = f"request body over {byte_size(limit)}"
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await _error(413, message)(scope, receive, send)
            return
        received = 0
        refused = started = False

        async def counted() -> Message:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            incoming = await receive()
            if incoming["type"] == "http.request":
                received += len(incoming.get("body", b""))
                if received > limit:
                    refused = True
                    if not started:
                        await _error(413, message)(scope, receive, send)
                    return {"type": "http.disconnect"}
            return incoming

        async def sent(outgoing: Message) -> None:
            nonlocal started
            if refused:  # the 413 is the response
                return
            started = True
            await send(outgoing)

        await self.app(scope, counted, sent)


def create_app(
    db: str | Path,
    *,
    keys: KeyRing | str | Path | None = None,
    embedder: Embedder | str | None = None,
    workers: int = 4,
    time_limit: float = 5.0,
    limits: Limits | None = None,
    report: str | Path | None = None,
    log_format: str = "text",
    ingest_limits: IngestLimits | None = None,
) -> FastAPI:
    """The app serving the knowledge base at ``db``.

    ``keys``: a keys file (or a loaded :class:`KeyRing`); ``None`` serves public, read-only,
    loopback only. ``workers`` read threads; ``time_limit`` seconds per search (then 503).
    ``report``: an evaluation report (HTML) or a folder of them (the newest is shown).
    ``ingest_limits``: the limits every upload is held to (:mod:`kbsearch.ingest.limits`).

    Raises:
        KnowledgeBaseNotFoundError, SchemaError, EmbedderMismatchError,
        EmbedderUnavailableError: the index cannot be served.
        InvalidArgumentError: a malformed keys file.
    """
    ring = KeyRing.load(keys) if isinstance(keys, str | Path) else keys
    engine = Engine(db, embedder=embedder, workers=workers, time_limit=time_limit,
                    ingest_limits=ingest_limits)  # fmt: skip
    recover_uploads(engine.kb)  # a crash mid-upload: finished or undone before serving
    service = Service(engine, ring, limits or Limits(), Path(report) if report else None)
    access_log.configure(log_format)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        engine.close()

    app = FastAPI(
        title="kbsearch",
        summary="Search a knowledge base: BM25, E5 dense search and their fusion (a learned "
        "ranking of both routes' candidates), with audience and version filters, "
        "explanations and a calibrated answer-or-abstain.",
        version=_version(),
        lifespan=lifespan,
        docs_url=None,  # served from this server's files, not a CDN (docs.py)
        redoc_url=None,
    )
    app.state.service = service
    _install_handlers(app)
    app.add_middleware(_BodyLimit)
    app.add_middleware(_LogAndCount, service=service)  # outside: it logs the 413s too
    from . import api, pages

    app.include_router(api.router)
    app.include_router(pages.router)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    install_docs(app, "kbsearch")
    answer_head(app.router)  # its own pages (/docs); the routers' routes have theirs
    if ring is not None:
        declare_keys(app)
    return app


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kbsearch")
    except PackageNotFoundError:
        return "0"
