"""Qdrant unreachable or failing: the library raises BackendUnavailableError (PartialWriteError
after SQLite was written), never the client's own exception; the HTTP API answers 503 with a
one-line message, the MCP tools a tool error, the CLI one line and exit 1."""

from __future__ import annotations

import asyncio
import importlib.metadata
import socket
import threading
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from mcp import Client
from support import FILES, FakeEmbedder, write_files
from support_service import KEYS, STAFF_WRITE, Running, auth

import kbsearch
from kbsearch.backends.qdrant.client import ClientCollection
from kbsearch.backends.qdrant.target import QdrantTarget
from kbsearch.cli import cli
from kbsearch.errors import BackendUnavailableError, PartialWriteError
from kbsearch.service import create_app
from kbsearch.service.engine import Engine
from kbsearch.service.mcp_server import build_server


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def dead(tmp_path: Path) -> Path:
    """An index whose recorded Qdrant server does not answer (SQLite holds the documents)."""
    docs = write_files(tmp_path / "docs", FILES)
    db = tmp_path / "kb.db"
    target = QdrantTarget(url=f"http://127.0.0.1:{closed_port()}")
    with kbsearch.open_kb(db, create=True, embedder=FakeEmbedder(), qdrant=target) as kb:
        with pytest.raises(PartialWriteError, match="the index is written.*kbsearch sync"):
            kb.index([docs], inventory=docs / "inventory.csv")
        assert len(kb.documents()) == 4
    return db


def test_the_library_raises_its_own_error(dead: Path) -> None:
    with kbsearch.open_kb(dead, embedder=FakeEmbedder()) as kb:
        for route in ("lexical", "dense", "hybrid"):
            with pytest.raises(BackendUnavailableError, match=r"^Qdrant cannot be reached \("):
                kb.search("lost parcel", route=route)
        with pytest.raises(BackendUnavailableError, match="Qdrant cannot be reached"):
            kb.backend.verify()  # type: ignore[attr-defined]
        with pytest.raises(BackendUnavailableError, match="Qdrant cannot be reached"):
            kb.delete("delivery")
        assert len(kb.documents("delivery")) == 1  # nothing deleted: the copy stays in step


def test_the_http_api_answers_503_with_one_line(dead: Path, tmp_path: Path) -> None:
    keys = tmp_path / "keys.txt"
    keys.write_text(KEYS, encoding="utf-8")
    with (
        Running(create_app(dead, keys=keys, embedder=FakeEmbedder())) as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        headers = auth(STAFF_WRITE)
        answers = [
            client.get("/search", params={"q": "lost parcel"}, headers=headers),
            client.get("/ask", params={"q": "is a lost parcel refunded"}, headers=headers),
            client.delete("/documents/delivery", headers=headers),
            client.put(
                "/documents/memo",
                files={"file": ("memo.md", b"# Memo\n\n## Kettle\n\nDescale the kettle.\n")},
                headers=headers,
            ),
        ]
        for answer in answers:
            assert answer.status_code == 503, answer.text
            message = answer.json()["error"]
            assert "\n" not in message and "Qdrant" in message, message
        # the upload reached SQLite, the system of record: the message says how to catch up
        assert "kbsearch sync" in answers[-1].json()["error"]


def test_the_mcp_tools_answer_a_tool_error(dead: Path) -> None:
    engine = Engine(dead, embedder=FakeEmbedder(), workers=1, background=False)

    async def session() -> list[Any]:
        async with Client(build_server(engine, "public"), read_timeout_seconds=60) as client:
            return [
                await client.call_tool("search", {"query": "lost parcel"}),
                await client.call_tool("ask", {"question": "is a lost parcel refunded"}),
            ]

    try:
        results = asyncio.run(session())
    finally:
        engine.close()
    for result in results:
        assert result.is_error
        text = result.content[0].text
        assert "\n" not in text and "Qdrant cannot be reached" in text, text


def test_the_cli_prints_one_line_and_exits_1(dead: Path) -> None:
    for args in (["search", "lost parcel"], ["verify"], ["delete", "delivery"]):
        result = CliRunner().invoke(cli, [*args, "--db", str(dead)])
        assert result.exit_code == 1, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "Qdrant" in lines[0]


def test_an_edge_failure_names_no_server_path(tmp_path: Path) -> None:
    """An engine message quoting the shard's folder reads "the Qdrant shard" instead."""
    docs = write_files(tmp_path / "docs", FILES)
    db, shard = tmp_path / "kb.db", tmp_path / "shard"
    target = QdrantTarget(path=str(shard))
    with kbsearch.open_kb(db, create=True, embedder=FakeEmbedder(), qdrant=target) as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv").ok
    keys = tmp_path / "keys.txt"
    keys.write_text(KEYS, encoding="utf-8")
    app = create_app(db, keys=keys, embedder=FakeEmbedder())
    with (
        Running(app) as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        collection = app.state.service.engine.kb.backend.collection

        def broken(search: object) -> None:
            raise RuntimeError(f"segment {shard}/segments/0 is\nbroken")

        collection._search = broken
        found = client.get("/search", params={"q": "lost parcel"}, headers=auth(STAFF_WRITE))
    assert found.status_code == 503
    assert found.json()["error"] == (
        "Qdrant cannot answer a search (segment the Qdrant shard/segments/0 is broken)"
    )


def test_a_dead_server_gives_no_warning_from_another_thread() -> None:
    """qdrant-client's own version check warns from a background thread, which the CLI printed
    before its one error line; kbsearch checks in its own thread, where the error is raised."""
    before = set(threading.enumerate())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        collection = ClientCollection.open(f"http://127.0.0.1:{closed_port()}")
        with pytest.raises(Exception):  # noqa: B017, PT011 - the client's own connection error
            collection.ensure(None)
        for thread in set(threading.enumerate()) - before:
            thread.join(timeout=30)
    assert [str(w.message) for w in caught] == []


class _Server:
    def __init__(self, version: str) -> None:
        self.version = version

    def info(self) -> Any:
        return SimpleNamespace(version=self.version)


def test_a_server_outside_the_clients_range_is_warned_about() -> None:
    client_version = importlib.metadata.version("qdrant-client")
    with pytest.warns(UserWarning, match=r"Qdrant server 0\.1\.0 may not work with qdrant-client"):
        ClientCollection(_Server("0.1.0"), local=False)._check_version()  # type: ignore[arg-type]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ClientCollection(_Server(client_version), local=False)._check_version()  # type: ignore[arg-type]
