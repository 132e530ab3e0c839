"""Doclists are kept across generations: after a write, the first search reads no doclist it
had (counted in the SQL it runs), and its results are the whole-table index's and FTS5's."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pytest

from kbsearch.backends.sqlite import SqliteBackend
from kbsearch.records import Document, Filters, Passage
from kbsearch.retrieve.lexical import postings
from kbsearch.retrieve.lexical.doclists import Change, Doclists, outside
from kbsearch.retrieve.lexical.impact import ImpactIndex
from kbsearch.retrieve.lexical.sql import lexical_search
from kbsearch.store import Store
from kbsearch.text.analysis import Analyzer

PLAIN = Analyzer("plain")
QUERIES = ["kettle refund", "refund days", "kettle gift card", "wombat kettle", "days"]


def _write(store: Store, doc_id: str, texts: list[str], access: str = "public") -> None:
    doc = Document(doc_id, "1", "", "en", access, effective_from=date(2020, 1, 1))
    rows = [Passage(f"{doc_id}#{j}", doc_id, "1", "", "text", t, j) for j, t in enumerate(texts)]
    store.documents.write(doc, rows, texts, None)


def _store(path: Path) -> Store:
    store = Store(path, create=True)
    _write(store, "a", ["kettle refund days", "refund of a kettle within days"])
    _write(store, "b", ["gift card kettle", "days and days"], access="staff")
    _write(store, "c", ["refund policy", "kettle kettle"])
    return store


def _search(backend: SqliteBackend, query: str, filters: Filters) -> list[tuple[str, float]]:
    index = backend.lexical_index(str(filters.audience))
    return backend.lexical_candidates(index.terms(PLAIN, query, filters), filters, 10)


def _check(store: Store, backend: SqliteBackend) -> list[str]:
    """Every query's results equal the references'; returns the statements run."""
    statements: list[str] = []
    for audience in ("public", "staff"):
        filters = Filters(audience=audience)
        whole = ImpactIndex.load(store, audience)
        for query in QUERIES:
            with store.database.tracing(statements.append):
                got = _search(backend, query, filters)
            assert got == whole.search(store, PLAIN, query, filters, 10)
            expected = lexical_search(store, PLAIN, query, filters, 10)
            assert [p for p, _ in got] == [p for p, _ in expected]
    return statements


def _doclist_reads(statements: list[str]) -> list[str]:
    return [s for s in statements if "_instance" in s]


def test_a_write_rereads_no_doclist(tmp_path: Path) -> None:
    store = _store(tmp_path / "kb.db")
    backend = SqliteBackend(store)
    assert _doclist_reads(_check(store, backend))  # the first searches read the doclists
    _write(store, "d", ["wombat kettle refund", "days of kettle"])
    assert _doclist_reads(_check(store, backend)) == []
    _write(store, "a", ["kettle refund again", "no days"])  # a rewrite: rows deleted, added
    assert _doclist_reads(_check(store, backend)) == []
    store.documents.delete("c", "1")
    assert _doclist_reads(_check(store, backend)) == []
    _write(store, "e", ["a staff kettle"], access="staff")  # changes the staff table only
    assert _doclist_reads(_check(store, backend)) == []


def test_a_large_write_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path / "kb.db")
    backend = SqliteBackend(store)
    _check(store, backend)
    monkeypatch.setattr(postings, "CHANGE_ROWS", 1)
    _write(store, "d", ["wombat kettle refund", "days of kettle"])  # two rows: past the limit
    assert _doclist_reads(_check(store, backend))


def test_a_cleared_index_drops_every_row(tmp_path: Path) -> None:
    store = _store(tmp_path / "kb.db")
    backend = SqliteBackend(store)
    _check(store, backend)
    store.documents.clear()
    _write(store, "z", ["kettle refund"])
    assert _doclist_reads(_check(store, backend)) == []
    assert [p for p, _ in _search(backend, "kettle", Filters())] == ["z#0"]


def test_outside() -> None:
    rows = np.arange(12, dtype=np.int64)
    ranges = np.array([[8, 9], [2, 3], [3, 5]], dtype=np.int64)
    assert np.flatnonzero(outside(rows, ranges)).tolist() == [0, 1, 6, 7, 10, 11]
    assert outside(rows, np.zeros((0, 2), dtype=np.int64)).all()


def _arrays(*rows: int) -> tuple[np.ndarray, np.ndarray, int]:
    ids = np.array(rows, dtype=np.int64)
    return ids, np.ones(len(ids)), (max(rows) + 1 if rows else 0)


def test_an_older_reader_reads_its_own_and_keeps_nothing() -> None:
    cache = Doclists()

    def no_follow(old: int, old_next: int) -> Change | None:
        raise AssertionError("an older reader follows no change")

    cache.get("t", "kettle", 5, no_follow, lambda: _arrays(1, 2, 3))
    rows, _ = cache.get("t", "kettle", 3, no_follow, lambda: _arrays(1, 2))
    assert rows.tolist() == [1, 2]
    rows, _ = cache.get("t", "kettle", 5, no_follow, lambda: _arrays())  # still the newer one
    assert rows.tolist() == [1, 2, 3]


def test_changes_bring_a_doclist_forward() -> None:
    cache = Doclists()
    cache.get("t", "kettle", 1, lambda o, n: None, lambda: _arrays(1, 4, 6))
    added = {"kettle": (np.array([7, 9], dtype=np.int64), np.array([2.0, 1.0]))}
    change = Change(1, 2, 7, 10, np.array([[4, 4]], dtype=np.int64), added)
    rows, tf = cache.get("t", "kettle", 2, lambda o, n: change, lambda: _arrays())
    assert rows.tolist() == [1, 6, 7, 9] and tf.tolist() == [1.0, 1.0, 2.0, 1.0]
    rows, _ = cache.get("t", "kettle", 2, lambda o, n: None, lambda: _arrays())
    assert rows.tolist() == [1, 6, 7, 9]  # held at 2 now


def test_the_budget_drops_the_least_recently_used() -> None:
    cache = Doclists(budget=5)
    for term, rows in (("a", (1, 2)), ("b", (3, 4)), ("a", (1, 2)), ("c", (5, 6))):
        cache.get("t", term, 1, lambda o, n: None, lambda r=rows: _arrays(*r))
    assert len(cache) == 4  # "b" dropped: "a" was used again since
    reads = []
    cache.get("t", "b", 1, lambda o, n: None, lambda: reads.append(1) or _arrays(3, 4))
    cache.get("t", "c", 1, lambda o, n: None, lambda: reads.append(2) or _arrays(5, 6))
    assert reads == [1]
