"""GET /documents a page at a time (limit, offset, a default page size, a total that counts
only what the key may see), and the length limits of an upload's free-text metadata."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from support import FakeEmbedder
from support_service import PUBLIC_READ, STAFF_READ, STAFF_WRITE, auth

from kbsearch.service.engine import Engine
from kbsearch.service.mcp_server import build_server
from kbsearch.service.operations import Limits
from kbsearch.service.uploads import MAX_FIELD_CHARS


def listed(client: httpx.Client, key: str, **params: Any) -> dict[str, Any]:
    answer = client.get("/documents", params=params, headers=auth(key))
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def keys(body: dict[str, Any]) -> list[str]:
    return [f"{d['doc_id']}@v{d['version']}" for d in body["documents"]]


def test_the_total_counts_only_what_the_key_may_see(client: httpx.Client) -> None:
    public, staff = listed(client, PUBLIC_READ), listed(client, STAFF_READ)
    assert (public["total"], staff["total"]) == (3, 4)
    assert public["limit"] == Limits().documents_page and public["next_offset"] is None
    assert keys(public) == ["delivery@v1", "returns@v1", "returns@v2"]


@pytest.mark.parametrize("key", [PUBLIC_READ, STAFF_READ])
def test_pages_cover_the_list_once_in_order(client: httpx.Client, key: str) -> None:
    whole = keys(listed(client, key))
    seen, offset = [], 0
    while offset is not None:
        page = listed(client, key, limit=2, offset=offset)
        assert page["count"] == len(page["documents"]) <= 2
        assert page["total"] == len(whole)
        seen += keys(page)
        offset = page["next_offset"]
    assert seen == whole
    past = listed(client, key, limit=2, offset=10)
    assert past["documents"] == [] and past["next_offset"] is None and past["total"] == len(whole)


@pytest.mark.parametrize(
    ("params", "named"),
    [({"limit": 0}, "limit must be from 1 to 1000"), ({"limit": 1001}, "limit must be from 1"),
     ({"offset": -1}, "offset must be 0 or more"), ({"limit": "ten"}, "limit")],
)  # fmt: skip
def test_a_bad_page_is_a_422(client: httpx.Client, params: dict[str, Any], named: str) -> None:
    answer = client.get("/documents", params=params, headers=auth(PUBLIC_READ))
    assert answer.status_code == 422 and named in answer.json()["error"]


MEMO = {"file": ("memo.md", b"# Memo\n\n## Kettle\n\nDescale the kettle.\n")}


@pytest.mark.parametrize("field", sorted(MAX_FIELD_CHARS))
def test_a_metadata_field_over_its_limit_is_a_422_and_writes_nothing(
    client: httpx.Client, field: str
) -> None:
    most = MAX_FIELD_CHARS[field]
    headers = auth(STAFF_WRITE)
    over = client.put(
        "/documents/memo", files=MEMO, data={field: "t" * (most + 1)}, headers=headers
    )
    assert over.status_code == 422
    assert over.json()["error"] == f"{field} is {most + 1:,} characters long; at most {most}"
    assert client.get("/documents/memo", headers=headers).status_code == 404
    at = client.put("/documents/memo", files=MEMO, data={field: "t" * most}, headers=headers)
    assert at.status_code == 201 and at.json()[field] == "t" * most


def test_the_mcp_documents_tool_pages_too(kb_file: Path) -> None:
    engine = Engine(kb_file, embedder=FakeEmbedder(), workers=1, background=False)

    async def session() -> list[Any]:
        async with Client(build_server(engine, "public"), read_timeout_seconds=60) as client:
            return [
                await client.call_tool("documents", {}),
                await client.call_tool("documents", {"offset": 2}),
            ]

    try:
        first, second = (json.loads(r.content[0].text) for r in asyncio.run(session()))
    finally:
        engine.close()
    assert first["total"] == second["total"] == 3 and first["count"] == 3
    assert second["documents"] == first["documents"][2:]


UNSHOWN = [
    "a\x00b", "two\nlines", "esc\x1b[2J", "\u202eevil", "del\x7f",
    "a\u2028b", "p\u2029q", "rtl\u200fmark", "ltr\u200emark", "arabic\u061cmark", "zero\u200bwidth",
    "bom\ufeff",
]  # fmt: skip


@pytest.mark.parametrize("text", UNSHOWN)
def test_a_metadata_field_with_a_control_character_is_a_422(
    client: httpx.Client, text: str
) -> None:
    headers = auth(STAFF_WRITE)
    answer = client.put("/documents/memo", files=MEMO, data={"title": text}, headers=headers)
    assert answer.status_code == 422
    assert answer.json()["error"].startswith("title holds the control character U+")
    assert client.get("/documents/memo", headers=headers).status_code == 404
