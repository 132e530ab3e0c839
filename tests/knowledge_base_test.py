"""Indexing and searching through the library API: incremental, atomic, filters that cannot
leak, versions, explanations. Uses a fake embedder (no model)."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from support import FILES, INVENTORY, FakeEmbedder, write_files

import kbsearch
from kbsearch.errors import (
    EmbedderMismatchError,
    InvalidArgumentError,
    KnowledgeBaseNotFoundError,
    OutdatedPassagesError,
    PassageNotFoundError,
    QueryError,
)
from kbsearch.knowledge_base import KnowledgeBase
from kbsearch.records import ROUTES, Filters
from kbsearch.store.settings import PASSAGE_RULE

DAY = date(2026, 6, 1)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return write_files(tmp_path / "docs", FILES)


@pytest.fixture
def kb(tmp_path: Path, docs: Path) -> KnowledgeBase:
    kb = kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=FakeEmbedder())
    report = kb.index([docs], inventory=docs / "inventory.csv")
    assert report.ok and report.added == 4
    return kb


def test_search_every_route(kb: KnowledgeBase) -> None:
    for route in ROUTES:
        hits = kb.search("lost parcel refund", route=route, filters=Filters(as_of=DAY))
        assert hits[0].passage_id == "delivery@v1#lost-parcel", route
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1))


def test_passage_text_starts_with_title_and_heading(kb: KnowledgeBase) -> None:
    p = kb.get_passage("delivery@v1#lost-parcel")
    assert p.text.startswith("Delivery\nLost parcel")


@pytest.mark.parametrize("route", ROUTES)
def test_staff_passage_never_reaches_public(kb: KnowledgeBase, route: str) -> None:
    query = "goodwill credit amount late parcel"
    staff = kb.search(query, route=route, k=50, filters=Filters(audience="staff", as_of=DAY))
    assert staff[0].doc_id == "goodwill"
    public = kb.search(query, route=route, k=50, filters=Filters(audience="public", as_of=DAY))
    assert all(h.doc_id != "goodwill" for h in public)
    assert all("25 euros" not in h.text for h in public)
    assert len(public) <= kb.store.passages.count(Filters(audience="public", as_of=DAY))
    with pytest.raises(PassageNotFoundError) as hidden:
        kb.get_passage("goodwill@v1#goodwill-amount", audience="public")
    with pytest.raises(PassageNotFoundError) as missing:
        kb.get_passage("nothing@v1#here", audience="public")
    assert "25" not in str(hidden.value)
    assert str(hidden.value).replace("goodwill@v1#goodwill-amount", "X") == str(
        missing.value
    ).replace("nothing@v1#here", "X")


def test_explain_hidden_is_same_as_missing(kb: KnowledgeBase) -> None:
    with pytest.raises(PassageNotFoundError) as hidden:
        kb.explain("goodwill", "goodwill@v1#goodwill-amount", filters=Filters(as_of=DAY))
    with pytest.raises(PassageNotFoundError) as missing:
        kb.explain("goodwill", "nope@v1#x", filters=Filters(as_of=DAY))
    assert str(hidden.value).split("'")[2] == str(missing.value).split("'")[2]


@pytest.mark.parametrize("route", ROUTES)
def test_as_of_picks_version_on_both_sides(kb: KnowledgeBase, route: str) -> None:
    for day, version in [(date(2026, 3, 31), "1"), (date(2026, 4, 1), "2")]:
        hits = kb.search("return window days", route=route, filters=Filters(as_of=day))
        versions = {h.version for h in hits if h.doc_id == "returns"}
        assert versions == {version}, (day, route)


def test_reindex_unchanged_encodes_nothing(tmp_path: Path, docs: Path) -> None:
    embedder = FakeEmbedder()
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=embedder) as kb:
        kb.index([docs], inventory=docs / "inventory.csv")
        calls = embedder.calls
        report = kb.index([docs], inventory=docs / "inventory.csv")
    assert report.unchanged == 4 and report.added == report.updated == 0
    assert embedder.calls == calls


def test_update_and_prune_remove_old_words_and_vectors(kb: KnowledgeBase, docs: Path) -> None:
    (docs / "delivery.md").write_text(
        "# Delivery\n\n## Late parcel\n\nA late parcel is tracked for 12 days.\n"
    )
    report = kb.index([docs], inventory=docs / "inventory.csv")
    assert report.updated == 1 and report.unchanged == 3
    assert kb.search("refunded", route="lexical", filters=Filters(as_of=DAY)) == []
    with pytest.raises(PassageNotFoundError):
        kb.get_passage("delivery@v1#lost-parcel")
    ids = set(kb.dense_index().table.passage_ids)
    assert "delivery@v1#lost-parcel" not in ids
    assert kb.store.vectors.count() == kb.store.passages.count()
    (docs / "delivery.md").unlink()
    report = kb.index([docs], inventory=docs / "inventory.csv", prune=True)
    assert report.removed == 1
    assert kb.search("late parcel tracked", route="lexical", filters=Filters(as_of=DAY)) == []
    assert kb.store.vectors.count() == kb.store.passages.count()


class SimulatedWriteFailure(Exception):
    """Raised half-way through a document's write (a full disk, a killed process...)."""


class FailingVectors:
    """Vectors whose second row cannot be read: the write fails after its first passage."""

    def __getitem__(self, i: int) -> np.ndarray:
        if i >= 1:
            raise SimulatedWriteFailure(f"row {i}")
        return np.zeros(32)


def test_failed_write_keeps_previous_version(kb: KnowledgeBase) -> None:
    store = kb.store
    before = kb.search("lost parcel", route="lexical", filters=Filters(as_of=DAY))
    docs = {d.document.doc_id: d for d in store.documents.all()}
    doc = docs["delivery"].document
    passages = store.passages.in_document(docs["delivery"].row_id)
    assert len(passages) >= 2  # so that the failure comes after a passage was written
    new = [p.__class__(**{**p.__dict__, "text": "replaced words"}) for p in passages]
    with pytest.raises(SimulatedWriteFailure):
        store.documents.write(doc, new, ["replaced words"] * len(new), FailingVectors())  # type: ignore[arg-type]
    assert kb.search("lost parcel", route="lexical", filters=Filters(as_of=DAY)) == before
    assert kb.search("replaced", route="lexical", filters=Filters(as_of=DAY)) == []


def test_one_bad_file_does_not_stop_the_others(tmp_path: Path, docs: Path) -> None:
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=FakeEmbedder()) as kb:
        report = kb.index([docs], inventory=docs / "inventory.csv")
    assert report.added == 4
    assert [Path(s).name for s, _ in report.failed] == ["broken.pdf"]


def test_default_access_is_staff_and_counted(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "d", {"note.md": "# Note\n\n## Secret\n\nInternal words.\n"})
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        report = kb.index([docs])
        assert report.default_access == 1
        assert kb.search("internal", route="lexical") == []
        assert kb.search("internal", route="lexical", filters=Filters(audience="staff"))


def test_duplicate_doc_version_in_inventory_is_refused(tmp_path: Path, docs: Path) -> None:
    bad = INVENTORY + "delivery.md,returns,Returns policy,1,,,ops,public,en,policy,md\n"
    (docs / "inventory.csv").write_text(bad)
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        with pytest.raises(kbsearch.errors.InventoryError):
            kb.index([docs], inventory=docs / "inventory.csv")
        assert kb.store.passages.count() == 0


@pytest.mark.parametrize(
    "kwargs",
    [{"k": 0}, {"k": -3}, {"route": "sparse"}, {"filters": "staff"}],
)
def test_bad_arguments(kb: KnowledgeBase, kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidArgumentError):
        kb.search("parcel", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("query", ["", "   ", "?!", "x " * 1200])
def test_bad_queries(kb: KnowledgeBase, route: str, query: str) -> None:
    with pytest.raises(QueryError):
        kb.search(query, route=route)


def test_missing_database(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeBaseNotFoundError, match="kbsearch index"):
        kbsearch.open_kb(tmp_path / "missing.db")


def test_empty_knowledge_base_returns_nothing(tmp_path: Path) -> None:
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=FakeEmbedder()) as kb:
        for route in ROUTES:
            assert kb.search("anything", route=route) == []


def test_other_embedder_is_refused(tmp_path: Path, docs: Path) -> None:
    path = tmp_path / "kb.db"
    with kbsearch.open_kb(path, create=True, embedder=FakeEmbedder()) as kb:
        kb.index([docs], inventory=docs / "inventory.csv")
    with kbsearch.open_kb(path, embedder=FakeEmbedder(name="fake:other")) as kb:
        with pytest.raises(EmbedderMismatchError, match="--reembed"):
            kb.search("parcel", route="dense")
        report = kb.index([docs], inventory=docs / "inventory.csv", reembed=True)
        assert report.added == 4
        assert kb.search("parcel", route="dense", filters=Filters(as_of=DAY))


def test_an_index_cut_by_the_old_passage_rule_is_refused_until_rebuilt(
    tmp_path: Path, docs: Path
) -> None:
    path = tmp_path / "kb.db"
    with kbsearch.open_kb(path, create=True, embedder=FakeEmbedder()) as kb:
        kb.index([docs], inventory=docs / "inventory.csv")
        stored = kb.store.database.index_settings()
        assert stored is not None and stored.chunking == PASSAGE_RULE
        legacy = {k: v for k, v in stored.to_dict().items() if k != "chunking"}
        with (
            kb.store.database.transaction()
        ):  # what an index built before the rule had a name holds
            kb.store.database.set_settings({**legacy, "section_level": 2})
    with kbsearch.open_kb(path, embedder=FakeEmbedder()) as kb:
        assert kb.search("parcel", route="lexical", filters=Filters(as_of=DAY))  # still read
        with pytest.raises(OutdatedPassagesError, match="--reembed"):
            kb.index([docs], inventory=docs / "inventory.csv")
        report = kb.index([docs], inventory=docs / "inventory.csv", reembed=True)
        assert report.ok and report.added == 4
        rebuilt = kb.store.database.index_settings()
        assert rebuilt is not None
        assert (rebuilt.chunking, rebuilt.section_level) == (PASSAGE_RULE, 6)


def test_explanation_adds_up(kb: KnowledgeBase) -> None:
    filters = Filters(as_of=DAY)
    hits = kb.search("lost parcel refund", route="hybrid", filters=filters, k=3)
    for hit in hits:
        e = kb.explain("lost parcel refund", hit.passage_id, filters=filters)
        assert e.fused.rank == hit.rank
        assert math.isclose(e.parts_total, hit.score, abs_tol=1e-9)  # the default: learned
        lexical = hit.routes.get("lexical")
        if lexical:
            assert math.isclose(e.bm25.score, lexical.score, abs_tol=1e-9)
            assert e.lexical.rank == lexical.rank


def test_backup_is_a_working_copy(kb: KnowledgeBase, tmp_path: Path) -> None:
    kb.backup(tmp_path / "copy.db")
    with kbsearch.open_kb(tmp_path / "copy.db") as copy:
        assert copy.stats()["passages"] == kb.stats()["passages"]


def test_lexical_only_index_refuses_dense_clearly(tmp_path: Path, docs: Path) -> None:
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        kb.index([docs], inventory=docs / "inventory.csv")
        assert kb.search("parcel", route="lexical", filters=Filters(as_of=DAY))
        for route in ("dense", "hybrid"):
            with pytest.raises(InvalidArgumentError, match="route=lexical"):
                kb.search("parcel", route=route)


def test_failed_reembed_keeps_the_index(tmp_path: Path, docs: Path) -> None:
    path = tmp_path / "kb.db"
    with kbsearch.open_kb(path, create=True, embedder=FakeEmbedder()) as kb:
        kb.index([docs], inventory=docs / "inventory.csv")
    with kbsearch.open_kb(path, embedder="no-such-embedder") as kb:
        with pytest.raises(kbsearch.errors.EmbedderUnavailableError):
            kb.index([docs], inventory=docs / "inventory.csv", reembed=True)
        assert kb.store.passages.count() > 0


def test_staff_text_moves_no_public_score_or_explanation(tmp_path: Path, docs: Path) -> None:
    """Public BM25 statistics count only public passages: adding a staff document that
    contains the query's words changes no public score, and a public explanation's document
    frequencies do not reveal words that only staff passages hold."""
    filters = Filters(as_of=DAY)
    with kbsearch.open_kb(tmp_path / "a.db", create=True, embedder="none") as kb:
        kb.index([docs], inventory=docs / "inventory.csv")
        before = kb.search("late parcel zorblax", route="lexical", filters=filters)
        explained = kb.explain("late parcel zorblax", before[0].passage_id, filters=filters)
        (docs / "secret.md").write_text("# Secret\n\n## Zorblax\n\nZorblax late parcel late.\n")
        report = kb.index([docs], inventory=docs / "inventory.csv")
        assert report.added == 1 and report.default_access == 1
        after = kb.search("late parcel zorblax", route="lexical", filters=filters)
        assert after == before
        again = kb.explain("late parcel zorblax", before[0].passage_id, filters=filters)
        assert again.bm25 == explained.bm25
        assert {t.term: t.document_frequency for t in again.bm25.terms}.get("zorblax", 0) == 0
        staff = kb.search("zorblax", route="lexical", filters=Filters(audience="staff", as_of=DAY))
        assert staff and staff[0].doc_id == "secret"


@pytest.mark.parametrize(
    ("as_of", "version"), [("2026-03-31", "1"), (date(2026, 4, 1), "2"), ("2026-04-01", "2")]
)
def test_filters_take_iso_strings(kb: KnowledgeBase, as_of: object, version: str) -> None:
    hits = kb.search("return window", route="lexical", filters=Filters(as_of=as_of))  # type: ignore[arg-type]
    assert {h.version for h in hits if h.doc_id == "returns"} == {version}


@pytest.mark.parametrize("as_of", ["2026-02-30", "01/04/2026", "2026-4-1", 20260401, ""])
def test_bad_dates_raise(as_of: object) -> None:
    with pytest.raises(InvalidArgumentError, match="date"):
        Filters(as_of=as_of)  # type: ignore[arg-type]


def test_doc_filter_list_or_string(kb: KnowledgeBase) -> None:
    for doc_ids in (["delivery"], "delivery", ("delivery",)):
        hits = kb.search(
            "parcel",
            route="dense",
            filters=Filters(as_of=DAY, doc_ids=doc_ids),  # type: ignore[arg-type]
        )
        assert hits and {h.doc_id for h in hits} == {"delivery"}


def test_prune_keeps_documents_indexed_from_elsewhere(tmp_path: Path, docs: Path) -> None:
    other = write_files(
        tmp_path / "other", {"faq.md": "# FAQ\n\n## Opening hours\n\nNine to five.\n"}
    )
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        kb.index([docs], inventory=docs / "inventory.csv")
        kb.index([other], default_access="public")
        report = kb.index([docs / "delivery.md"], inventory=docs / "inventory.csv", prune=True)
        assert report.removed == 0 and report.unchanged == 1
        (other / "faq.md").unlink()
        report = kb.index([docs], inventory=docs / "inventory.csv", prune=True)
        assert report.removed == 1 and report.unchanged == 4
        assert {d.document.doc_id for d in kb.documents()} == {"returns", "goodwill", "delivery"}


def test_inventory_row_without_its_file_is_reported(tmp_path: Path, docs: Path) -> None:
    inventory = docs / "inventory.csv"
    inventory.write_text(inventory.read_text() + "ghost.md,ghost,Ghost,1,,,ops,public,en,faq,md\n")
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        report = kb.index([docs], inventory=inventory)
    assert report.added == 4
    assert [(Path(s).name, r) for s, r in report.failed] == [
        ("ghost.md", "listed in the inventory but not found")
    ]


BILINGUAL = {
    **FILES,
    "inventory.csv": FILES["inventory.csv"]
    + "livraison.md,livraison,Livraison,1,2025-01-01,,ops,public,fr,policy,md\n"
    + "geste.md,geste,Geste commercial,1,2025-01-01,,support,staff,fr,procedure,md\n",
    "livraison.md": "# Livraison\n\n## Colis perdu\n\nUn colis perdu est remboursé.\n",
    "geste.md": "# Geste commercial\n\n## Montant\n\nUn geste de 25 euros pour un colis perdu.\n",
}


def test_explain_names_the_language_filter_that_leaves_a_passage_out(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "docs", BILINGUAL)
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv").ok
        french = Filters(as_of=DAY, language="fr")
        with pytest.raises(PassageNotFoundError, match="language filter \\(fr\\) leaves it out"):
            kb.explain("lost parcel", "delivery@v1#lost-parcel", filters=french)
        with pytest.raises(InvalidArgumentError, match="unknown language 'de'; this index holds"):
            kb.explain("lost parcel", "delivery@v1#lost-parcel", filters=Filters(language="de"))
        # a passage the audience may not see: the one message of missing and hidden passages
        english = Filters(as_of=DAY, language="en")
        with pytest.raises(PassageNotFoundError) as hidden:
            kb.explain("colis", "geste@v1#montant", filters=english)
        with pytest.raises(PassageNotFoundError) as missing:
            kb.explain("colis", "nope@v1#x", filters=english)
        assert "language" not in str(hidden.value)
        assert str(hidden.value).split("'")[2] == str(missing.value).split("'")[2]
        staff = Filters(audience="staff", as_of=DAY, language="en")
        with pytest.raises(PassageNotFoundError, match="is in fr: the language filter"):
            kb.explain("colis", "geste@v1#montant", filters=staff)


def own_statements(kb: KnowledgeBase, call: object) -> list[str]:
    """The SQL statements ``call()`` runs on ``kb``'s store (FTS5's own nested ones, which
    SQLite's trace shows as ``-- ...``, left out)."""
    seen: list[str] = []
    with kb.store.database.tracing(seen.append):
        call()  # type: ignore[operator]
    return [s for s in seen if not s.startswith("--")]


def test_a_warm_search_and_assess_run_at_most_four_statements(kb: KnowledgeBase) -> None:
    filters = Filters(as_of=DAY)
    for _ in range(2):  # warm: the generation's snapshot parts are built
        kb.search("lost parcel refund", filters=filters)
        kb.assess("lost parcel refund", filters=filters)
    searched = own_statements(kb, lambda: kb.search("lost parcel refund", filters=filters))
    assert len(searched) <= 4, searched
    assessed = own_statements(kb, lambda: kb.assess("lost parcel refund", filters=filters))
    assert len(assessed) <= 4, assessed
    # the passages are read once per search (the hits' rows and the evidence's texts)
    assert sum("FROM passages p WHERE p.passage_id IN" in s for s in assessed) == 1


def analysis_calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts, from now on, the lexical route's preparations of the query's terms
    (analysis and statistics) and the query encoder's vector reads (its cache included)."""
    from kbsearch.retrieve import encoder, routes

    counts = {"terms": 0, "vectors": 0}
    prepare, vector = routes.prepare_terms, encoder.QueryEncoder.vector

    def counted_prepare(*args: object, **kwargs: object) -> object:
        counts["terms"] += 1
        return prepare(*args, **kwargs)  # type: ignore[arg-type]

    def counted_vector(self: encoder.QueryEncoder, query: str) -> object:
        counts["vectors"] += 1
        return vector(self, query)

    monkeypatch.setattr(routes, "prepare_terms", counted_prepare)
    monkeypatch.setattr(encoder.QueryEncoder, "vector", counted_vector)
    return counts


@pytest.mark.parametrize("fusion", ["learned", "convex", "rrf"])
def test_a_search_analyses_and_encodes_its_query_once(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch, fusion: str
) -> None:
    filters = Filters(as_of=DAY)
    embedder = kb.embedder()
    assert isinstance(embedder, FakeEmbedder)
    counts = analysis_calls(monkeypatch)
    for name, call in {
        "search": lambda: kb.search("lost parcel refund", filters=filters, fusion=fusion),
        "assess": lambda: kb.assess("lost parcel refund", filters=filters, fusion=fusion),
        "explain": lambda: kb.explain(
            "lost parcel refund", "delivery@v1#lost-parcel", filters=filters, fusion=fusion
        ),
    }.items():
        kb.clear_query_cache()
        counts.update(terms=0, vectors=0)
        before = embedder.calls
        call()
        assert counts == {"terms": 1, "vectors": 1}, (name, counts)
        assert embedder.calls == before + 1, name
