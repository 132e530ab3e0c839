"""Scoring given passages (what score fusion needs): a passage's score from the scoring call
equals its score in the route's own list, for the lexical route (the impact index, its
clamped-term fill, and the SQL path of a query FTS5 must tokenize) and the dense route; heading
cosines come from the heading vectors the indexer embedded."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from support import FILES, FakeEmbedder, indexed_kb, pages_inventory, write_files

import kbsearch
from kbsearch.backends.sqlite import SqliteBackend
from kbsearch.filters import Filters
from kbsearch.knowledge_base import KnowledgeBase
from kbsearch.retrieve.routes import LexicalRoute

QUERIES = ["lost parcel refund", "return window days", "late parcel goodwill", "colis perdu"]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    return indexed_kb(tmp_path_factory.mktemp("kb"))


def every_passage(kb: KnowledgeBase) -> list[str]:
    return [r[0] for r in kb.store.database.connection.execute("SELECT passage_id FROM passages")]


@pytest.mark.parametrize("audience", ["public", "staff"])
@pytest.mark.parametrize("query", QUERIES)
def test_lexical_scores_equal_the_route_list(kb: KnowledgeBase, query: str, audience: str) -> None:
    backend = kb.backend
    assert isinstance(backend, SqliteBackend)
    filters = Filters(audience=audience)
    terms = kb.routes["lexical"].terms(query, filters)  # type: ignore[attr-defined]
    listed = dict(backend.lexical_candidates(terms, filters, 1000))
    scored = backend.lexical_scores(terms, audience, every_passage(kb))
    assert listed or query == "colis perdu", query  # a staff-only French note
    for pid, score in listed.items():
        assert scored[pid] == score
    visible = backend.passages(scored, filters)  # the others are another version's, or out
    assert all(scored[p] == 0.0 for p in visible if p not in listed)  # of force on this day
    if audience == "public":  # a staff-only passage is not in the public index: left out
        staff = {p for p in every_passage(kb) if kb.store.passages.rows([p])[p].access != "public"}
        assert staff and not staff & set(scored)


@pytest.mark.parametrize("query", QUERIES)
def test_dense_and_heading_scores(kb: KnowledgeBase, query: str) -> None:
    backend = kb.backend
    vector = kb.query_vector(query)
    listed = dict(backend.dense_candidates(vector, Filters(audience="staff"), 1000))
    scored = backend.dense_scores(vector, every_passage(kb))
    assert scored.keys() == set(every_passage(kb)) >= listed.keys()  # every one has a vector
    for pid, score in listed.items():
        assert math.isclose(scored[pid], score, rel_tol=1e-6, abs_tol=1e-6)
    headings = backend.heading_scores(vector, every_passage(kb))
    assert headings.keys() == scored.keys()  # every passage has a titled document
    assert all(-1.0 - 1e-6 <= v <= 1.0 + 1e-6 for v in headings.values())


def test_clamped_fill_and_sql_path_score_as_the_list(tmp_path: Path) -> None:
    """'warranty' is in half the passages (IDF clamped): the list's fill and the scoring call
    agree; a query term FTS5 must tokenize (not ASCII, not in the vocabulary) is scored by
    FTS5 as the list is."""
    bodies = ["The warranty covers parts.", "A warranty claim needs a receipt.",
              "Our warranty lasts two years.", "Direct debit is taken monthly.",
              "Parcels arrive quickly.", "Gift cards never expire."]  # fmt: skip
    texts = {f"p{i}.md": f"# Page {i}\n\n## Part\n\n{b}\n" for i, b in enumerate(bodies)}
    texts["inventory.csv"] = pages_inventory(6)
    docs = write_files(tmp_path / "docs", texts)
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        kb.index([docs], inventory=docs / "inventory.csv")
        route = kb.routes["lexical"]
        assert isinstance(route, LexicalRoute)
        for query in ("warranty debit", "warranty débit 保证"):
            filters = Filters()
            terms = route.terms(query, filters)
            listed = dict(kb.backend.lexical_candidates(terms, filters, 10))
            assert len(listed) == 4 and terms.clamped, query  # debit, then the 3 warranty
            scored = route.scores(query, filters, every_passage(kb))
            for pid, score in listed.items():
                assert math.isclose(scored[pid], score, rel_tol=1e-12), (query, pid)
            assert sorted(v for p, v in scored.items() if p not in listed) == [0.0, 0.0]


def test_no_heading_vectors_leaves_title_out(tmp_path: Path) -> None:
    """An index built before heading vectors: no title score, searches still work."""
    docs = write_files(tmp_path / "docs", FILES)
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=FakeEmbedder()) as kb:
        kb.index([docs], inventory=docs / "inventory.csv")
        with kb.store.database.transaction() as con:
            con.execute("DELETE FROM embedding_cache WHERE role = 'heading'")
            kb.store.database.bump_generation()
        vector = kb.query_vector("lost parcel")
        assert kb.backend.heading_scores(vector, every_passage(kb)) == {}
        hits = kb.search("lost parcel", fusion="convex:alpha=0.6,title=0.3")
        assert hits and np.isfinite([h.score for h in hits]).all()
