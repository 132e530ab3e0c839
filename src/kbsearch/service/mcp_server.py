"""An MCP server (the official ``mcp`` Python SDK, stdio transport) exposing one knowledge base
to an assistant as five tools: ``search``, ``ask``, ``explain``, ``show`` and ``documents``.

The audience is fixed when the server starts (``kbsearch mcp --audience``); no tool takes it
as an argument (one sent is refused), so a conversation cannot widen what it sees. Tools
return the same JSON as the HTTP API, as compact text; a library error becomes the tool's error
message.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from pydantic import BaseModel, ConfigDict, ValidationError, create_model, model_validator

from .. import __version__
from ..errors import InvalidArgumentError, KbsearchError, SearchTimeout
from ..knowledge_base import KnowledgeBase
from . import operations as ops
from .engine import Engine
from .messages import shown_error


def build_server(engine: Engine, audience: str, limits: ops.Limits | None = None) -> MCPServer:
    """The MCP server for ``engine``'s knowledge base, searching as ``audience``. Each tool
    answers compact JSON text (one line: what a model reads, once), refuses an argument it
    does not take (:func:`strict_tool`), and its description is its docstring without the
    source's indentation; the server logs warnings only (an INFO line on stderr per tool
    error, rich-formatted, was noise beside the error the model reads)."""
    limits = limits or ops.Limits()

    async def read(fn: Any) -> str:
        try:
            result = await engine.run_read(fn)
        except (KbsearchError, SearchTimeout) as exc:  # a message for the model, no traceback
            raise ToolError(await shown_error(engine, exc)) from None
        return json.dumps(result, ensure_ascii=False, separators=(",", ":"))

    async def search(
        query: str,
        k: int = 5,
        route: str = ops.BEST,
        as_of: str | None = None,
        lang: str | None = None,
        offset: int = 0,
    ) -> str:
        """Passages that answer `query`, best first: each with its title, section, version,
        effective dates, language, source and text; `verdict`: `answered`, `uncertain`
        (the passages may not answer: say so) or `dont_say` (with its `confidence`: no
        passage is likely to answer; say the documents don't say rather than answer from
        these passages). `route`: lexical, dense or hybrid
        (default: hybrid, or lexical on an index without vectors);
        `as_of`: YYYY-MM-DD (the versions in force that day; default today); `lang`: en,
        fr...; `offset`: for the next page (see `next_offset`)."""
        args = ops.SearchArgs(query, k, route, as_of, lang, (), offset)
        return await read(lambda kb: ops.search(kb, audience, args, limits))

    async def ask(
        question: str,
        k: int = 5,
        as_of: str | None = None,
        lang: str | None = None,
        min_confidence: float | None = None,
    ) -> str:
        """A cited answer to `question`, as `kbsearch ask --json`: `verdict` is
        `answered` (`answer`: the span of the top passages that answers, with its `citation`:
        passage id, title, section, version, effective dates, source), `uncertain` (the best
        span and its citation, which may not answer: say so) or `dont_say` ("The documents
        don't say", with the `confidence` and the `nearest` passages: do not answer from
        them). `as_of`: YYYY-MM-DD (default today); `lang`: en, fr...; `min_confidence`: 0
        to 1 (default: the model's). Needs an index with vectors."""
        return await read(
            lambda kb: ops.ask(
                kb,
                audience,
                question,
                limits,
                k=k,
                as_of=as_of,
                lang=lang,
                min_confidence=min_confidence,
            )  # fmt: skip
        )

    async def explain(
        query: str, passage_id: str, as_of: str | None = None, lang: str | None = None
    ) -> str:
        """Why `passage_id` ranks where it does for `query`: its rank and score in each
        route, each query term's BM25 share, and the parts of the fused score (learned
        fusion, or RRF)."""
        return await read(
            lambda kb: ops.explain(kb, audience, query, passage_id, limits, as_of=as_of, lang=lang)
        )

    async def show(passage_id: str) -> str:
        """One passage in full, with its document's title, version, dates and source."""
        return await read(lambda kb: ops.passage(kb, audience, passage_id))

    async def documents(doc_id: str | None = None, offset: int = 0) -> str:
        """The documents (their versions with metadata, 100 at a time from `offset`: `total`
        counts them all, `next_offset` is the next page's); with `doc_id`, that document's
        versions and their passage ids."""

        def fn(kb: KnowledgeBase) -> dict[str, Any]:
            if doc_id is not None and not doc_id.strip():  # as HTTP's empty fields: not "all"
                raise InvalidArgumentError(
                    "doc_id is empty; leave it out to list every document, or give one"
                )
            if doc_id is not None:
                return ops.document(kb, audience, doc_id)
            return ops.documents(kb, audience, offset, None, limits)

        return await read(fn)

    return MCPServer(
        "kbsearch",
        version=__version__,
        instructions=(
            "Search a help-centre knowledge base. Use `search` for a question, `ask` for a "
            "cited answer (or that the documents don't say), `show` to read a passage in "
            "full, `explain` to see why a passage ranks where it does, and "
            f"`documents` to list documents. Audience: {audience} (fixed)."
        ),
        tools=[strict_tool(fn) for fn in (search, ask, explain, show, documents)],
        log_level="WARNING",
    )


class _RefuseUnknown(BaseModel):
    """A tool's argument model that refuses an argument it has no field for, and one of
    another type than its field's (strict: ``"3"`` or ``true`` is no ``k``, ``"0.5"`` no
    ``min_confidence``; an integer is a number)."""

    model_config = ConfigDict(strict=True)

    @model_validator(mode="before")
    @classmethod
    def refuse_unknown(cls, data: Any) -> Any:
        known = list(cls.model_fields)
        unknown = sorted(set(data) - set(known)) if isinstance(data, dict) else []
        if "audience" in unknown:
            raise ValueError("audience is not an argument: it is fixed when the server starts")
        if unknown:
            takes = ", ".join(known) or "none"
            raise ValueError(f"unknown argument(s) {', '.join(unknown)}; it takes: {takes}")
        for name, value in data.items() if isinstance(data, dict) else ():
            if isinstance(value, str) and not _is_unicode_text(value):
                # a lone surrogate ("\ud800") cannot be written back as UTF-8: the answer was
                # lost on the way out and the client waited for ever (HTTP answers 422)
                raise ValueError(f"argument {name} is not valid Unicode text")
        return data


def _is_unicode_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _TextAsSent(FuncMetadata):
    """The SDK's argument metadata, but a text argument is validated as sent: the SDK's
    :meth:`FuncMetadata.pre_parse_json` replaced a string that parses as JSON by the parsed
    value wherever the annotation is not plain ``str`` (``lang: "null"`` became ``None``:
    every language), for clients that send a list as JSON text; no tool here takes a list."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        return dict(data)


class _OneLineTool(Tool):
    """A tool whose argument errors read as their reasons alone. The SDK's :meth:`Tool.run`
    raises a ``ToolError`` for arguments its model refuses, with ``str()`` of pydantic's
    ``ValidationError``: a report of several lines (the model's name, the input, a URL) around
    the reason. A ``ToolError`` raised by a validator is no way out: pydantic lets it through
    and the SDK reads it as a crash, with a generic message. So the run's ``ToolError`` caused
    by a ``ValidationError`` is raised again with :func:`argument_reasons`, under the SDK's
    prefix; any other passes unchanged."""

    async def run(self, arguments: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().run(arguments, *args, **kwargs)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            raise ToolError(
                f"Error executing tool {self.name}: {argument_reasons(cause)}"
            ) from cause


def argument_reasons(error: ValidationError) -> str:
    """Each refused argument's reason on one line, ``"; "`` between them: ``name: message``
    (``k: Input should be a valid integer...``), or the message of a check of all the
    arguments (an unknown argument), without pydantic's ``Value error, `` prefix."""
    reasons = []
    for item in error.errors(include_url=False, include_input=False):
        message = str(item["msg"]).removeprefix("Value error, ")
        where = ".".join(str(part) for part in item["loc"])
        reasons.append(f"{where}: {message}" if where else message)
    return "; ".join(" ".join(r.split()) for r in reasons)


def strict_tool(fn: Callable[..., Any]) -> Tool:
    """The SDK's tool for ``fn`` (:meth:`Tool.from_function`: arguments validated by a model
    of its signature), described by its docstring (:func:`inspect.cleandoc`), its result
    the text it returns, and refusing an argument it does not take: the SDK's models ignore
    one, so ``audience: "staff"`` searched silently as the server's audience. The input
    schema says so (``additionalProperties: false``). Arguments are validated strictly
    and as sent (:class:`_RefuseUnknown`, :class:`_TextAsSent`).

    Raises:
        ToolError (at call time): an unknown argument, named, with the ones the tool takes;
            each argument error as one line (:class:`_OneLineTool`).
    """
    tool = Tool.from_function(
        fn, description=inspect.cleandoc(fn.__doc__ or ""), structured_output=False
    )
    loose = tool.fn_metadata.arg_model
    strict = create_model(f"{loose.__name__}Strict", __base__=(loose, _RefuseUnknown))
    metadata = _TextAsSent(**{**dict(tool.fn_metadata), "arg_model": strict})
    parameters = {**tool.parameters, "additionalProperties": False}
    fields = {name: getattr(tool, name) for name in Tool.model_fields}
    return _OneLineTool(**{**fields, "fn_metadata": metadata, "parameters": parameters})


def serve_stdio(db: str | Path, audience: str) -> None:
    """Run the MCP server over stdio until the client closes it.

    Raises:
        KnowledgeBaseNotFoundError, SchemaError, EmbedderUnavailableError: at start.
    """
    engine = Engine(db, workers=1)
    try:
        build_server(engine, audience).run("stdio")
    finally:
        engine.close()
