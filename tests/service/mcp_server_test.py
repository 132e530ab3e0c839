"""The MCP server through the SDK's own client over stdio (a real ``kbsearch mcp`` process)."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from support import FILES, FakeEmbedder, fake_cli_args, write_files

import kbsearch


@pytest.fixture
def lexical_kb(tmp_path: Path) -> Path:
    """The test corpus without vectors, so the server process loads no model."""
    docs = write_files(tmp_path / "docs", FILES)
    db = tmp_path / "kb.db"
    with kbsearch.open_kb(db, create=True, embedder="none") as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv").ok
    return db


def _payload(result: Any) -> Any:
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


@pytest.fixture
def vector_kb(tmp_path: Path) -> Path:
    """The test corpus with FakeEmbedder vectors (served by :func:`support.fake_cli_args`)."""
    docs = write_files(tmp_path / "docs", FILES)
    db = tmp_path / "kb.db"
    with kbsearch.open_kb(db, create=True, embedder=FakeEmbedder()) as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv").ok
    return db


async def _session(
    db: Path, audience: str, calls: list[tuple[str, dict[str, Any]]], fake: bool
) -> Any:
    argv = ["mcp", "--db", str(db), "--audience", audience]
    params = StdioServerParameters(
        command=sys.executable,
        args=fake_cli_args(*argv) if fake else ["-m", "kbsearch", *argv],
        env=dict(os.environ),  # PYTHONPATH too: the code under test, not an installed copy
    )
    async with Client(params, read_timeout_seconds=60) as client:
        tools = await client.list_tools()
        results = [await client.call_tool(name, args) for name, args in calls]
        info = client.server_info
    return {t.name for t in tools.tools}, results, info


def run(
    db: Path, audience: str, calls: list[tuple[str, dict[str, Any]]], fake: bool = False
) -> Any:
    names, results, _ = asyncio.run(_session(db, audience, calls, fake))
    return names, results


def test_tools_answer_like_the_api(lexical_kb: Path) -> None:
    calls = [
        ("search", {"query": "return unused items", "k": 2}),  # the best route it supports
        ("show", {"passage_id": "returns@v2#return-window"}),
        ("explain", {"query": "return unused items", "passage_id": "returns@v2#return-window"}),
        ("documents", {}),
        ("documents", {"doc_id": "returns"}),
        ("search", {"query": "return window", "k": 1, "route": "lexical", "as_of": "2025-06-01"}),
    ]
    names, results = run(lexical_kb, "public", calls)
    assert names == {"search", "ask", "explain", "show", "documents"}
    search, show, explain, documents, returns, dated = (_payload(r) for r in results)
    top = search["hits"][0]
    assert search["route"] == "lexical"
    assert top["passage_id"] == "returns@v2#return-window" and top["title"] == "Returns policy"
    assert top["effective_from"] == "2026-04-01" and top["source"] == "returns-v2.md"
    assert "45 days" in show["text"]
    assert explain["lexical"]["rank"] == 1
    assert documents["count"] == 3
    assert [v["version"] for v in returns["versions"]] == ["1", "2"]
    assert dated["hits"][0]["passage_id"] == "returns@v1#return-window"


def test_public_audience_is_fixed_at_start(lexical_kb: Path) -> None:
    calls = [
        ("search", {"query": "goodwill credit", "k": 10, "route": "lexical"}),
        ("show", {"passage_id": "goodwill@v1#goodwill-amount"}),
        ("documents", {"doc_id": "goodwill"}),
        ("search", {"query": "goodwill", "route": "lexical", "audience": "staff"}),
    ]
    _, results = run(lexical_kb, "public", calls)
    hits, hidden, hidden_doc, widened = results
    assert _payload(hits)["hits"] == []
    assert hidden.is_error and "no passage" in hidden.content[0].text
    assert "goodwill credit" not in hidden.content[0].text.lower()
    assert hidden_doc.is_error and "no document" in hidden_doc.content[0].text
    # no tool takes an audience: the argument is refused or ignored, never obeyed
    assert widened.is_error or _payload(widened)["hits"] == []


def test_staff_audience_sees_staff_passages(lexical_kb: Path) -> None:
    calls = [("search", {"query": "goodwill credit", "k": 1, "route": "lexical"})]
    _, (result,) = run(lexical_kb, "staff", calls)
    assert _payload(result)["hits"][0]["passage_id"] == "goodwill@v1#goodwill-amount"


def test_ask_cites_or_says_the_documents_dont_say(vector_kb: Path) -> None:
    calls = [
        ("ask", {"question": "is a lost parcel refunded", "min_confidence": 0}),
        ("ask", {"question": "is a lost parcel refunded", "min_confidence": 1, "k": 2}),
        ("ask", {"question": "goodwill credit amount", "min_confidence": 0}),
    ]
    _, results, info = asyncio.run(_session(vector_kb, "public", calls, fake=True))
    assert info.name == "kbsearch" and info.version == kbsearch.__version__
    cited, refused, staff_only = (_payload(r) for r in results)
    assert cited["answerable"] and cited["answer"] == "A lost parcel is refunded in full."
    assert cited["citation"]["passage_id"] == "delivery@v1#lost-parcel"
    assert cited["citation"]["source"] == "delivery.md"  # as a search hit shows it
    # a confidence under min_confidence 1 but above the uncertain band's floor: the third
    # verdict, the best span said plainly to maybe not answer (issue 21)
    assert not refused["answerable"] and refused["verdict"] == "uncertain"
    assert refused["answer"] == "A lost parcel is refunded in full."
    assert "goodwill@" not in json.dumps(staff_only)  # the audience stays fixed
    assert str(vector_kb.parent) not in json.dumps([cited, refused, staff_only])


def test_no_tool_shows_an_absolute_server_path(lexical_kb: Path) -> None:
    calls = [
        ("search", {"query": "lost parcel", "route": "lexical"}),
        ("show", {"passage_id": "delivery@v1#lost-parcel"}),
        ("explain", {"query": "lost parcel", "passage_id": "delivery@v1#lost-parcel"}),
        ("documents", {}),
        ("documents", {"doc_id": "delivery"}),
        ("ask", {"question": "lost parcel"}),
        ("search", {"query": "lost parcel", "route": "dense"}),
    ]
    _, results = run(lexical_kb, "staff", calls)
    refused = [r.content[0].text for r in results[-2:]]
    assert all(r.is_error for r in results[-2:]) and all("no vectors" in t for t in refused)
    assert all("--" not in t for t in refused), refused  # no command-line option
    results = results[:-2]
    shown = json.dumps([_payload(r) for r in results])
    assert "delivery.md" in shown and str(lexical_kb.parent) not in shown


async def _session_stderr(
    db: Path, audience: str, calls: list[tuple[str, dict[str, Any]]], errlog: Any
) -> Any:
    """As :func:`_session`, the server's stderr written to ``errlog``; also the tools' list."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    argv = ["mcp", "--db", str(db), "--audience", audience]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kbsearch", *argv], env=dict(os.environ)
    )
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = (await session.list_tools()).tools
        results = [await session.call_tool(name, args) for name, args in calls]
    return tools, results


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("search", {"query": "goodwill", "route": "lexical", "audience": "staff"}, "audience"),
        ("search", {"query": "goodwill", "top_k": 3}, "top_k"),
        ("show", {"passage_id": "delivery@v1#lost-parcel", "verbose": True}, "verbose"),
        ("documents", {"doc": "goodwill"}, "doc"),
    ],
)
def test_an_unknown_argument_is_a_tool_error(
    lexical_kb: Path, tool: str, arguments: dict[str, Any], named: str
) -> None:
    """``audience: "staff"`` silently returned public results: an argument no tool takes is
    refused (as HTTP answers 422), naming it."""
    _, (result,) = run(lexical_kb, "public", [(tool, arguments)])
    assert result.is_error
    text = result.content[0].text
    assert named in text and "goodwill credit" not in text.lower()


def test_tools_answer_compact_json_and_read_clean_descriptions(
    lexical_kb: Path, tmp_path: Path
) -> None:
    calls = [
        ("search", {"query": "parcel items", "k": 3, "route": "lexical"}),
        ("show", {"passage_id": "no-such@v1#x"}),
    ]
    with (tmp_path / "stderr.txt").open("w+") as errlog:
        tools, (search, missing) = asyncio.run(_session_stderr(lexical_kb, "public", calls, errlog))
        errlog.seek(0)
        stderr = errlog.read()
    (text,) = [c.text for c in search.content]
    payload = json.loads(text)
    assert len(payload["hits"]) == 3
    assert text == json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    assert search.structured_content is None  # the hits once, not twice
    assert missing.is_error and "no passage" in missing.content[0].text
    assert stderr == "", stderr  # no log line for a tool error a model reads anyway
    for tool in tools:
        description = tool.description or ""
        assert description == inspect.cleandoc(description), tool.name
        assert "\n    " not in description and description.strip(), tool.name
        assert tool.input_schema.get("additionalProperties") is False, tool.name


def test_a_damaged_index_is_a_tool_error_naming_no_path(lexical_kb: Path) -> None:
    """The file damaged under a running server, before a tool read it (at start, ``kbsearch
    mcp`` refuses it with one line on the operator's terminal)."""
    from support import damage_table

    async def session() -> Any:
        argv = ["mcp", "--db", str(lexical_kb), "--audience", "staff"]
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "kbsearch", *argv], env=dict(os.environ)
        )
        async with Client(params, read_timeout_seconds=60) as client:
            await client.list_tools()  # started: its index opened, no tool read yet
            damage_table(lexical_kb, "passages")
            return await client.call_tool("documents", {"doc_id": "delivery"})

    after = asyncio.run(session())
    assert after.is_error
    text = after.content[0].text
    assert "damaged" in text and str(lexical_kb.parent) not in text and "kb.db" not in text


def test_an_argument_that_is_not_unicode_text_is_a_tool_error() -> None:
    """A breaker's find: over stdio, a query holding a lone surrogate (JSON "pass\\ud800word")
    got no answer at all (the reply could not be written as UTF-8) and the client waited for
    ever; the tools' argument models refuse it, as HTTP answers 422. (An SDK client cannot
    even send one, so the model is checked directly.)"""
    import pydantic

    from kbsearch.service.mcp_server import strict_tool

    def search(query: str) -> str:
        """Search."""
        return query

    model = strict_tool(search).fn_metadata.arg_model
    assert model.model_validate({"query": "password"}).query == "password"
    with pytest.raises(pydantic.ValidationError, match="query is not valid Unicode text"):
        model.model_validate({"query": "pass\ud800word"})


def test_an_argument_error_is_one_line_without_pydantics_report(lexical_kb: Path) -> None:
    """The SDK put pydantic's whole report ("1 validation error for ...", the input, a URL)
    around the one-line reason; the model reads the reason alone, as HTTP's 422 gives it."""
    calls = [
        ("search", {"query": "parcel", "top_k": 3}),
        ("search", {"query": "parcel", "k": "ten"}),
        ("search", {}),
    ]
    _, results = run(lexical_kb, "public", calls)
    texts = [r.content[0].text for r in results]
    assert all(r.is_error for r in results)
    assert texts[0] == (
        "Error executing tool search: unknown argument(s) top_k; it takes: query, k, route,"
        " as_of, lang, offset"
    )
    assert texts[1].startswith("Error executing tool search: k: Input should be a valid integer")
    assert texts[2] == "Error executing tool search: query: Field required"
    for text in texts:
        assert "\n" not in text and "validation error" not in text and "pydantic" not in text


def test_show_given_a_document_id_names_its_passages_to_whom_may_see_them(
    lexical_kb: Path,
) -> None:
    """The ``show`` tool given a document id answers as ``kbsearch show``/``explain`` do:
    it is a document id, with its passage ids; a staff-only one reads as a missing passage."""
    calls = [("show", {"passage_id": "returns@v2"}), ("show", {"passage_id": "goodwill"})]
    _, (document, hidden) = run(lexical_kb, "public", calls)
    assert document.is_error
    assert "'returns@v2' is a document id, not a passage id; its passages: " in (
        document.content[0].text
    )
    assert "returns@v2#return-window" in document.content[0].text
    assert hidden.is_error and "no passage 'goodwill' for this audience" in hidden.content[0].text
    assert "goodwill@v1" not in hidden.content[0].text
