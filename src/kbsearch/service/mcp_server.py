"""An MCP server (the official ``mcp`` Python SDK, stdio transport) exposing one knowledge base
to an assistant as five tools: ``search``, ``ask``, ``explain``, ``show`` and ``documents``.

The audience is fixed when the server starts (``kbsearch mcp --audience``); no tool takes it
as an argument, so a conversation cannot widen what it sees. Tools return the same JSON as the
HTTP API; a library error becomes the tool's error message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from .. import __version__
from ..errors import KbsearchError
from ..knowledge_base import KnowledgeBase
from . import operations as ops
from .engine import Engine, SearchTimeout


def build_server(engine: Engine, audience: str, limits: ops.Limits | None = None) -> MCPServer:
    """The MCP server for ``engine``'s knowledge base, searching as ``audience``."""
    limits = limits or ops.Limits()
    server = MCPServer(
        "kbsearch",
        version=__version__,
        instructions=(
            "Search a help-centre knowledge base. Use `search` for a question, `ask` for a "
            "cited answer (or that the documents don't say), `show` to read a passage in "
            "full, `explain` to see why a passage ranks where it does, and "
            f"`documents` to list documents. Audience: {audience} (fixed)."
        ),
    )

    async def read(fn: Any) -> Any:
        try:
            return await engine.run_read(fn)
        except (KbsearchError, SearchTimeout) as exc:  # a message for the model, no traceback
            raise ToolError(str(exc)) from None

    @server.tool()
    async def search(
        query: str,
        k: int = 5,
        route: str = ops.BEST,
        as_of: str | None = None,
        lang: str | None = None,
        offset: int = 0,
    ) -> dict[str, Any]:
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

    @server.tool()
    async def ask(
        question: str,
        k: int = 5,
        as_of: str | None = None,
        lang: str | None = None,
        min_confidence: float | None = None,
    ) -> dict[str, Any]:
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

    @server.tool()
    async def explain(
        query: str, passage_id: str, as_of: str | None = None, lang: str | None = None
    ) -> dict[str, Any]:
        """Why `passage_id` ranks where it does for `query`: its rank and score in each
        route, each query term's BM25 share, and the parts of the fused score (learned
        fusion, or RRF)."""
        return await read(
            lambda kb: ops.explain(kb, audience, query, passage_id, limits, as_of=as_of, lang=lang)
        )

    @server.tool()
    async def show(passage_id: str) -> dict[str, Any]:
        """One passage in full, with its document's title, version, dates and source."""
        return await read(lambda kb: ops.passage(kb, audience, passage_id))

    @server.tool()
    async def documents(doc_id: str | None = None) -> dict[str, Any]:
        """The documents (every version, with metadata); with `doc_id`, that document's
        versions and their passage ids."""

        def fn(kb: KnowledgeBase) -> dict[str, Any]:
            if doc_id:
                return ops.document(kb, audience, doc_id)
            return ops.documents(kb, audience)

        return await read(fn)

    return server


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
