"""The JSON body of ``POST /search``: read after the key is checked (no key is a 401, whatever
the body), its fields those of ``GET /search`` (no audience: it comes from the key), and each
problem named in the 422 (an unknown field with the name it likely meant)."""

from __future__ import annotations

import difflib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import from_json
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request

from ..errors import shown_value
from . import operations as ops
from .context import CallerDep

ROUTE_HELP = "lexical, dense or hybrid (default: hybrid, or lexical on an index without vectors)."


class SearchBody(BaseModel):
    """`POST /search`: the same fields as `GET /search`; no audience (it comes from the
    key), unknown fields refused."""

    model_config = ConfigDict(extra="forbid")

    q: str = Field(description="The query text.")
    k: int = Field(ops.DEFAULT_K, strict=True, description="Hits per page.")
    route: str = Field(ops.BEST, description=ROUTE_HELP)
    as_of: str | None = Field(None, description="YYYY-MM-DD: the versions in force that day.")
    lang: str | None = Field(None, description="Only passages in this language (en, fr...).")
    doc: list[str] | str | None = Field(None, description="Only these document ids.")
    offset: int = Field(0, strict=True, description="Hits to skip (0-based), for the next page.")
    min_confidence: float | None = Field(
        None, description="Answerable from this confidence on (default: the model's)."
    )


# what a caller coming from another search API may send instead of a field's name
FIELD_HINTS = {"query": "q", "question": "q", "text": "q", "limit": "k", "top_k": "k"}


def _unknown_field(name: str) -> str:
    known = list(SearchBody.model_fields)
    hint = FIELD_HINTS.get(name) or next(iter(difflib.get_close_matches(name, known, n=1)), None)
    guess = f" (did you mean {shown_value(hint)}?)" if hint else ""
    return f"unknown field {shown_value(name)}{guess}; the body takes: {', '.join(known)}"


def _body_problem(error: dict[str, Any]) -> str:
    name = ".".join(str(x) for x in error.get("loc", ())) or "body"
    if error.get("type") == "extra_forbidden":
        return _unknown_field(name)
    if error.get("type") == "missing":
        return f"field {shown_value(name)} is required"
    return f"{name}: {error.get('msg', 'invalid')}"


async def search_body(request: Request, caller: CallerDep) -> SearchBody:
    """The body of ``POST /search``, read here rather than by FastAPI so that the key is
    checked first (no key is 401, whatever the body) and each problem is named (422)."""
    try:
        raw = await request.body()
    except ClientDisconnect:  # gone, or cut off by the body limit (app.py), which answered 413
        raise HTTPException(400, "the request body could not be read") from None
    try:
        # pydantic's parser, not json.loads: it refuses nesting deeper than 200 levels
        # (json.loads recursed until RecursionError: a 500) and NaN (no JSON value)
        data = from_json(raw, allow_inf_nan=False)
    except ValueError as error:
        if "recursion limit" in str(error):
            raise HTTPException(422, "the body's JSON is nested too deeply") from None
        data = None
    if isinstance(data, dict):
        _refuse_repeated_keys(raw)
    else:
        raise HTTPException(
            422,
            'the body must be a JSON object (Content-Type: application/json), e.g. {"q": "..."}',
        )
    if "audience" in data:
        raise HTTPException(422, "audience comes from the API key, not the request")
    try:
        return SearchBody.model_validate(data)
    except ValidationError as error:
        # an unknown field first: {"query": ...} is a misnamed q before it is a missing one
        problems = sorted(
            error.errors(include_url=False), key=lambda e: e["type"] != "extra_forbidden"
        )
        raise HTTPException(422, "; ".join(_body_problem(dict(e)) for e in problems)) from None


def _refuse_repeated_keys(raw: bytes) -> None:
    """Raises HTTPException 422 naming a key an object of ``raw`` (JSON that
    :func:`pydantic_core.from_json` read: nested 200 levels at most) holds twice: a parser
    keeps the last value, and the first, the one the caller may have meant, was dropped."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            if key in seen:
                raise HTTPException(422, f"key {shown_value(key)} sent twice; send it once")
            seen[key] = value
        return seen

    try:
        json.loads(raw, object_pairs_hook=pairs)
    except ValueError:  # what from_json read but json does not (an integer of 5,000 digits)
        raise HTTPException(422, "the body is not JSON that can be read") from None


BODY_SCHEMA = {
    "required": True,
    "content": {"application/json": {"schema": SearchBody.model_json_schema()}},
}
