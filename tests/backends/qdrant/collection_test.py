"""The Collection interface on qdrant-client's local mode and on Qdrant Edge: exact dense
top k, BM25 scores by hand, filters inside the query, the public statistics boundary."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from kbsearch.backends.qdrant.collection import Collection
from kbsearch.backends.qdrant.filters import to_qdrant
from kbsearch.backends.qdrant.points import (
    DENSE,
    SPARSE_ALL,
    SPARSE_PUBLIC,
    PassagePoint,
    passage_points,
)
from kbsearch.backends.qdrant.sparse import (
    LengthStatistics,
    SparseWeights,
    qdrant_idf,
    query_vector,
    tokens,
)
from kbsearch.errors import BackendUnavailableError
from kbsearch.filters import Filters
from kbsearch.records import Document, Passage

DAY = date(2026, 1, 15)


def loaded(collection: Collection, corpus) -> list[PassagePoint]:
    points = corpus.points()
    collection.ensure(32)
    collection.upsert(points, corpus.lengths())
    return points


def exact_top_k(points: list[PassagePoint], query: np.ndarray, where, k: int):
    allowed = {p.passage_id for p in points}  # filtered by the caller
    scored = [
        (p.passage_id, float(np.dot(p.dense, query) / np.linalg.norm(p.dense)))
        for p in points
        if p.passage_id in allowed and p.dense is not None
    ]
    return sorted(scored, key=lambda x: (-x[1], x[0]))[:k]


@pytest.mark.parametrize("audience", ["public", "staff"])
def test_exact_dense_top_k_is_brute_force_cosine_under_filters(
    collection: Collection, corpus, audience: str
) -> None:
    points = loaded(collection, corpus)
    filters = Filters(audience=audience, as_of=DAY)
    visible = {p.passage_id for p in collection.points(to_qdrant(filters))}
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = rng.normal(size=32).astype(np.float32)
        q /= np.linalg.norm(q)
        got = collection.query(DENSE, q, to_qdrant(filters), 5)
        want = exact_top_k([p for p in points if p.passage_id in visible], q, None, 5)
        assert [pid for pid, _ in got] == [pid for pid, _ in want]
        assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-5)
        if audience == "public":
            assert all(p.payload["access"] == "public" for p in points if p.passage_id in visible)


def bm25_by_hand(points: list[PassagePoint], terms: list[str], public: bool) -> dict[str, float]:
    """Qdrant's score: sum of IDF_qdrant(t) * w(t, D) over the public or all points."""
    pool = [p for p in points if p.public] if public else points
    n = len(pool)
    avgdl = sum(p.sparse.length for p in pool) / n
    scores: dict[str, float] = {}
    for p in pool:
        indices, values = p.sparse.vector(avgdl)
        weights = dict(zip(indices, values, strict=True))
        total = 0.0
        for t in terms:
            i = query_vector([t])[0][0]
            if i in weights:
                df = sum(1 for o in pool if i in dict(o.sparse.frequencies))
                total += qdrant_idf(n, df) * weights[i]
        if total > 0:
            scores[p.passage_id] = total
    return scores


@pytest.mark.parametrize("audience", ["public", "staff"])
def test_sparse_scores_are_bm25_with_qdrant_idf_over_the_audience_points(
    collection: Collection, corpus, audience: str
) -> None:
    points = loaded(collection, corpus)
    terms = tokens("refund parcel garantie")
    staff_filter = Filters(audience="staff", as_of=date(2030, 1, 1))
    where = to_qdrant(Filters(audience=audience, as_of=date(2030, 1, 1)))
    using = SPARSE_PUBLIC if audience == "public" else SPARSE_ALL
    got = dict(collection.query(using, query_vector(terms), where, 100))
    want = bm25_by_hand(points, terms, public=audience == "public")
    in_force = {p.passage_id for p in collection.points(to_qdrant(staff_filter))}
    want = {k: v for k, v in want.items() if k in in_force}
    assert got.keys() == want.keys()
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-5)


def test_adding_a_staff_document_never_changes_a_public_score(
    collection: Collection, corpus
) -> None:
    loaded(collection, corpus)
    where = to_qdrant(Filters(audience="public", as_of=DAY))
    queries = [query_vector(tokens(q)) for q in ("refund parcel", "garantie retour", "card")]
    before = [collection.query(SPARSE_PUBLIC, q, where, 50) for q in queries]
    staff = Document("secret", "1", "Secret", "en", "staff")
    text = "refund refund parcel garantie card staff agent goodwill"
    passage = Passage("secret@v1#s0", "secret", "1", "s0", "text", text, 0)
    points = passage_points(staff, [passage], [SparseWeights.from_body(text)], np.ones((1, 32)))
    grown = LengthStatistics(corpus.lengths().avgdl_all + 3.0, corpus.lengths().avgdl_public)
    collection.upsert(points, grown)
    after = [collection.query(SPARSE_PUBLIC, q, where, 50) for q in queries]
    assert after == before
    assert any(before)
    staff_where = to_qdrant(Filters(audience="staff", as_of=DAY))
    assert "secret@v1#s0" in dict(collection.query(SPARSE_ALL, queries[0], staff_where, 50))


def test_stale_passages_of_a_shorter_new_version_are_deleted(
    collection: Collection, corpus
) -> None:
    points = loaded(collection, corpus)
    doc = corpus.documents[0]
    mine = [
        p
        for p in points
        if p.payload["doc_id"] == doc.doc_id and p.payload["version"] == doc.version
    ]
    collection.delete_stale(doc.doc_id, doc.version, [mine[0].passage_id])
    left = {p.passage_id for p in collection.points()}
    assert mine[0].passage_id in left
    assert not {p.passage_id for p in mine[1:]} & left
    assert collection.count() == len(points) - len(mine) + 1


def test_upsert_overwrites_the_point_of_the_same_passage(collection: Collection, corpus) -> None:
    points = loaded(collection, corpus)
    changed = replace(points[0], payload={**points[0].payload, "language": "de"})
    collection.upsert([changed], corpus.lengths())
    assert collection.count() == len(points)
    where = to_qdrant(Filters(audience="staff", as_of=DAY, language="de"))
    assert all(p.passage_id == points[0].passage_id for p in collection.points(where))


def test_another_dimension_is_refused(tmp_path: Path, collection: Collection, corpus) -> None:
    loaded(collection, corpus)
    with pytest.raises(BackendUnavailableError, match="32"):
        collection.ensure(64)


def test_empty_query_and_zero_limit_find_nothing(collection: Collection, corpus) -> None:
    loaded(collection, corpus)
    where = to_qdrant(Filters(audience="staff"))
    assert collection.query(SPARSE_ALL, ([], []), where, 10) == []
    assert collection.query(DENSE, np.ones(32), where, 0) == []
    assert math.isfinite(corpus.lengths().avgdl_public)
