"""A value the caller sent is quoted cut short in every error message (errors.shown_value): a
1,500-character id, date, language, route, version, access label or parameter name is never
echoed whole by the HTTP API, the MCP tools or the CLI."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from mcp import Client
from support import FakeEmbedder
from support_service import STAFF_WRITE, auth

from kbsearch.cli import cli
from kbsearch.service.engine import Engine
from kbsearch.service.mcp_server import build_server

LONG = "x" * 1_500
CUT = f"'{'x' * 40}…' (1,500 characters)"
MEMO = {"file": ("memo.md", b"# Memo\n\n## Kettle\n\nDescale the kettle.\n")}


@pytest.mark.parametrize(
    ("method", "url", "options"),
    [("GET", f"/passages/{LONG}", {}),
     ("GET", f"/documents/{LONG}", {}),
     ("DELETE", f"/documents/{LONG}", {}),
     ("DELETE", "/documents/returns", {"params": {"version": LONG}}),
     ("GET", "/search", {"params": {"q": "parcel", "lang": LONG}}),
     ("GET", "/search", {"params": {"q": "parcel", "as_of": LONG}}),
     ("GET", "/search", {"params": {"q": "parcel", "route": LONG}}),
     ("GET", "/search", {"params": {"q": "parcel", LONG: "1"}}),
     ("POST", "/search", {"json": {"q": "parcel", LONG: 1}}),
     ("POST", "/search", {"json": {"q": "parcel", "route": LONG}}),
     ("GET", "/explain", {"params": {"q": "parcel", "passage_id": LONG}}),
     ("PUT", "/documents/memo", {"files": MEMO, "data": {"version": LONG}}),
     ("PUT", "/documents/memo", {"files": MEMO, "data": {"access": LONG}}),
     ("PUT", "/documents/memo", {"files": MEMO, "data": {"language": LONG}}),
     ("PUT", "/documents/memo", {"files": MEMO, "data": {"effective_to": LONG}}),
     ("PUT", "/documents/memo", {"files": MEMO, "data": {LONG: "1"}})],
)  # fmt: skip
def test_the_api_quotes_a_long_value_cut_short(
    client: httpx.Client, method: str, url: str, options: dict[str, Any]
) -> None:
    answer = client.request(method, url, headers=auth(STAFF_WRITE), **options)
    assert 400 <= answer.status_code < 500, answer.text[:200]
    message = answer.json()["error"]
    assert CUT in message and "x" * 41 not in message, message[:300]


def test_the_mcp_tools_quote_a_long_value_cut_short(kb_file: Path) -> None:
    engine = Engine(kb_file, embedder=FakeEmbedder(), workers=1, background=False)

    async def session() -> list[Any]:
        async with Client(build_server(engine, "public"), read_timeout_seconds=60) as client:
            return [
                await client.call_tool("show", {"passage_id": LONG}),
                await client.call_tool("search", {"query": "parcel", "as_of": LONG}),
                await client.call_tool("documents", {"doc_id": LONG}),
            ]

    try:
        results = asyncio.run(session())
    finally:
        engine.close()
    for result in results:
        text = result.content[0].text
        assert result.is_error and CUT in text and "x" * 41 not in text, text[:300]


@pytest.mark.parametrize(
    "args",
    [["search", "parcel", "--k", LONG], ["search", "parcel", "--route", LONG],
     ["search", "parcel", "--as-of", LONG], ["show", LONG], ["search", "parcel", f"--{LONG}"]],
)  # fmt: skip
def test_the_cli_quotes_a_long_value_cut_short(kb_file: Path, args: list[str]) -> None:
    result = CliRunner().invoke(cli, [*args[:2], "--db", str(kb_file), *args[2:]])
    assert result.exit_code in (1, 2)
    assert result.stderr.count("\n") == 1 and "x" * 41 not in result.stderr, result.stderr[:300]
    assert "characters)" in result.stderr
