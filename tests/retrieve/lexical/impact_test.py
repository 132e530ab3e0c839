"""The in-memory impact index gives FTS5's lexical results exactly (ids, order, scores)."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from support import LEXICAL_DOCS, LEXICAL_SEARCHES, seed_store

from kbsearch.errors import InvalidArgumentError
from kbsearch.filters import FilterColumns
from kbsearch.knowledge_base import KnowledgeBase
from kbsearch.records import Document, Filters, Passage
from kbsearch.retrieve.lexical.impact import ImpactIndex
from kbsearch.retrieve.lexical.sql import lexical_search
from kbsearch.store import Store, fts
from kbsearch.text.analysis import Analyzer

PLAIN = Analyzer("plain")


def test_worked_example_through_the_impact_index(tmp_path: Path) -> None:
    store = seed_store(tmp_path / "kb.db", PLAIN)
    index = ImpactIndex.load(store, "public")
    hits = index.search(store, PLAIN, "kettle refund", Filters(), 10)
    assert [pid for pid, _ in hits] == ["A", "B", "C", "D", "E"]
    assert [round(s, 4) for _, s in hits] == [1.3808, 1.028, 0.4336, 0.4336, 0.4114]
    assert hits[2][1] == hits[3][1]  # the exact tie, C before D
    assert hits == lexical_search(store, PLAIN, "kettle refund", Filters(), 10)


def test_knowledge_base_ranking_uses_it_and_reloads_after_writes(tmp_path: Path) -> None:
    store = seed_store(tmp_path / "kb.db", PLAIN)
    store.database.set_settings({"analyzer": "plain"})
    kb = KnowledgeBase(store)
    assert [p for p, _ in kb.routes["lexical"].candidates("kettle", Filters(), 5)] == ["A", "B"]
    first = kb.impact_index("public")
    assert kb.impact_index("public") is first  # cached while nothing is written
    doc = Document(doc_id="A", version="1", title="A", language="en", access="public")
    store.documents.write(
        doc, [Passage("A", "A", "1", "", "text", "Teapot notice.", 0)], ["Teapot notice."], None
    )
    assert [p for p, _ in kb.routes["lexical"].candidates("kettle", Filters(), 5)] == ["B"]
    assert [p for p, _ in kb.routes["lexical"].candidates("teapot", Filters(), 5)] == ["A"]
    assert kb.impact_index("public") is not first
    store.documents.delete("B", "1")
    assert kb.routes["lexical"].candidates("kettle", Filters(), 5) == []
    assert kb.routes["lexical"].candidates("teapot refund", Filters(), 5) == lexical_search(
        store, PLAIN, "teapot refund", Filters(), 5
    )


@pytest.mark.parametrize("chunk", [1, 3, 1 << 20])
def test_postings_read_in_term_ranges_equal_the_row_by_row_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """However the instances are split into reads, the postings are the fts5vocab tables'."""
    store = seed_store(tmp_path / "kb.db", PLAIN)
    monkeypatch.setattr(fts, "_CHUNK", chunk)
    for audience in ("public", "staff"):
        table = fts.fts_table(audience)
        with store.database.read_transaction():
            postings = store.fts.postings(audience)
            rows = store.database.connection.execute(f"SELECT doc FROM {table}_instance").fetchall()
        assert postings.docs.tolist() == [r[0] for r in rows]
        assert int(postings.instances.sum()) == len(rows)


def test_audience_must_match_the_table(tmp_path: Path) -> None:
    store = seed_store(tmp_path / "kb.db", PLAIN)
    with pytest.raises(InvalidArgumentError):
        ImpactIndex.load(store, "public").search_terms(["kettle"], Filters(audience="staff"), 5)


def test_empty_store(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.db", create=True)
    for audience in ("public", "staff"):
        index = ImpactIndex.load(store, audience)
        assert index.search(store, PLAIN, "kettle", Filters(audience=audience), 5) == []


def test_filter_columns_mask_follows_sql_rules() -> None:
    columns = FilterColumns(
        np.array(["public", "staff", "public"], dtype=object),
        np.array(["en", "en", "fr"], dtype=object),
        np.array(["a", "b", "c"], dtype=object),
        np.array(["", "2026-01-01", ""], dtype="U10"),
        np.array(["", "", "2025-12-31"], dtype="U10"),
    )
    day = date(2026, 6, 1)
    assert columns.mask(Filters(as_of=day)).tolist() == [True, False, False]
    assert columns.mask(Filters(audience="staff", as_of=day)).tolist() == [True, True, False]
    staff_old = Filters(audience="staff", as_of=date(2025, 6, 1), language="fr")
    assert columns.mask(staff_old).tolist() == [False, False, True]
    assert columns.mask(Filters(audience="staff", as_of=day, doc_ids=("b",))).tolist() == [
        False,
        True,
        False,
    ]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    docs=LEXICAL_DOCS,
    queries=LEXICAL_SEARCHES,
)
def test_same_ranking_and_scores_as_fts5(
    tmp_path_factory: pytest.TempPathFactory, docs: list, queries: list
) -> None:
    store = Store(tmp_path_factory.mktemp("kb") / "kb.db", create=True)
    try:
        for i, (passages, access, language, start, end) in enumerate(docs):
            doc = Document(
                doc_id=f"d{i}",
                version="1",
                title="",
                language=language,
                access=access,
                effective_from=start,
                effective_to=end,
            )
            texts = [" ".join(words) for words in passages]
            rows = [
                Passage(f"d{i}#{j}", f"d{i}", "1", "", "text", t, j) for j, t in enumerate(texts)
            ]
            store.documents.write(doc, rows, texts, None)
        indexes = {a: ImpactIndex.load(store, a) for a in ("public", "staff")}
        for words, filters, k in queries:
            query = " ".join(words)
            expected = lexical_search(store, PLAIN, query, filters, k)
            got = indexes[filters.audience].search(store, PLAIN, query, filters, k)
            assert [p for p, _ in got] == [p for p, _ in expected]
            for (_, a), (_, b) in zip(got, expected, strict=True):
                assert math.isclose(a, b, rel_tol=0, abs_tol=1e-9)
    finally:
        store.close()
