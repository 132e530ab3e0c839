"""Keyed reads (Engine.read(fn, key)): a result is answered again on the generation that
served it, never on another, and an error or a result whose key moved is never kept."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support import FakeEmbedder, write_files

from kbsearch.errors import QueryError
from kbsearch.knowledge_base import KnowledgeBase
from kbsearch.service import operations as ops
from kbsearch.service.engine import Engine, GenerationResults

MARKER = "zebracorn"
LEAFLET = f"# Leaflet\n\n## Spare parts\n\nSpare parts for the {MARKER} kettle ship in a week.\n"


@pytest.fixture
def engine(kb_file: Path) -> Iterator[Engine]:
    engine = Engine(kb_file, embedder=FakeEmbedder())
    yield engine
    engine.close()


class Counted:
    """A search of ``MARKER`` that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, kb: KnowledgeBase) -> dict[str, object]:
        self.calls += 1
        return ops.search(kb, "public", ops.SearchArgs(q=MARKER), ops.Limits())


def test_a_keyed_read_is_answered_again_on_its_generation_only(
    engine: Engine, tmp_path: Path
) -> None:
    search = Counted()
    first = engine.read(search, key=lambda: "marker")
    assert engine.read(search, key=lambda: "marker") is first
    assert search.calls == 1
    assert engine.read(search) == first and search.calls == 2  # no key: searched again
    docs = write_files(tmp_path / "new", {"leaflet.md": LEAFLET})
    engine.write(lambda kb: kb.index([docs], default_access="public"))
    after = engine.read(search, key=lambda: "marker")
    assert search.calls == 3
    assert after["hits"][0]["doc_id"] == "leaflet"  # type: ignore[index]
    assert all(h["doc_id"] != "leaflet" for h in first["hits"])  # type: ignore[attr-defined]


def test_keys_tell_reads_apart(engine: Engine) -> None:
    search = Counted()
    engine.read(search, key=lambda: ("search", "public"))
    engine.read(search, key=lambda: ("search", "staff"))
    assert search.calls == 2


def test_an_error_is_never_kept(engine: Engine) -> None:
    calls = []

    def failing(kb: KnowledgeBase) -> None:
        calls.append(1)
        raise QueryError("the query is empty")

    for _ in range(2):
        with pytest.raises(QueryError):
            engine.read(failing, key=lambda: "bad")
    assert len(calls) == 2


def test_a_result_whose_key_moved_during_the_read_is_not_kept(engine: Engine) -> None:
    days = iter(["monday", "tuesday", "tuesday", "tuesday", "tuesday"])
    search = Counted()
    engine.read(search, key=lambda: next(days))  # asked monday, then tuesday: not kept
    engine.read(search, key=lambda: next(days))
    engine.read(search, key=lambda: next(days))
    assert search.calls == 2


def test_generation_results_keep_the_last_used_of_the_newest_generation() -> None:
    results = GenerationResults(size=2)
    results.put(5, ("all", 5), "a", 1)
    results.put(5, ("all", 5), "b", 2)
    assert results.get(5, ("all", 5), "a") == (True, 1)  # now the last used
    results.put(5, ("all", 5), "c", 3)
    assert results.get(5, ("all", 5), "b") == (False, None)  # the least recently used went
    assert results.get(5, ("all", 5), "a") == (True, 1)
    assert results.get(5, ("all", 5), "c") == (True, 3)
    assert results.get(6, ("all", 6), "a") == (False, None)  # another generation: not 5's
    results.put(6, ("all", 6), "a", 10)
    results.put(5, ("all", 5), "a", 1)  # a read of a generation that no longer serves
    assert results.get(6, ("all", 6), "a") == (True, 10)
    assert results.get(5, ("all", 5), "a") == (False, None)


def test_a_public_result_is_kept_for_its_view_across_generations() -> None:
    results = GenerationResults()
    results.put(5, ("public", 4), "q", 1)
    results.put(5, ("all", 5), "q", 2)
    results.put(6, ("all", 6), "q", 3)  # a staff-only write: generation 6, public view 4
    assert results.get(6, ("public", 4), "q") == (True, 1)
    assert results.get(6, ("all", 5), "q") == (False, None)
    assert results.get(7, ("public", 7), "q") == (False, None)  # a public write
    assert results.get(4, ("public", 4), "q") == (False, None)  # older than the newest read


SECRET = f"# Playbook\n\n## Refunds\n\nRefund a {MARKER} kettle in full, staff only.\n"


def _public_marker(engine: Engine) -> Callable[[], object]:
    search = Counted()

    def read() -> object:
        return engine.read(search, key=lambda: "marker", audience="public")

    read.calls = search  # type: ignore[attr-defined]
    return read


def test_a_public_result_outlives_a_staff_only_write_and_no_other(
    engine: Engine, tmp_path: Path
) -> None:
    """Every write emptied the kept results, so a public key timing a repeated search (1 ms
    kept, 8 ms searched on the demo) learnt when a staff-only write happened, which /metrics
    keeps from it; a write of what the public sees still starts afresh."""
    read = _public_marker(engine)
    counted: Counted = read.calls  # type: ignore[attr-defined]
    first = read()
    staff = write_files(tmp_path / "staff", {"playbook.md": SECRET})
    engine.write(lambda kb: kb.index([staff], default_access="staff"))
    assert read() is first and counted.calls == 1  # kept: the public sees nothing new
    staff_search = Counted()
    engine.read(staff_search, key=lambda: "staff", audience="staff")
    engine.write(lambda kb: kb.delete("playbook"))
    engine.read(staff_search, key=lambda: "staff", audience="staff")
    assert staff_search.calls == 2  # a staff read is read again after any write
    assert read() is first and counted.calls == 1
    public = write_files(tmp_path / "public", {"leaflet.md": LEAFLET})
    engine.write(lambda kb: kb.index([public], default_access="public"))
    after = read()
    assert counted.calls == 2 and after["hits"][0]["doc_id"] == "leaflet"  # type: ignore[index]


def test_a_public_version_made_staff_is_not_kept_for_the_public(
    engine: Engine, tmp_path: Path
) -> None:
    read = _public_marker(engine)
    public = write_files(tmp_path / "docs", {"leaflet.md": LEAFLET})
    engine.write(lambda kb: kb.index([public], default_access="public"))
    assert read()["hits"][0]["doc_id"] == "leaflet"  # type: ignore[index]
    staff = LEAFLET.replace("# Leaflet", "---\naccess: staff\n---\n# Leaflet")
    write_files(public, {"leaflet.md": staff})
    engine.write(lambda kb: kb.index([public], default_access="public"))
    assert all(h["doc_id"] != "leaflet" for h in read()["hits"])  # type: ignore[index]
    engine.write(lambda kb: kb.delete("leaflet"))  # a staff version: the public's view stays
    assert read.calls.calls == 2  # type: ignore[attr-defined]
