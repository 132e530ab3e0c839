"""The per-term lexical index gives the whole-table impact index's results bit for bit (ids,
order, scores) and FTS5's, reads only the postings of the query's terms, and stays right
across writes (a row id is never reused)."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import LEXICAL_DOCS, LEXICAL_SEARCHES, seed_store

from kbsearch.backends.sqlite import SqliteBackend
from kbsearch.errors import InvalidArgumentError
from kbsearch.records import Document, Filters, Passage
from kbsearch.retrieve.lexical.impact import ImpactIndex
from kbsearch.retrieve.lexical.query_terms import QueryTerms
from kbsearch.retrieve.lexical.sql import lexical_search
from kbsearch.store import Store
from kbsearch.text.analysis import Analyzer

PLAIN = Analyzer("plain")


def _write(
    store: Store,
    doc_id: str,
    texts: list[str],
    access: str = "public",
    language: str = "en",
    start: date | None = None,
    end: date | None = None,
) -> None:
    doc = Document(doc_id, "1", "", language, access, effective_from=start, effective_to=end)
    rows = [Passage(f"{doc_id}#{j}", doc_id, "1", "", "text", t, j) for j, t in enumerate(texts)]
    store.documents.write(doc, rows, texts, None)


def test_worked_example(tmp_path: Path) -> None:
    store = seed_store(tmp_path / "kb.db", PLAIN)
    index = SqliteBackend(store).lexical_index("public")
    hits = index.search(PLAIN, "kettle refund", Filters(), 10)
    assert [pid for pid, _ in hits] == ["A", "B", "C", "D", "E"]
    assert [round(s, 4) for _, s in hits] == [1.3808, 1.028, 0.4336, 0.4336, 0.4114]
    assert hits == lexical_search(store, PLAIN, "kettle refund", Filters(), 10)


def test_a_query_reads_only_its_own_terms(tmp_path: Path) -> None:
    """No statement reads every posting or every passage: each names the query's terms."""
    store = seed_store(tmp_path / "kb.db", PLAIN)
    backend = SqliteBackend(store)
    statements: list[str] = []
    with store.database.tracing(statements.append):
        backend.lexical_candidates(QueryTerms(("kettle",), ("kettle",), ()), Filters(), 5)
    reads = [s for s in statements if "_instance" in s or "FROM passages" in s]
    assert reads, statements
    assert all("WHERE" in s for s in reads), reads
    assert not any("group_concat(doc) FROM public_fts_instance WHERE term >=" in s for s in reads)


def test_row_ids_are_never_reused(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.db", create=True)
    _write(store, "a", ["one", "two"])
    _write(store, "b", ["three"])
    top = store.database.connection.execute("SELECT max(id) FROM passages").fetchone()[0]
    _write(store, "b", ["three again"])  # replaces the last rows: new ids, not the old ones
    ids = [r[0] for r in store.database.connection.execute("SELECT id FROM passages ORDER BY id")]
    assert min(ids[2:]) > top
    store.documents.delete("b", "1")
    _write(store, "c", ["four"])
    assert store.database.connection.execute("SELECT max(id) FROM passages").fetchone()[0] > max(
        ids
    )


def test_rewrites_of_the_last_document_are_searched_right(tmp_path: Path) -> None:
    """The shared row table keeps what it read of a row: a rewrite must not reuse its id."""
    store = Store(tmp_path / "kb.db", create=True)
    backend = SqliteBackend(store)
    _write(store, "a", ["kettle refund days"])
    _write(store, "b", ["kettle"], access="public")
    terms = QueryTerms(("kettle",), ("kettle",), ())
    assert [p for p, _ in backend.lexical_candidates(terms, Filters(), 5)] == ["b#0", "a#0"]
    _write(store, "b", ["kettle kettle kettle gift card of many words"], access="staff")
    assert [p for p, _ in backend.lexical_candidates(terms, Filters(), 5)] == ["a#0"]
    staff = Filters(audience="staff")
    got = backend.lexical_candidates(terms, staff, 5)
    assert got == lexical_search(store, PLAIN, "kettle", staff, 5)


def test_audience_must_match_the_table(tmp_path: Path) -> None:
    store = seed_store(tmp_path / "kb.db", PLAIN)
    index = SqliteBackend(store).lexical_index("public")
    with pytest.raises(InvalidArgumentError):
        index.search_terms(["kettle"], Filters(audience="staff"), 5)


def test_empty_store(tmp_path: Path) -> None:
    backend = SqliteBackend(Store(tmp_path / "kb.db", create=True))
    for audience in ("public", "staff"):
        index = backend.lexical_index(audience)
        assert index.search(PLAIN, "kettle", Filters(audience=audience), 5) == []


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    docs=LEXICAL_DOCS,
    rewrites=st.lists(st.integers(0, 13), max_size=3),
    queries=LEXICAL_SEARCHES,
)
def test_same_results_as_the_whole_table_index_and_fts5(
    tmp_path_factory: pytest.TempPathFactory, docs: list, rewrites: list, queries: list
) -> None:
    """Searched once before and once after rewrites and deletions (the shared row table then
    holds rows of the earlier generation), every list is the whole-table index's bit for bit
    and FTS5's to 1e-9; so are the scores of given passages."""
    store = Store(tmp_path_factory.mktemp("kb") / "kb.db", create=True)
    backend = SqliteBackend(store)
    try:
        for i, (passages, access, language, start, end) in enumerate(docs):
            texts = [" ".join(words) for words in passages]
            _write(store, f"d{i}", texts, access, language, start, end)
        for step in range(2):
            if step == 1:
                for i in rewrites:
                    if i >= len(docs):
                        store.documents.delete(f"d{i % len(docs)}", "1")
                        continue
                    passages, access, language, start, end = docs[i]
                    texts = [" ".join(reversed(w)) + " kettle" for w in passages]
                    _write(store, f"d{i}", texts, access, language, start, end)
            whole = {a: ImpactIndex.load(store, a) for a in ("public", "staff")}
            for words, filters, k in queries:
                query = " ".join(words)
                audience = str(filters.audience)
                index = backend.lexical_index(audience)
                terms = index.terms(PLAIN, query, filters)
                got = backend.lexical_candidates(terms, filters, k)
                assert got == whole[audience].search(store, PLAIN, query, filters, k)
                expected = lexical_search(store, PLAIN, query, filters, k)
                assert [p for p, _ in got] == [p for p, _ in expected]
                for (_, a), (_, b) in zip(got, expected, strict=True):
                    assert math.isclose(a, b, rel_tol=0, abs_tol=1e-9)
                if index.exact(terms):
                    ids = [f"d{i}#{j}" for i in range(len(docs)) for j in range(3)]
                    scores = backend.lexical_scores(terms, audience, ids)
                    rows = [whole[audience].position[p] for p in scores]
                    old = whole[audience].scores(terms.kept)[rows]
                    if terms.clamped:
                        old = np.where(old > 0, old, whole[audience].scores(terms.clamped)[rows])
                    assert list(scores.values()) == old.tolist()
    finally:
        store.close()
