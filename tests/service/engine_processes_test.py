"""Two engines on one file, as two server processes (``kbsearch serve --processes 2``) hold
it: a write answered by one is read by the other, a hidden passage included, and writes from
both land."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import FakeEmbedder

from kbsearch.filters import Filters
from kbsearch.knowledge_base import KnowledgeBase
from kbsearch.service.engine import Engine
from kbsearch.service.uploads import Upload, hides_public, write_upload

MARKER = "zebracorn"
LEAFLET = f"# Leaflet\n\n## Spare parts\n\nSpare parts for the {MARKER} kettle ship in a week.\n"


@pytest.fixture
def engines(kb_file: Path) -> Iterator[tuple[Engine, Engine]]:
    one = Engine(kb_file, embedder=FakeEmbedder())
    two = Engine(kb_file, embedder=FakeEmbedder())
    yield one, two
    one.close()
    two.close()


def _upload(doc_id: str = "leaflet", access: str = "public", text: str = LEAFLET) -> Upload:
    return Upload(doc_id=doc_id, filename=f"{doc_id}.md", content=text.encode(),
                  access=access, language="en")  # fmt: skip


def _write(engine: Engine, upload: Upload) -> object:
    return engine.write(lambda kb: write_upload(kb, upload), lambda kb: hides_public(kb, upload))


def _found(engine: Engine, audience: str = "public") -> dict[str, list[str]]:
    def read(kb: KnowledgeBase) -> dict[str, list[str]]:
        filters = Filters(audience=audience)
        return {
            route: [h.doc_id for h in kb.search(MARKER, k=10, route=route, filters=filters)]
            for route in ("lexical", "dense", "hybrid")
        }

    return engine.read(read, key=lambda: ("found", audience))


def test_a_write_on_one_engine_is_read_at_once_on_the_other(
    engines: tuple[Engine, Engine],
) -> None:
    """Without the wait, the other engine answered from its served snapshot (its builder is
    woken only by that very read), so the leaflet was missing from the first read after."""
    one, two = engines
    before = _found(two)  # kept for the old generation too: the key must not hide the write
    assert not any("leaflet" in hits for hits in before.values())
    _write(one, _upload())
    assert all(hits[:1] == ["leaflet"] for hits in _found(two).values())
    assert two.snapshots is not None and two.snapshots.generation == (
        two.kb.store.database.generation()
    )


def test_a_staff_version_written_on_one_engine_is_hidden_at_once_on_the_other(
    engines: tuple[Engine, Engine],
) -> None:
    one, two = engines
    _write(one, _upload())
    assert _found(two)["lexical"][:1] == ["leaflet"]
    _write(one, _upload(access="staff"))
    assert not any("leaflet" in hits for hits in _found(two).values())
    assert _found(two, "staff")["lexical"][:1] == ["leaflet"]


def test_a_read_during_its_own_engines_write_does_not_wait(
    engines: tuple[Engine, Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wait is for another process's write: while this engine writes (here held open,
    as between its commit and the new generation's publication), its reads answer from the
    served snapshot without waiting (its write is not answered yet)."""
    one, two = engines
    assert one.snapshots is not None
    waited: list[object] = []
    monkeypatch.setattr(one.snapshots._lock, "wait_for", lambda *a, **k: waited.append(a))
    with one.snapshots.writing():
        _write(two, _upload())
        assert not any("leaflet" in hits for hits in _found(one).values())
    assert waited == []


def test_writes_from_both_engines_at_once_all_land(engines: tuple[Engine, Engine]) -> None:
    """Two processes' writes on one file: each waits for the other's transaction (SQLite's
    busy timeout) and none is lost; both engines read all of them."""
    one, two = engines
    errors: list[BaseException] = []

    def writes(engine: Engine, prefix: str) -> None:
        try:
            for i in range(4):
                _write(engine, _upload(f"{prefix}-{i}", text=LEAFLET.replace("week", prefix)))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=writes, args=(e, p)) for e, p in ((one, "a"), (two, "b"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    expected = sorted(f"{p}-{i}" for p in "ab" for i in range(4))
    for engine in engines:
        ids = engine.read(lambda kb: sorted(d.document.doc_id for d in kb.documents()))
        assert [i for i in ids if i[:2] in ("a-", "b-")] == expected
        assert sorted(h for h in _found(engine)["lexical"] if h[:2] in ("a-", "b-")) == expected
