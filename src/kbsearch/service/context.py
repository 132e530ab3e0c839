"""What the routes share: the :class:`Service` (engine, keys, metrics, limits, report) and
who the caller is (:func:`caller_of`: from the key, never from a request parameter)."""

from __future__ import annotations

import gc
import ipaddress
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin
from urllib.parse import parse_qsl

from fastapi import APIRouter, Depends, Request
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException

from ..errors import shown_names, shown_value
from .engine import Engine
from .keys import ANONYMOUS, Caller, KeyRing
from .metrics import Metrics
from .operations import Limits, SearchArgs, available_routes, search

HERE = Path(__file__).parent
COOKIE = "kbsearch_key"


class Service:
    """What the routes share: the engine, the keys, the metrics, the limits, the report."""

    def __init__(
        self, engine: Engine, keys: KeyRing | None, limits: Limits, report: Path | None
    ) -> None:
        self.engine = engine
        self.keys = keys
        self.limits = limits
        self.report = report
        self.metrics = Metrics()

    def settle(self, timeout: float = 60.0) -> None:
        """Get a serving process ready for steady load: wait (at most ``timeout`` seconds)
        for the first snapshot, run one search per route the index supports (loading the
        query encoder's session, the language profiles and every per-generation part), then
        collect garbage and freeze what is left (:func:`gc.freeze`).

        Why the freeze: the cyclic garbage collector's full collections walk every container
        the process holds; with the startup heap (modules, FastAPI's models, the tokenizer's
        and fusion model's tables, ~100,000 containers) each took 50 to 110 ms under load, every
        one to two seconds, stalling every search thread at once (the p99 of
        ``benchmarks/http_load.py``: 352 ms at 8 clients, hybrid). Frozen objects are still
        freed by reference counting; only the startup heap's reference cycles, none of them
        garbage after the collection above, are never examined again.
        """
        engine = self.engine
        if engine.snapshots is not None:
            engine.snapshots.wait_for(engine.kb.store.database.generation(), timeout)
        for route in available_routes(engine.kb):
            args = SearchArgs(q="opening hours delivery heures d'ouverture", route=route)
            engine.read(partial(search, audience="public", args=args, limits=self.limits))
        gc.collect()
        gc.freeze()

    def caller(self, request: Request) -> Caller:
        """Who sent ``request``.

        Raises:
            HTTPException: 401 without a known key; 403 from a non-loopback client when the
                server has no keys file.
        """
        if self.keys is None:
            host = request.client.host if request.client else ""
            if not _loopback(host):
                raise HTTPException(403, "this server has no keys file: it answers loopback only")
            return ANONYMOUS
        key = _presented_key(request)
        found = self.keys.caller(key) if key else None
        if found is None:
            raise HTTPException(401, "an API key is required" if not key else "unknown API key")
        return found


def _loopback(host: str) -> bool:
    if host in ("testclient", "localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _presented_key(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    return request.headers.get("x-api-key") or request.cookies.get(COOKIE) or None


# The dependencies below are ``async`` although they never wait: FastAPI runs a plain ``def``
# dependency on a worker thread, three thread hand-offs per request for a few attribute reads.


async def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


async def caller_of(request: Request) -> Caller:
    """The caller (cached on the request); rejects an ``audience`` parameter with 422."""
    cached: Caller | None = getattr(request.state, "caller", None)
    if cached is not None:
        return cached
    service: Service = request.app.state.service
    caller = service.caller(request)
    request.state.caller = caller
    if "audience" in request.query_params:
        raise HTTPException(422, "audience is not a parameter: it comes from the API key")
    return caller


CallerDep = Annotated[Caller, Depends(caller_of)]  # an endpoint's caller (its key's audience)
ServiceDep = Annotated[Service, Depends(service_of)]


def _needs_caller(dependant: Any) -> bool:
    return any(sub.call is caller_of or _needs_caller(sub) for sub in dependant.dependencies)


def _query_names(dependant: Any) -> set[str]:
    names = {p.alias for p in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


def _takes_many(annotation: Any) -> bool:
    """Whether a parameter's annotation is a list (``list[str] | None`` included)."""
    origin = get_origin(annotation)
    if origin in (list, tuple, set, frozenset):
        return True
    return origin in (Union, UnionType) and any(_takes_many(a) for a in get_args(annotation))


def _single_names(dependant: Any) -> set[str]:
    names = {p.alias for p in dependant.query_params if not _takes_many(p.field_info.annotation)}
    for sub in dependant.dependencies:
        names |= _single_names(sub)
    return names


@dataclass(frozen=True)
class _Takes:
    """What a route's endpoint takes, read from its dependency tree once per route."""

    caller: bool  # it needs the caller's key
    known: frozenset[str]  # the query parameters it takes
    single: tuple[str, ...]  # those of one value, sorted


_TAKES: dict[int, tuple[object, _Takes]] = {}  # id(route) -> the route (held), what it takes


def _takes(request: Request) -> _Takes | None:
    """:class:`_Takes` of the request's route (``None``: it matched no endpoint)."""
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return None
    held = _TAKES.get(id(route))
    if held is not None and held[0] is route:  # routes are not hashable: by id, held alive
        return held[1]
    found = _Takes(
        _needs_caller(dependant),
        frozenset(_query_names(dependant)),
        tuple(sorted(_single_names(dependant))),
    )
    _TAKES[id(route)] = (route, found)
    return found


async def known_parameters(request: Request) -> None:
    """Rejects (422) a query parameter the endpoint does not take: a misspelt or unsupported
    option (``fusion=``, ``rrf_k=`` on ``/search``) would otherwise be ignored silently; and
    a single-valued parameter given twice (``k=3&k=5``), of which the last would be read
    (:func:`parameter_problem`). ``audience`` gets its own message (:func:`caller_of`). An
    endpoint that needs a key authenticates first: without a key the answer is 401, whatever
    the parameters."""
    takes = _takes(request)
    if takes is None:
        return
    if takes.caller:
        await caller_of(request)
    check_utf8_query(request)
    problem = parameter_problem(request)
    if problem is not None:
        raise HTTPException(422, problem)


def parameter_problem(request: Request) -> str | None:
    """Why the request's query parameters do not fit its endpoint, for a 422: one it does not
    take (``audience`` left to :func:`caller_of`) or a single-valued one given more than
    once; ``None`` when they fit (or the request matched no endpoint). The API raises it
    (:func:`known_parameters`); the search page shows it on the page."""
    takes = _takes(request)
    if takes is None:
        return None
    unknown = sorted(set(request.query_params) - takes.known - {"audience"})
    if unknown:
        names = ", ".join(sorted(takes.known)) or "none"
        return f"unknown parameter(s) {shown_names(unknown)}; this endpoint takes: {names}"
    for name in takes.single:
        given = len(request.query_params.getlist(name))
        if given > 1:  # else the last one would be read, silently
            return f"parameter {name} given {given} times; it takes one value"
    return None


def check_utf8_query(request: Request) -> None:
    """Rejects (422) a query string whose percent-escapes are not UTF-8 (``q=pass%FFword``):
    Starlette decodes them with U+FFFD in place of each bad byte, and that text would be
    searched. The parameter is named; an escaped U+FFFD itself (``%EF%BF%BD``) is text.

    Raises:
        HTTPException: 422, naming the first such parameter.
    """
    raw = request.scope.get("query_string", b"").decode("latin-1")
    # latin-1 keeps each escaped byte as one character, to be decoded as UTF-8 here
    for name, value in parse_qsl(raw, keep_blank_values=True, encoding="latin-1"):
        try:
            name.encode("latin-1").decode("utf-8")
            value.encode("latin-1").decode("utf-8")
        except UnicodeDecodeError:
            shown = name.encode("latin-1").decode("utf-8", "replace")
            raise HTTPException(
                422,
                f"parameter {shown_value(shown)} is not valid UTF-8 text"
                " (percent-encode UTF-8 bytes)",
            ) from None


async def utf8_query(request: Request, caller: Annotated[Caller, Depends(caller_of)]) -> None:
    """:func:`check_utf8_query` as a dependency, after the key is checked (no key is 401)."""
    check_utf8_query(request)


def answer_head(router: APIRouter) -> None:
    """A ``HEAD`` route beside each of ``router``'s ``GET`` routes: the same endpoint and
    dependencies (the key check among them), left out of the OpenAPI schema. FastAPI's
    routes answer only the methods they list (fastapi/fastapi#1773), and listing HEAD beside
    GET would make it a second operation of the schema; uvicorn sends a HEAD answer's
    headers without its body. Call it once the routes are declared (a route that has its
    HEAD twin already gets no second one)."""
    routes = [r for r in router.routes if isinstance(r, APIRoute)]
    heads = {r.path for r in routes if "HEAD" in (r.methods or ())}
    for route in routes:
        if "GET" in (route.methods or ()) and route.path not in heads:
            router.add_api_route(
                route.path,
                route.endpoint,
                methods=["HEAD"],
                name=f"{route.name}_head",
                dependencies=route.dependencies,
                response_class=route.response_class,
                include_in_schema=False,
            )
