"""The Qdrant backend against the embedded one on the same SQLite file: the same pipeline,
the same filters; identical exact dense top k, identical lexical match sets (scores differ
only by the IDF formula), no staff passage in public results, writes SQLite first, drift
repaired by sync."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pytest
from support import FakeEmbedder

from kbsearch.backends.qdrant.backend import QdrantBackend
from kbsearch.backends.qdrant.collection import Collection
from kbsearch.backends.qdrant.sparse import qdrant_idf
from kbsearch.backends.sqlite import SqliteBackend
from kbsearch.errors import PartialWriteError
from kbsearch.filters import Filters
from kbsearch.pipeline import Pipeline, RouteContext, SearchRequest, make_routes
from kbsearch.records import Document, Passage
from kbsearch.retrieve.backend import Backend
from kbsearch.store import Store
from kbsearch.text.analysis import Analyzer

QUERIES = ["refund parcel", "garantie retour", "late delivery week", "carte cadeau prix", "staff"]


@dataclass
class Encoder:
    embedder: FakeEmbedder

    def available(self) -> bool:
        return True

    def indexed(self) -> bool:
        return True

    def vector(self, query: str) -> np.ndarray:
        return self.embedder.encode_queries([query])[0]


def pipeline(backend: Backend) -> Pipeline:
    context = RouteContext(backend, lambda: Analyzer("stem"), Encoder(FakeEmbedder(dim=32)))
    return Pipeline(backend, make_routes(context))


@pytest.fixture
def qdrant(store: Store, collection: Collection) -> QdrantBackend:
    backend = QdrantBackend(store, collection, batch_size=7)
    report, changed = backend.sync()
    assert changed == report.expected == len(report.missing) > 0
    assert backend.verify().ok
    return backend


def filter_cases(corpus) -> list[Filters]:
    bounds = sorted(
        {d for doc in corpus.documents for d in (doc.effective_from, doc.effective_to) if d}
    )
    days = [b + timedelta(days=s) for b in bounds for s in (-1, 0, 1)] + [None]
    doc_ids = sorted({d.doc_id for d in corpus.documents})
    cases = [
        Filters(audience=a, as_of=day) for a, day in itertools.product(["public", "staff"], days)
    ]
    cases += [
        Filters(audience=a, language=lang) for a in ("public", "staff") for lang in ("en", "fr")
    ]
    cases += [Filters(audience="staff", doc_ids=tuple(doc_ids[:3])), Filters(doc_ids=doc_ids[3])]
    return cases


def test_exact_dense_top_k_ids_are_identical_under_every_filter(
    store: Store, qdrant: QdrantBackend, corpus
) -> None:
    embedded, remote = pipeline(SqliteBackend(store)), pipeline(qdrant)
    for filters, query in itertools.product(filter_cases(corpus), QUERIES):
        request = SearchRequest(query, k=5, route="dense", filters=filters)
        a, b = embedded.run(request), remote.run(request)
        assert [h.passage_id for h in b.hits] == [h.passage_id for h in a.hits], (
            filters,
            query,
            [(h.passage_id, h.score) for h in a.hits],
            [(h.passage_id, h.score) for h in b.hits],
        )
        assert [h.score for h in b.hits] == pytest.approx([h.score for h in a.hits], abs=1e-5)


def test_lexical_matches_the_same_passages_under_every_filter(
    store: Store, qdrant: QdrantBackend, corpus
) -> None:
    """Same passages found (every passage holding a query term, filters applied); their order
    may differ where Qdrant's IDF ln(1 + (N - n + 0.5)/(n + 0.5)) and FTS5's clamped
    ln((N - n + 0.5)/(n + 0.5)) disagree."""
    embedded, remote = SqliteBackend(store), qdrant
    for filters, query in itertools.product(filter_cases(corpus), QUERIES):
        routes_a = make_routes(
            RouteContext(embedded, lambda: Analyzer("stem"), Encoder(FakeEmbedder()))
        )
        routes_b = make_routes(
            RouteContext(remote, lambda: Analyzer("stem"), Encoder(FakeEmbedder()))
        )
        a = routes_a["lexical"].candidates(query, filters, 200)
        b = routes_b["lexical"].candidates(query, filters, 200)
        assert {pid for pid, _ in b} == {pid for pid, _ in a}, (filters, query)
        assert all(score > 0 for _, score in b)


def test_lexical_scores_are_fts5_bm25_with_qdrant_idf(
    store: Store, qdrant: QdrantBackend, corpus
) -> None:
    """Each Qdrant lexical score equals FTS5's BM25 of that passage, term by term, with FTS5's
    own N, document frequencies, lengths and avgdl, and only the IDF replaced by Qdrant's: the
    stated difference is the only one."""
    routes = make_routes(RouteContext(qdrant, lambda: Analyzer("stem"), Encoder(FakeEmbedder())))
    checked = 0
    for filters, query in itertools.product(filter_cases(corpus), QUERIES):
        terms = routes["lexical"].terms(query, filters)  # type: ignore[attr-defined]
        found = qdrant.lexical_candidates(terms, filters, 10)
        rows = qdrant.passages([pid for pid, _ in found])
        for pid, score in found:
            ex = qdrant.explain_lexical(terms, rows[pid], str(filters.audience))
            by_hand = sum(
                qdrant_idf(ex.passages, t.document_frequency) * t.contribution / t.idf
                for t in ex.terms
                if t.tf
            )
            assert score == pytest.approx(by_hand, rel=1e-5), (pid, query, filters)
            checked += 1
    assert checked > 100


def test_no_staff_passage_in_any_public_result(store: Store, qdrant: QdrantBackend, corpus) -> None:
    staff = {
        p.passage_id
        for d in corpus.documents
        if d.access == "staff"
        for p in corpus.passages[corpus.key(d)]
    }
    assert staff
    remote = pipeline(qdrant)
    for query, route in itertools.product(QUERIES, ["lexical", "dense", "hybrid"]):
        for day in (None, date(2025, 6, 1), date(2026, 2, 1)):
            result = remote.run(
                SearchRequest(query, k=50, route=route, filters=Filters(as_of=day), depth=50)
            )
            assert not {h.passage_id for h in result.hits} & staff
            assert (
                not {pid for ranking in result.trace.routes.values() for pid, _ in ranking} & staff
            )


def test_a_staff_document_never_changes_a_public_lexical_score(
    store: Store, qdrant: QdrantBackend
) -> None:
    remote = pipeline(qdrant)

    def public_scores() -> list[list[tuple[str, float]]]:
        return [
            [
                (h.passage_id, h.score)
                for h in remote.run(
                    SearchRequest(q, k=20, route="lexical", filters=Filters(as_of=date(2026, 2, 1)))
                ).hits
            ]
            for q in QUERIES
        ]

    before = public_scores()
    secret = Document("secret", "1", "Secret", "en", "staff")
    text = "refund refund parcel garantie retour late delivery week staff carte"
    passage = Passage("secret@v1#s0", "secret", "1", "s0", "text", text, 0)
    body = Analyzer("stem").body(text, "en")
    qdrant.write_document(secret, [passage], [body], FakeEmbedder(dim=32).encode_passages([text]))
    assert public_scores() == before
    assert any(before)
    staff = SearchRequest("refund parcel", k=50, route="lexical", filters=Filters(audience="staff"))
    assert "secret@v1#s0" in {h.passage_id for h in remote.run(staff).hits}


def test_writes_go_to_sqlite_then_qdrant_and_stale_points_go(
    store: Store, qdrant: QdrantBackend, corpus
) -> None:
    d = next(d for d in corpus.documents if len(corpus.passages[corpus.key(d)]) > 1)
    k = corpus.key(d)
    shorter = corpus.passages[k][:1]
    qdrant.write_document(d, shorter, corpus.bodies[k][:1], corpus.vectors[k][:1])
    report = qdrant.verify()
    assert not (report.missing or report.extra or report.mismatched), report.lines()
    assert qdrant.collection.count() == store.passages.count()
    qdrant.delete_document(d.doc_id, d.version)
    report = qdrant.verify()
    assert not (report.missing or report.extra or report.mismatched), report.lines()
    assert qdrant.collection.count() == store.passages.count()
    # a tiny corpus's average length moves more than 5 % with one document: sync re-weights
    qdrant.sync()
    assert qdrant.verify().ok


def test_a_failed_qdrant_write_leaves_sqlite_written_and_sync_repairs(
    store: Store, qdrant: QdrantBackend, corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = qdrant.collection.upsert
    calls = {"n": 0}

    def flaky(points, lengths) -> None:  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            raise ConnectionError("injected: Qdrant went away")
        real(points, lengths)

    monkeypatch.setattr(qdrant.collection, "upsert", flaky)
    new = Document("big", "1", "Big", "en", "public")
    texts = [f"refund parcel number {i}" for i in range(12)]
    passages = [
        Passage(f"big@v1#s{i}", "big", "1", f"s{i}", "text", t, i) for i, t in enumerate(texts)
    ]
    bodies = [Analyzer("stem").body(t, "en") for t in texts]
    with pytest.raises(PartialWriteError, match="holds 7 of 12 points of big v1"):
        qdrant.write_document(new, passages, bodies, FakeEmbedder(dim=32).encode_passages(texts))
    assert store.passages.count() == sum(len(v) for v in corpus.passages.values()) + 12
    report = qdrant.verify()
    assert report.missing == sorted(f"big@v1#s{i}" for i in range(7, 12))
    monkeypatch.setattr(qdrant.collection, "upsert", real)
    repaired, changed = qdrant.sync()
    # 12 short passages move the average length: the other points are re-weighted too
    assert changed == 5 + len(repaired.stale_lengths)
    assert qdrant.verify().ok


@pytest.mark.parametrize("audience", ["public", "staff"])
def test_given_passages_score_as_in_qdrants_own_lexical_list(
    qdrant: QdrantBackend, audience: str
) -> None:
    """Score fusion runs on Qdrant: a candidate's lexical score is the one Qdrant's own
    lexical list gives it (the same sparse query, restricted to the candidates' ids)."""
    routes = pipeline(qdrant).routes
    filters = Filters(audience=audience)
    for query in QUERIES:
        terms = routes["lexical"].terms(query, filters)  # type: ignore[attr-defined]
        listed = dict(qdrant.lexical_candidates(terms, filters, 50))
        scored = qdrant.lexical_scores(terms, audience, [*listed, "no-such@v1#x"])
        assert set(scored) == set(listed)
        for pid, score in listed.items():
            assert scored[pid] == pytest.approx(score, rel=1e-6)
        for fusion in ("learned", "convex"):
            result = pipeline(qdrant).run(SearchRequest(query, filters=filters, fusion=fusion))
            assert result.trace.fusion.startswith(fusion) and result.trace.candidates


WHOLE_TABLES = ("passages", "vectors", "documents", "embedding_cache", "point_ids")


def whole_table_reads(db: Path, statements: list[str]) -> list[str]:
    """The statements among ``statements`` that read a whole table of the collection, by
    SQLite's own query plan: a full scan of a passage, vector, document or embedding-cache
    table (or of an index over one), an FTS5 table read without MATCH, or an fts5vocab table
    read other than by one term (``term = ?``, the O(vocabulary) statistics)."""
    import sqlite3

    connection = sqlite3.connect(db)
    aliases = {"p": "passages", "v": "vectors", "d": "documents", "m": "point_ids"}
    whole = []
    for sql in statements:
        if not sql.lstrip().upper().startswith("SELECT"):
            continue
        for row in connection.execute(f"EXPLAIN QUERY PLAN {sql}"):
            detail = str(row[3])
            words = detail.split()
            if words[0] != "SCAN":
                continue
            table = aliases.get(words[1], words[1])
            vocabulary = table.endswith(("_vocab", "_instance"))
            if (
                table in WHOLE_TABLES
                or (vocabulary and "INDEX 1:" not in detail)
                or (not vocabulary and "VIRTUAL TABLE" in detail and ":M" not in detail)
            ):
                whole.append(f"{sql}  [{detail}]")
    connection.close()
    return whole


@pytest.mark.parametrize("exact", [None, False])
@pytest.mark.parametrize("kind", ["local", "edge"])
def test_a_fresh_search_node_reads_no_whole_table(
    tmp_path: Path, kind: str, exact: bool | None
) -> None:
    """A process that opens a Qdrant-backed index and searches, assesses and asks reads the
    rows it names and O(vocabulary) statistics, never every passage, vector or posting; with
    HNSW (``exact=False``) too, whose candidates are rescored from their SQLite vectors."""
    from support import FILES, write_files

    import kbsearch
    from kbsearch.backends.qdrant.target import QdrantTarget

    docs = write_files(tmp_path / "docs", FILES)
    where = str(tmp_path / kind)
    place = {"url": where} if kind == "local" else {"path": where}
    target = QdrantTarget(**place, exact=exact)  # type: ignore[arg-type]
    db = tmp_path / "kb.db"
    with kbsearch.open_kb(db, create=True, embedder=FakeEmbedder(), qdrant=target) as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv").ok
    statements: list[str] = []
    # a fresh process: nothing cached; the index records its Qdrant target
    with kbsearch.open_kb(db, embedder=FakeEmbedder()) as kb:
        assert type(kb.backend).__name__ == "QdrantBackend"
        with kb.store.database.tracing(statements.append):
            day = Filters(as_of=date(2026, 6, 1))
            hits = kb.search("lost parcel refund", filters=day)
            assert hits and hits[0].passage_id == "delivery@v1#lost-parcel"
            staff = Filters(audience="staff", as_of=date(2026, 6, 1))
            assert kb.assess("goodwill credit for a late parcel", filters=staff).decision
            answer = kb.ask("is a lost parcel refunded", filters=day)
            assert answer.nearest
    own = [s for s in statements if not s.startswith("--")]
    assert any("FROM passages p WHERE p.passage_id IN" in s for s in own)  # it did read
    assert whole_table_reads(db, own) == []


def test_dense_search_is_exact_up_to_a_size_then_hnsw(
    qdrant: QdrantBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kbsearch.backends.qdrant import backend as module
    from kbsearch.backends.qdrant.target import HNSW_EF

    modes: list[tuple[bool, int | None]] = []
    real = qdrant.collection._search

    def spy(search):  # type: ignore[no-untyped-def]
        if search.using == "dense":
            modes.append((search.exact, search.hnsw_ef))
        return real(search)

    monkeypatch.setattr(qdrant.collection, "_search", spy)
    vector = FakeEmbedder(dim=32).encode_queries(["refund parcel"])[0]
    staff = Filters(audience="staff")
    passages = qdrant.statistics().audiences["staff"].titles.passages
    exact = qdrant.dense_candidates(vector, staff, 5)
    monkeypatch.setattr(module, "EXACT_UP_TO", passages - 1)
    approximate = qdrant.dense_candidates(vector, staff, 5)
    qdrant.exact, qdrant.hnsw_ef = True, 64  # given settings win over the size
    qdrant.dense_candidates(vector, staff, 5)
    qdrant.exact = False
    qdrant.dense_candidates(vector, staff, 5)
    # (an HNSW search may ask twice: unfiltered, then filtered when too few pass)
    assert [m for m, _ in itertools.groupby(modes)] == [
        (True, None),
        (False, HNSW_EF),
        (True, None),
        (False, 64),
    ]
    # below Qdrant's full-scan threshold HNSW search is exhaustive: the same top k, rescored
    # with SQLite's float32 cosines (Qdrant's own differ in the last bits)
    assert [pid for pid, _ in approximate] == [pid for pid, _ in exact]
    assert dict(approximate) == qdrant.dense_scores(vector, [pid for pid, _ in approximate])
    assert [s for _, s in approximate] == pytest.approx([s for _, s in exact], abs=1e-6)


def test_sync_ends_by_letting_the_collection_build_its_indexes(
    store: Store, collection: Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = QdrantBackend(store, collection)
    built: list[int] = []
    monkeypatch.setattr(collection, "optimize", lambda: built.append(collection.count()))
    backend.sync()
    assert built == [store.passages.count()]  # once, after every point is written


def test_a_failed_index_build_is_a_partial_write_and_keeps_the_points(
    store: Store, collection: Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> None:
        raise RuntimeError("injected: no disk space")

    backend = QdrantBackend(store, collection)
    monkeypatch.setattr(collection, "optimize", broken)
    with pytest.raises(PartialWriteError, match="could not build its indexes .*kbsearch sync"):
        backend.sync()
    assert backend.verify().ok


def test_repairing_and_deleting_read_only_the_passages_they_name(
    qdrant: QdrantBackend, store: Store, corpus, tmp_path: Path
) -> None:
    """``points_of`` (what sync re-writes) and ``delete_document`` read the passages,
    documents and vectors they name by key, and give the points the corpus was written with."""
    want = {p.passage_id: p for p in corpus.points()}
    ids = sorted(want)[::3]
    statements: list[str] = []
    with store.database.tracing(statements.append):
        points = qdrant.points_of([*ids, "no-such@v1#x"])
        gone = corpus.documents[0]
        qdrant.delete_document(gone.doc_id, gone.version)
    assert sorted(p.passage_id for p in points) == ids
    for p in points:
        assert p.payload == want[p.passage_id].payload
        assert p.sparse == want[p.passage_id].sparse
        np.testing.assert_array_equal(p.dense, want[p.passage_id].dense)
    own = [s for s in statements if not s.startswith("--")]
    assert whole_table_reads(tmp_path / "kb.db", own) == []
    left = {p.passage_id for p in qdrant.collection.points()}
    assert left == set(want) - {p.passage_id for p in corpus.passages[corpus.key(gone)]}


def test_hnsw_search_names_its_passages_from_sqlite_not_the_payload(
    qdrant: QdrantBackend, store: Store, corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sync records every point's passage row; writes and deletes keep it; an HNSW search then
    reads no passage id from Qdrant's payload."""
    assert store.point_ids.count() == store.passages.count() > 0
    asked: list[list[str]] = []
    monkeypatch.setattr(
        qdrant.collection, "passage_ids_of", lambda ids: asked.append(list(ids)) or {}
    )
    qdrant.exact = False
    vector = FakeEmbedder(dim=32).encode_queries(["refund parcel"])[0]
    staff = Filters(audience="staff", as_of=date(2025, 7, 1))
    assert qdrant.dense_candidates(vector, staff, 5) and asked == []
    gone = corpus.documents[0]
    qdrant.delete_document(gone.doc_id, gone.version)
    assert store.point_ids.count() == store.passages.count()
    texts = ["refund parcel week", "gift card price"]
    new = Document(doc_id="new", version="1", title="New", language="en", access="public")
    passages = [
        Passage(f"new@v1#s{i}", "new", "1", f"s{i}", "text", t, i) for i, t in enumerate(texts)
    ]
    bodies = [Analyzer("stem").body(t, "en") for t in texts]
    qdrant.write_document(new, passages, bodies, FakeEmbedder(dim=32).encode_passages(texts))
    assert store.point_ids.count() == store.passages.count()
    assert qdrant.dense_candidates(vector, staff, 5) and asked == []


def test_the_lexical_route_names_its_passages_from_sqlite(
    qdrant: QdrantBackend, store: Store, corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lexical candidates and scores read no passage id from the payload once sync recorded
    the point ids; a file without them (indexed before) gets the same from the payload."""
    import uuid

    from kbsearch.backends.qdrant.points import point_id

    public = Filters(as_of=date(2025, 7, 1))
    terms = pipeline(qdrant).routes["lexical"].terms("refund parcel week", public)  # type: ignore[attr-defined]
    asked: list[list[str]] = []
    real = qdrant.collection.passage_ids_of

    def spy(ids):  # type: ignore[no-untyped-def]
        asked.append(list(ids))
        return real(ids)

    monkeypatch.setattr(qdrant.collection, "passage_ids_of", spy)
    found = qdrant.lexical_candidates(terms, public, 50)
    scores = qdrant.lexical_scores(terms, "public", [pid for pid, _ in found])
    assert found and scores and asked == []
    every = [uuid.UUID(point_id(p.passage_id)).bytes for p in corpus.points()]
    store.point_ids.forget(every)
    assert qdrant.lexical_candidates(terms, public, 50) == found and asked
    assert qdrant.lexical_scores(terms, "public", [pid for pid, _ in found]) == scores


def _most_moving(corpus) -> Document:
    """The document whose deletion moves the average passage length the most."""
    lengths = {
        corpus.key(d): [len(b.split()) for b in corpus.bodies[corpus.key(d)]]
        for d in corpus.documents
    }
    total = sum(sum(v) for v in lengths.values())
    count = sum(len(v) for v in lengths.values())

    def moved(d: Document) -> float:
        mine = lengths[corpus.key(d)]
        return abs((total - sum(mine)) / (count - len(mine)) - total / count)

    return max(corpus.documents, key=moved)


def test_after_a_delete_only_the_points_it_moved_are_rewritten(
    qdrant: QdrantBackend, store: Store, corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sync_deletes re-weights the points the deleted passages put out of date (found by a
    payload filter), reads no whole SQLite table and no unfiltered list of points, and runs
    no full sync."""
    gone = _most_moving(corpus)
    qdrant.delete_document(gone.doc_id, gone.version)
    stale = qdrant.verify().stale_lengths
    assert stale  # the delete moved the averages past the tolerance
    listed: list[object] = []
    points = qdrant.collection.points

    def listing(where: object = None) -> list:
        listed.append(where)
        return points(where)  # type: ignore[arg-type]

    def full_sync() -> None:
        raise AssertionError("a full sync after a delete")

    monkeypatch.setattr(qdrant.collection, "points", listing)
    monkeypatch.setattr(qdrant, "sync", full_sync)
    statements: list[str] = []
    with store.database.tracing(statements.append):
        assert qdrant.sync_deletes() == len(stale)
    assert listed and None not in listed
    own = [s for s in statements if not s.startswith("--")]
    assert whole_table_reads(tmp_path / "kb.db", own) == []
    monkeypatch.undo()
    assert qdrant.verify().ok
    assert qdrant.statistics().generation == store.database.generation()


def test_after_a_delete_a_collection_with_other_drift_gets_the_full_sync(
    qdrant: QdrantBackend, corpus
) -> None:
    """A point an earlier failure lost (the count differs from SQLite's passages): the full
    sync puts it back, as the sync after every delete did."""
    lost = corpus.passages[corpus.key(corpus.documents[1])][0].passage_id
    qdrant.collection.delete([lost])
    gone = corpus.documents[0]
    qdrant.delete_document(gone.doc_id, gone.version)
    assert lost in qdrant.verify().missing
    assert qdrant.sync_deletes() >= 1
    assert qdrant.verify().ok
