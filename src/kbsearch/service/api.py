"""The JSON API: search, explain, passages, documents (read, replace, delete), health and
metrics. Every route takes the audience from the caller's key (:func:`caller_of`)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Query, Request, UploadFile
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from ..errors import shown_names, shown_value
from . import operations as ops
from .body import BODY_SCHEMA, ROUTE_HELP, SearchBody, search_body
from .context import CallerDep, Service, ServiceDep, answer_head, known_parameters
from .keys import ANONYMOUS, Caller
from .metrics import CONTENT_TYPE
from .uploads import Upload, hides_public, write_upload

router = APIRouter(dependencies=[Depends(known_parameters)])


class ErrorBody(BaseModel):
    """Every error's body: one message."""

    error: str = Field(description="What went wrong, in words.")


ERROR_MEANINGS = {
    400: "The request body could not be read.",
    401: "No API key, or an unknown one (with `--keys`).",
    403: "The key may not do this, or (without `--keys`) the client is not on loopback.",
    404: "Missing, or hidden from this key's audience (one message for both).",
    413: "The request body is too large.",
    415: "A file format kbsearch does not index as one document.",
    422: "A malformed, unknown or out-of-range argument (`audience` among them).",
    503: "Over the time limit, or the index cannot answer.",
}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route's error ``codes``: each an :class:`ErrorBody` (declaring
    422 keeps FastAPI from listing its own ``HTTPValidationError``, which is never sent)."""
    return {code: {"model": ErrorBody, "description": ERROR_MEANINGS[code]} for code in codes}


READ_ERRORS = (401, 403, 422, 503)  # any route behind a key that reads the index


async def _search(service: Service, caller: Caller, args: ops.SearchArgs) -> dict[str, Any]:
    # the same search on the same generation is answered as before (Engine.read): it
    # depends on the audience, the arguments and, without as_of, the day
    return await service.engine.run_read(
        lambda kb: ops.search(kb, caller.audience, args, service.limits),
        key=lambda: ("search", caller.audience, args, None if args.as_of else date.today()),
        audience=caller.audience,
    )


@router.get("/search", summary="Search (query parameters)", responses=errors(*READ_ERRORS))
async def search_get(
    service: ServiceDep,
    caller: CallerDep,
    q: Annotated[str, Query(description="The query text.")],
    k: int = ops.DEFAULT_K,
    route: Annotated[str, Query(description=ROUTE_HELP)] = ops.BEST,
    as_of: str | None = None,
    lang: str | None = None,
    doc: Annotated[list[str] | None, Query()] = None,
    offset: int = 0,
    min_confidence: float | None = None,
) -> dict[str, Any]:
    args = ops.SearchArgs(q, k, route, as_of, lang, tuple(doc or ()), offset, min_confidence)
    return await _search(service, caller, args)


@router.post(
    "/search",
    summary="Search (JSON body)",
    openapi_extra={"requestBody": BODY_SCHEMA},
    responses=errors(400, 401, 403, 413, 422, 503),
)
async def search_post(
    service: ServiceDep, caller: CallerDep, body: Annotated[SearchBody, Depends(search_body)]
) -> dict[str, Any]:
    doc = ops.doc_list(body.doc) or ()
    args = ops.SearchArgs(
        body.q, body.k, body.route, body.as_of, body.lang, doc, body.offset, body.min_confidence
    )
    return await _search(service, caller, args)


@router.get(
    "/ask",
    summary="A cited answer, an uncertain one, or the documents don't say",
    responses=errors(*READ_ERRORS),
)
async def ask(
    service: ServiceDep,
    caller: CallerDep,
    q: Annotated[str, Query(description="The question.")],
    k: int = 5,
    as_of: str | None = None,
    lang: str | None = None,
    doc: Annotated[list[str] | None, Query()] = None,
    min_confidence: float | None = None,
) -> dict[str, Any]:
    """`kbsearch ask --json`: `verdict` `answered` (the span of the top passages that answers,
    with its citation), `uncertain` (the best span and its citation, which may not answer) or
    `dont_say` ("The documents don't say" and the nearest `k`)."""
    return await service.engine.run_read(
        lambda kb: ops.ask(
            kb,
            caller.audience,
            q,
            service.limits,
            k=k,
            as_of=as_of,
            lang=lang,
            doc=tuple(doc or ()),
            min_confidence=min_confidence,
        )  # fmt: skip
    )


@router.get(
    "/explain", summary="Why a passage ranks where it does", responses=errors(*READ_ERRORS, 404)
)
async def explain(
    service: ServiceDep,
    caller: CallerDep,
    q: str,
    passage_id: str,
    as_of: str | None = None,
    lang: str | None = None,
    doc: Annotated[list[str] | None, Query()] = None,
) -> dict[str, Any]:
    return await service.engine.run_read(
        lambda kb: ops.explain(
            kb, caller.audience, q, passage_id, service.limits, as_of=as_of, lang=lang, doc=doc
        )
    )


@router.get(
    "/passages/{passage_id:path}",
    summary="One passage",
    description="A passage id holds `#`, which a URL would cut off as a fragment: send it as"
    " `%23` (`/passages/warranty@v2%23warranty-period`), as in `/explain?passage_id=`.",
    responses=errors(*READ_ERRORS, 404),
)
async def passage(service: ServiceDep, caller: CallerDep, passage_id: str) -> dict[str, Any]:
    return await service.engine.run_read(lambda kb: ops.passage(kb, caller.audience, passage_id))


@router.get(
    "/documents",
    summary="The document versions this key may see",
    responses=errors(*READ_ERRORS),
)
async def documents(
    service: ServiceDep,
    caller: CallerDep,
    limit: Annotated[int | None, Query(description="Versions per page (default 100).")] = None,
    offset: Annotated[int, Query(description="The first version's position (0-based).")] = 0,
) -> dict[str, Any]:
    """By doc id then version, a page at a time: `total` counts every version this key may
    see, `next_offset` is the next page's `offset` (`null` on the last)."""
    limits = service.limits
    return await service.engine.run_read(
        lambda kb: ops.documents(kb, caller.audience, offset, limit, limits)
    )


@router.get(
    "/documents/{doc_id:path}",
    summary="A document: versions, metadata, passage ids",
    responses=errors(*READ_ERRORS, 404),
)
async def document(service: ServiceDep, caller: CallerDep, doc_id: str) -> dict[str, Any]:
    return await service.engine.run_read(lambda kb: ops.document(kb, caller.audience, doc_id))


async def writer_of(caller: CallerDep) -> Caller:
    """The caller, if it may write; else 403 (a dependency, so it answers before the upload's
    form is validated: a read-only caller learns it may not write, not what the form lacks)."""
    if caller is ANONYMOUS:  # no key was sent: the key is not what refuses
        raise HTTPException(403, "this server is read-only (started without --keys)")
    if not caller.can_write:
        raise HTTPException(403, "this key may not write")
    return caller


WriterDep = Annotated[Caller, Depends(writer_of)]


async def known_fields(request: Request, caller: WriterDep) -> None:
    """Rejects (422) a form field the endpoint does not take (``colour=``, ``acess=``), as
    :func:`known_parameters` does a query parameter: it would be dropped silently."""
    dependant = getattr(request.scope.get("route"), "dependant", None)
    if dependant is None:
        return
    known = {p.alias for p in dependant.body_params}
    form = await request.form()
    sent = set(form.keys())
    if "audience" in sent:  # as caller_of says of the query parameter
        raise HTTPException(422, "audience is not a field: it comes from the API key")
    unknown = sorted(sent - known)
    if unknown:
        takes = ", ".join(sorted(known))
        raise HTTPException(
            422, f"unknown field(s) {shown_names(unknown)}; this endpoint takes: {takes}"
        )
    for name in sorted(sent):  # FastAPI would keep the last of a repeated part
        if len(form.getlist(name)) > 1:
            count = len(form.getlist(name))
            raise HTTPException(422, f"field {shown_value(name)} sent {count} times; send it once")
    for param in dependant.body_params:
        # FastAPI reads an empty form value as the field left out: "version=" would be
        # stored as the default version 1
        default = param.field_info.default
        if isinstance(default, str) and default and form.get(param.alias) == "":
            raise HTTPException(
                422, f"{param.alias} is empty; leave it out for {default!r}, or give a value"
            )


@router.put(
    "/documents/{doc_id:path}",
    summary="Add or replace a document version from a file",
    dependencies=[Depends(known_fields)],
    status_code=201,
    responses={
        201: {"description": "Added: a version that was not there."},
        200: {"description": "Replaced (or unchanged): the version was there."},
        **errors(400, 401, 403, 413, 415, 422, 503),
    },
)
async def put_document(
    service: ServiceDep,
    caller: WriterDep,
    doc_id: str,
    file: Annotated[UploadFile, File(description="Markdown, HTML, PDF or text.")],
    version: Annotated[str, Form()] = "1",
    title: Annotated[str, Form()] = "",
    access: Annotated[str, Form(description="public or staff")] = "staff",
    language: Annotated[str, Form()] = "",
    effective_from: Annotated[str, Form()] = "",
    effective_to: Annotated[str, Form()] = "",
    owner: Annotated[str, Form()] = "",
    doc_type: Annotated[str, Form()] = "",
) -> JSONResponse:
    """Parsed, split, embedded and written in one transaction, replacing that version; a
    file that cannot be indexed (415 unsupported format, 422 broken) changes nothing. A field
    left out takes its default (`access`: staff), not the previous version's; the answer
    states the metadata stored."""
    upload = Upload(
        doc_id=doc_id,
        filename=file.filename or "",
        content=await file.read(),
        version=version,
        title=title,
        access=access,
        language=language,
        effective_from=effective_from,
        effective_to=effective_to,
        owner=owner,
        doc_type=doc_type,
    )
    upload.check()  # before queueing behind other writes
    result = await service.engine.run_write(
        lambda kb: write_upload(kb, upload), hides=lambda kb: hides_public(kb, upload)
    )
    body = {
        "doc_id": result.doc_id,
        "version": result.version,
        "status": result.status,
        "passages": result.passages,
        **result.metadata,
    }
    return JSONResponse(body, status_code=201 if result.status == "added" else 200)


@router.delete(
    "/documents/{doc_id:path}",
    summary="Remove a document (one version, or all)",
    responses=errors(*READ_ERRORS, 404),
)
async def delete_document(
    service: ServiceDep, caller: WriterDep, doc_id: str, version: str | None = None
) -> dict[str, Any]:
    if version is not None and not version.strip():  # as PUT refuses an empty version
        raise HTTPException(
            422, "version is empty; leave it out to remove every version, or give a value"
        )
    removed = await service.engine.run_write(
        lambda kb: ops.delete(kb, caller.audience, doc_id, version)
    )
    return {"doc_id": doc_id, "deleted_versions": removed}


class Unhealthy(BaseModel):
    """`/healthz`'s answer when the index cannot answer: the failure's kind only."""

    status: str = Field(description="error")
    error: str = Field(description="The exception's class name.")


@router.get(
    "/healthz",
    summary="The index opens and answers",
    responses={
        422: errors(422)[422],
        503: {"model": Unhealthy, "description": "The index cannot answer."},
    },
)
async def healthz(service: ServiceDep) -> JSONResponse:
    """Needs no key, so it says nothing about the index (its generation moves on every write,
    staff-only ones included: `/metrics`, behind a key, has it)."""
    try:
        await service.engine.run_check()
    except Exception as exc:  # any failure to answer is unhealthy, with its kind only
        return JSONResponse({"status": "error", "error": type(exc).__name__}, status_code=503)
    return JSONResponse({"status": "ok"})


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE: {}}}, **errors(*READ_ERRORS)},
)
async def metrics(service: ServiceDep, caller: CallerDep, request: Request) -> Response:
    """Prometheus text: requests by route and status, latencies, the index generation and the
    caller's audience's document and passage counts. With `--keys`, staff keys only: the
    generation and the write counts move with staff-only writes (a public key must not learn
    when one happened). Without keys (loopback only: the operator's own machine) it answers."""
    if service.keys is not None and caller.audience != "staff":
        raise HTTPException(403, "/metrics is for staff keys: it counts every request and write")

    generation, docs, passages = await service.engine.run_read(
        lambda kb: ops.index_figures(kb, caller.audience)
    )
    body = service.metrics.exposition(generation, docs, passages)
    return Response(body, media_type=CONTENT_TYPE)


answer_head(router)  # every GET route above answers HEAD too
