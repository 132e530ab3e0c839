"""Fixtures of the service tests: a small knowledge base (public, staff-only and two dated
versions of one document), a keys file, and the running app reached through a real HTTP
client."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support import FILES, FakeEmbedder, write_files
from support_service import KEYS, Running

import kbsearch
from kbsearch.service import create_app


@pytest.fixture
def kb_file(tmp_path: Path) -> Path:
    docs = write_files(tmp_path / "docs", FILES)
    db = tmp_path / "kb.db"
    with kbsearch.open_kb(db, create=True, embedder=FakeEmbedder()) as kb:
        report = kb.index([docs], inventory=docs / "inventory.csv")
    assert report.ok and report.added == 4
    return db


@pytest.fixture
def keys_file(tmp_path: Path) -> Path:
    path = tmp_path / "keys.txt"
    path.write_text(KEYS, encoding="utf-8")
    return path


@pytest.fixture
def serve() -> Iterator[Callable[..., Running]]:
    """``serve(db, **create_app_kwargs)``: the app running until the test ends."""
    running: list[Running] = []

    def start(db: Path, **kwargs: Any) -> Running:
        kwargs.setdefault("embedder", FakeEmbedder())
        server = Running(create_app(db, **kwargs)).__enter__()
        running.append(server)
        return server

    yield start
    for server in reversed(running):
        server.__exit__()


@pytest.fixture
def server(serve: Callable[..., Running], kb_file: Path, keys_file: Path) -> Running:
    return serve(kb_file, keys=keys_file)


@pytest.fixture
def client(server: Running) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        yield c


@pytest.fixture
def lexical_server(serve: Callable[..., Running], tmp_path: Path, keys_file: Path) -> Running:
    """The app over an index without vectors (``--embedder none``)."""
    docs = write_files(tmp_path / "lexical-docs", FILES)
    db = tmp_path / "lexical.db"
    with kbsearch.open_kb(db, create=True, embedder="none") as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv").added == 4
    return serve(db, keys=keys_file, embedder=None)
