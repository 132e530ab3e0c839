"""The search page (server-rendered with Jinja2, a little JavaScript, no build step): a search
box, the route, an as-of date and a language; the abstention stage's verdict ("The documents
don't say" with the confidence when it abstains, the nearest passages still listed below it);
results with title, section, version, dates, snippet and source; a "why" fold with the
explanation; and the latest evaluation report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape

from ..errors import KbsearchError, SearchTimeout
from ..judge.answer import NO_ANSWER, UNCERTAIN_NOTE
from ..pipeline import HYBRID
from . import operations as ops
from .context import (
    COOKIE,
    HERE,
    Service,
    answer_head,
    caller_of,
    parameter_problem,
    service_of,
    utf8_query,
)
from .keys import Caller
from .messages import shown_error
from .statuses import status_of

router = APIRouter(include_in_schema=False)
templates = Jinja2Templates(directory=HERE / "templates")
CallerDep = Annotated[Caller, Depends(caller_of)]
ServiceDep = Annotated[Service, Depends(service_of)]


def marked(snippet: dict[str, Any] | None, fallback: str = "") -> Markup:
    """A snippet's text, HTML-escaped, with its match offsets wrapped in ``<mark>``."""
    if not snippet:
        return Markup(escape(fallback))
    text: str = snippet["text"]
    out, last = [], 0
    for start, end in sorted(tuple(m) for m in snippet.get("marks", ())):
        if start < last:
            continue
        out += [str(escape(text[last:start])), f"<mark>{escape(text[start:end])}</mark>"]
        last = end
    out.append(str(escape(text[last:])))
    left = "… " if snippet.get("truncated_left") else ""
    right = " …" if snippet.get("truncated_right") else ""
    return Markup(left + "".join(out) + right)


templates.env.filters["marked"] = marked


@router.get("/", response_class=HTMLResponse, dependencies=[Depends(utf8_query)])
async def search_page(
    request: Request,
    service: ServiceDep,
    caller: CallerDep,
    q: str = "",
    route: str = "",
    as_of: str = "",
    lang: str = "",
    offset: int = 0,
    min_confidence: float | None = None,
) -> Response:
    """The page; without ``route``, the best one the index supports (hybrid, or lexical on an
    index without vectors, which the page says, offering no other route). A parameter it does
    not take (``rout=``, ``k=``) or a single-valued one sent twice is a 422 that says so, as
    the API's, the form shown and nothing searched: it would otherwise be ignored silently."""
    problem = parameter_problem(request)

    def facts(kb: Any) -> tuple[list[str], tuple[str, ...]]:
        return ops.document_languages(kb, caller.audience), ops.available_routes(kb)

    def read(kb: Any) -> tuple[list[str], tuple[str, ...], dict[str, Any] | None]:
        languages, routes = facts(kb)
        if problem is not None or not q.strip():
            return languages, routes, None
        args = ops.SearchArgs(q, 10, route, as_of or None, lang or None, (), offset,
                              min_confidence)  # fmt: skip
        return languages, routes, ops.search(kb, caller.audience, args, service.limits)

    error: str | None = problem
    result: dict[str, Any] | None = None
    status = 200 if problem is None else 422
    try:
        languages, routes, result = await service.engine.run_read(read)
    except (KbsearchError, SearchTimeout) as exc:
        error, status = await shown_error(service.engine, exc), status_of(exc)
        try:
            languages, routes = await service.engine.run_read(facts)
        except (KbsearchError, SearchTimeout):  # the index cannot answer at all (damaged)
            languages, routes = [], (ops.LEXICAL,)
    context = {
        "q": q,
        "route": route or (HYBRID if HYBRID in routes else ops.LEXICAL),
        "keyword_only": routes == (ops.LEXICAL,),
        "routes": routes,
        "as_of": as_of,
        "lang": lang,
        "languages": languages,
        "result": result,
        "error": error,
        "caller": caller,
        "has_report": service.report is not None and caller.audience == "staff",
        "no_answer": NO_ANSWER,
        "uncertain_note": UNCERTAIN_NOTE,
    }
    return templates.TemplateResponse(request, "search.html", context, status_code=status)


@router.get("/ui/why", response_class=HTMLResponse, dependencies=[Depends(utf8_query)])
async def why_fragment(
    request: Request,
    service: ServiceDep,
    caller: CallerDep,
    q: str,
    passage_id: str,
    as_of: str = "",
    lang: str = "",
) -> Response:
    problem = parameter_problem(request)
    if problem is not None:
        return HTMLResponse(f'<p class="error">{escape(problem)}</p>', status_code=422)
    try:
        explanation = await service.engine.run_read(
            lambda kb: ops.explain(
                kb,
                caller.audience,
                q,
                passage_id,
                service.limits,
                as_of=as_of or None,  # the form's empty choice: today, every language
                lang=lang or None,
            )
        )
    except (KbsearchError, SearchTimeout) as exc:
        # the API's status: a hidden passage is the same 404 as a missing one
        shown = await shown_error(service.engine, exc)
        return HTMLResponse(f'<p class="error">{escape(shown)}</p>', status_code=status_of(exc))
    return templates.TemplateResponse(request, "why.html", {"e": explanation})


@router.get("/report", response_class=HTMLResponse)
async def report_page(request: Request, service: ServiceDep, caller: CallerDep) -> Response:
    """The newest evaluation report (staff keys only: reports list staff questions)."""
    path = latest_report(service.report)
    if caller.audience != "staff" or path is None:
        if caller.audience != "staff":
            message = "the evaluation report is shown to staff keys only"
        elif service.report is None:
            message = "no evaluation report: start the server with --report FILE_OR_FOLDER"
        else:
            message = missing_report(service.report, shown="the --report location")
        context = {"message": message}
        return templates.TemplateResponse(request, "message.html", context, status_code=404)
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:  # removed meanwhile, unreadable, not UTF-8
        reason = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else "unreadable"
        message = (
            f"the newest evaluation report, {path.name}, cannot be read ({reason}); make one"
            " with `kbsearch eval QUESTIONS --db DB --report FILE`"
        )
        context = {"message": message}
        return templates.TemplateResponse(request, "message.html", context, status_code=404)
    return templates.TemplateResponse(request, "report.html", {"name": path.name, "report": text})


def latest_report(location: Path | None) -> Path | None:
    """``location`` itself (a file), or the newest ``*.html`` file in it (a folder; a
    folder named so, or a file removed meanwhile, is none)."""
    if location is None or not location.exists():
        return None
    if location.is_file():
        return location
    dated = []
    for path in location.glob("*.html"):
        try:
            if path.is_file():
                dated.append((path.stat().st_mtime, path))
        except OSError:
            continue
    return max(dated)[1] if dated else None


def missing_report(location: Path, shown: str | None = None) -> str:
    """Why ``location`` (named ``shown``, default its path) gives no report, and how to make
    one."""
    name = shown or str(location)
    what = (
        f"{name} holds no evaluation report (*.html)"
        if location.is_dir()
        else f"{name} is not an evaluation report file (it does not exist)"
    )
    return f"{what}; make one with `kbsearch eval QUESTIONS --db DB --report FILE`"


def key_page(request: Request, message: str) -> Response:
    """The page asking for an API key (answers 401 to a browser)."""
    return templates.TemplateResponse(request, "key.html", {"message": message}, status_code=401)


@router.post("/ui/key")
async def set_key(request: Request, key: Annotated[str, Form()]) -> Response:
    """Keep the key in an HttpOnly cookie for this site, then go to the search page."""
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(COOKIE, key, httponly=True, samesite="strict")
    return response


answer_head(router)  # every GET route above answers HEAD too
