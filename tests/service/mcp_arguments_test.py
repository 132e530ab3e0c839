"""The MCP tools' arguments, through the SDK's client in the same process (its in-memory
transport): each of the wrong type is refused rather than coerced, an empty ``lang`` is refused
as the CLI and HTTP refuse it, and an error quotes a huge value cut short."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from support import FakeEmbedder

from kbsearch.service.engine import Engine
from kbsearch.service.mcp_server import build_server


@pytest.fixture
def engine(kb_file: Path) -> Iterator[Engine]:
    engine = Engine(kb_file, embedder=FakeEmbedder(), workers=1, background=False)
    yield engine
    engine.close()


def call(engine: Engine, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def session() -> list[Any]:
        async with Client(build_server(engine, "public"), read_timeout_seconds=60) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return asyncio.run(session())


def error_text(result: Any) -> str:
    assert result.is_error, result.content[0].text[:300]
    text: str = result.content[0].text
    assert "\n" not in text, text
    return text


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [("search", {"query": "parcel", "k": "3"}, "k"),
     ("search", {"query": "parcel", "k": True}, "k"),
     ("search", {"query": "parcel", "k": 2.0}, "k"),
     ("search", {"query": "parcel", "offset": "1"}, "offset"),
     ("search", {"query": 42}, "query"),
     ("search", {"query": "parcel", "lang": 1}, "lang"),
     ("ask", {"question": "parcel", "min_confidence": "0.5"}, "min_confidence"),
     ("ask", {"question": "parcel", "min_confidence": True}, "min_confidence"),
     ("show", {"passage_id": 7}, "passage_id")],
)  # fmt: skip
def test_an_argument_of_the_wrong_type_is_refused_not_coerced(
    engine: Engine, tool: str, arguments: dict[str, Any], named: str
) -> None:
    (result,) = call(engine, [(tool, arguments)])
    text = error_text(result)
    assert text.startswith(f"Error executing tool {tool}: {named}: "), text


def test_arguments_of_the_right_type_are_served(engine: Engine) -> None:
    calls = [
        ("search", {"query": "lost parcel", "k": 2, "offset": 0, "lang": "en"}),
        ("ask", {"question": "is a lost parcel refunded", "min_confidence": 0}),  # an int: 0.0
        ("ask", {"question": "is a lost parcel refunded", "min_confidence": 0.5}),
    ]
    results = call(engine, calls)
    assert not any(r.is_error for r in results), [r.content[0].text[:200] for r in results]


@pytest.mark.parametrize("value", ["null", "[]", "{}"])
def test_a_text_argument_holding_json_is_text(engine: Engine, value: str) -> None:
    """The SDK replaced a string argument that parses as JSON by the parsed value where the
    annotation is not plain ``str``: ``lang: "null"`` searched every language."""
    (result,) = call(engine, [("search", {"query": "parcel", "lang": value})])
    assert "unsupported lang" in error_text(result)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [("search", {"query": "parcel", "lang": ""}),
     ("search", {"query": "parcel", "lang": " "}),
     ("ask", {"question": "parcel", "lang": ""}),
     ("explain", {"query": "parcel", "passage_id": "delivery@v1#lost-parcel", "lang": ""})],
)  # fmt: skip
def test_an_empty_lang_is_refused_as_the_cli_refuses_it(
    engine: Engine, tool: str, arguments: dict[str, Any]
) -> None:
    (result,) = call(engine, [(tool, arguments)])
    assert "unsupported lang" in error_text(result)


@pytest.mark.parametrize("doc_id", ["", "  "])
def test_an_empty_doc_id_is_refused_not_every_document(engine: Engine, doc_id: str) -> None:
    """``documents(doc_id="")`` listed every document, as if it were left out."""
    listed, empty = call(engine, [("documents", {}), ("documents", {"doc_id": doc_id})])
    assert not listed.is_error
    assert "doc_id is empty" in error_text(empty)
