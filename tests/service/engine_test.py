"""The engine serves reads from the newest built snapshot while the next one is built in the
background: a read never builds (or waits for) the new generation's parts, every read is one
whole generation, and a write that hides a public document withdraws the old snapshot first.

The builder is slowed by a gate on ``ImpactIndex.load`` (events, not timing)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support import FakeEmbedder, damage_table, write_files

import kbsearch
from kbsearch.filters import Filters
from kbsearch.judge.evidence import Background
from kbsearch.knowledge_base import KnowledgeBase
from kbsearch.retrieve.lexical.postings import TermIndex
from kbsearch.service.engine import Engine
from kbsearch.service.uploads import Upload, hides_public, write_upload

MARKER = "zebracorn"
LEAFLET = f"# Leaflet\n\n## Spare parts\n\nSpare parts for the {MARKER} kettle ship in a week.\n"


class Gate:
    """Holds every ``TermIndex`` made once closed, until opened. ``strict``: one made on any
    thread but the snapshot builder fails the test (a search must not build inline)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, strict: bool) -> None:
        self.entered = threading.Event()
        self.opened = threading.Event()
        self.inline: list[str] = []
        original = TermIndex.__init__

        def gated(*args: Any, **kwargs: Any) -> None:
            name = threading.current_thread().name
            if strict and name != "kbsearch-snapshot":
                self.inline.append(name)
                raise AssertionError(f"a search built the lexical index inline on {name}")
            self.entered.set()
            assert self.opened.wait(30), "the gate was never opened"
            original(*args, **kwargs)

        monkeypatch.setattr(TermIndex, "__init__", gated)
        if strict:  # the abstention stage's cosine background: built with the snapshot too
            for name in ("of", "of_moments"):
                monkeypatch.setattr(Background, name, staticmethod(self._checked(name)))

    def _checked(self, method: str) -> Callable[..., Background]:
        background = getattr(Background, method)

        def checked(*args: Any, **kwargs: Any) -> Background:
            name = threading.current_thread().name
            if name != "kbsearch-snapshot":
                self.inline.append(name)
                raise AssertionError(f"a search computed a cosine background on {name}")
            return background(*args, **kwargs)  # type: ignore[no-any-return]

        return checked


@pytest.fixture
def engine(kb_file: Path) -> Iterator[Engine]:
    engine = Engine(kb_file, embedder=FakeEmbedder())
    yield engine
    engine.close()


def _view(audience: str = "public") -> Callable[[KnowledgeBase], dict[str, Any]]:
    def read(kb: KnowledgeBase) -> dict[str, Any]:
        filters = Filters(audience=audience)
        return {
            "generation": kb.store.database.generation(),
            "documents": sorted(d.document.doc_id for d in kb.documents()),
            "hits": {
                route: [h.doc_id for h in kb.search(MARKER, k=10, route=route, filters=filters)]
                for route in ("lexical", "dense", "hybrid")
            },
            "answerable": kb.assess(MARKER, filters=filters).decision is not None,
        }

    return read


def _index_leaflet(tmp: Path) -> Callable[[KnowledgeBase], object]:
    docs = write_files(tmp, {"leaflet.md": LEAFLET})
    return lambda kb: kb.index([docs], default_access="public")


def test_reads_answer_from_the_old_snapshot_while_the_next_builds(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = engine.read(_view())
    assert engine.snapshots is not None and engine.snapshots.generation == old["generation"]
    gate = Gate(monkeypatch, strict=True)
    writer = threading.Thread(target=engine.write, args=(_index_leaflet(tmp_path),))
    writer.start()
    try:
        assert gate.entered.wait(30), "the builder never started on the new generation"
        during = engine.read(_view())  # the builder is held: this read must not wait for it
        assert during == old  # the whole old generation: documents, rankings, counter
        assert writer.is_alive()  # the write returns only once its generation serves
    finally:
        gate.opened.set()
        writer.join(30)
    assert not writer.is_alive() and not gate.inline
    new = engine.read(_view())
    assert new["generation"] > old["generation"]
    assert "leaflet" in new["documents"]
    assert all(hits and hits[0] == "leaflet" for hits in new["hits"].values())
    assert engine.snapshots.generation == new["generation"]


def test_a_write_that_hides_a_public_document_withdraws_the_old_snapshot(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def upload(access: str) -> Upload:
        return Upload(doc_id="leaflet", filename="leaflet.md", content=LEAFLET.encode(),
                      access=access, language="en")  # fmt: skip

    public, staff = upload("public"), upload("staff")
    engine.write(lambda kb: write_upload(kb, public), lambda kb: hides_public(kb, public))
    assert engine.read(_view())["hits"]["lexical"][:1] == ["leaflet"]
    assert engine.read(lambda kb: hides_public(kb, staff))

    gate = Gate(monkeypatch, strict=False)
    writer = threading.Thread(
        target=engine.write,
        args=(lambda kb: write_upload(kb, staff), lambda kb: hides_public(kb, staff)),
    )
    writer.start()
    assert gate.entered.wait(30)  # committed, and the builder is held on the new generation
    results: list[dict[str, Any]] = []
    reader = threading.Thread(target=lambda: results.append(engine.read(_view())))
    reader.start()  # no old snapshot serves: it reads the current file (and waits to build)
    gate.opened.set()
    reader.join(30)
    writer.join(30)
    (seen,) = results
    assert not any("leaflet" in hits for hits in seen["hits"].values())
    assert engine.read(_view("staff"))["hits"]["lexical"][:1] == ["leaflet"]


def test_a_public_write_does_not_withdraw(engine: Engine) -> None:
    public = Upload(doc_id="delivery", filename="d.md", content=LEAFLET.encode(), access="public")
    staff = Upload(doc_id="fresh", filename="f.md", content=LEAFLET.encode(), access="staff")
    assert not engine.read(lambda kb: hides_public(kb, public))
    assert not engine.read(lambda kb: hides_public(kb, staff))  # no public version to hide
    hidden = Upload(doc_id="delivery", filename="d.md", content=LEAFLET.encode(), access="staff")
    assert engine.read(lambda kb: hides_public(kb, hidden))


def test_the_wal_starts_over_while_snapshots_stay_pinned(engine: Engine, tmp_path: Path) -> None:
    """A served snapshot always holds a pinned reader; re-pinned after a complete checkpoint,
    it lets the next write start the WAL over instead of growing it by every write."""
    wal = Path(f"{engine.db}-wal")
    body = "# Notice\n\n## Update\n\n" + "parcel update words " * 1500 + "\n"

    def write(i: int) -> None:
        upload = Upload(doc_id="notice", filename="notice.md",
                        content=f"{body}{i}".encode(), access="public")  # fmt: skip
        engine.write(lambda kb: write_upload(kb, upload))
        engine.read(_view())

    write(0)
    before = wal.stat().st_size
    for i in range(1, 31):
        write(i)
    # 30 writes on a WAL that never starts over add ~9 MB (~300 x the text: measured without
    # the re-pinning); one that starts over stays within a few writes' pages (a write that
    # comes before the re-pin appends instead: up to ~600 KB seen)
    assert wal.stat().st_size - before < 60 * len(body)


def test_settle_searches_every_route_then_freezes_the_heap(
    kb_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``serve`` settles the service before it listens: the first snapshot serves, one search
    per route has loaded what searches need, and the startup heap is frozen (``gc.freeze``,
    recorded here rather than applied to the test process)."""
    from kbsearch.service import context, create_app

    routes: list[str] = []
    frozen: list[bool] = []
    search = context.search

    def recorded(kb: KnowledgeBase, audience: str, args: Any, limits: Any) -> Any:
        routes.append(args.route)
        assert audience == "public"
        return search(kb, audience, args, limits)

    monkeypatch.setattr(context, "search", recorded)
    monkeypatch.setattr(context.gc, "freeze", lambda: frozen.append(True))
    app = create_app(kb_file, embedder=FakeEmbedder())
    try:
        app.state.service.settle()
        assert app.state.service.engine.snapshots.generation is not None
    finally:
        app.state.service.engine.close()
    assert sorted(routes) == ["dense", "hybrid", "lexical"]
    assert frozen == [True]


def test_an_index_never_written_serves_at_once(tmp_path: Path) -> None:
    """A new, empty index is generation 0: its first snapshot serves at once, so settling (and
    ``wait_for(0)``) returns without waiting for the timeout (it waited all 60 s: a served
    generation 0 was read as none)."""
    db = tmp_path / "empty.db"
    kbsearch.open_kb(db, create=True, embedder=FakeEmbedder()).close()
    engine = Engine(db, embedder=FakeEmbedder())
    try:
        assert engine.snapshots is not None and engine.snapshots.generation == 0
        assert engine.snapshots.wait_for(0, timeout=0.5)
    finally:
        engine.close()


def test_a_damaged_index_fails_at_start_with_a_storage_error(kb_file: Path) -> None:
    """A page of the passages table overwritten: the first snapshot cannot be built. That is
    a :class:`StorageError` naming the file (one line from ``kbsearch serve``), not the
    ``sqlite3.DatabaseError`` of closing the snapshot's reader, which hid the first one."""
    from kbsearch.errors import StorageError

    damage_table(kb_file, "passages")
    with pytest.raises(StorageError, match="damaged") as raised:
        Engine(kb_file, embedder=FakeEmbedder())
    assert str(kb_file) in str(raised.value)


def test_every_write_hands_freed_memory_back(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """glibc keeps a large write's freed buffers for the process's life unless asked
    (``malloc_trim``); the engine asks after every write, a failed one included."""
    from kbsearch.service import engine as engine_module

    calls: list[int] = []
    monkeypatch.setattr(engine_module, "release_free_memory", lambda: calls.append(1))
    upload = Upload(doc_id="leaflet", filename="l.md", content=LEAFLET.encode(), access="public")
    engine.write(lambda kb: write_upload(kb, upload))
    assert calls == [1]
    with pytest.raises(ZeroDivisionError):
        engine.write(lambda kb: 1 // 0)
    assert calls == [1, 1]
    monkeypatch.undo()
    engine_module.release_free_memory()  # the real one runs on this platform
