"""The pipeline: one run gives the hits and the trace explanations read, so search,
search --explain and explain agree for any k, depth and weights; routes come from a registry;
stages are applied after fusion and traced; public searches use public statistics only."""

from __future__ import annotations

import math
import threading
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import FILES, FakeEmbedder, indexed_kb, pages_inventory, write_files

import kbsearch
from kbsearch.backends.sqlite import Snapshot
from kbsearch.cli.explain_text import render_explanation
from kbsearch.errors import InvalidArgumentError
from kbsearch.filters import Filters
from kbsearch.fuse.methods import DEFAULT_FUSION
from kbsearch.knowledge_base import KnowledgeBase
from kbsearch.pipeline import Pipeline, SearchRequest, route_names
from kbsearch.pipeline.request import DEFAULT_WEIGHTS
from kbsearch.ranking.trace import Trace
from kbsearch.records import ROUTES

DAY = date(2026, 6, 1)
QUERIES = ["lost parcel refund", "return window days", "late parcel goodwill", "items 30"]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    return indexed_kb(tmp_path_factory.mktemp("kb"))


def test_routes_come_from_the_registry() -> None:
    assert ROUTES == route_names() == ("lexical", "dense", "hybrid")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.sampled_from(QUERIES),
    route=st.sampled_from(ROUTES),
    k=st.integers(1, 12),
    depth=st.integers(1, 12),
    weights=st.tuples(st.sampled_from([0.0, 0.5, 1.0, 2.0]), st.sampled_from([0.5, 1.0, 3.0])),
    audience=st.sampled_from(["public", "staff"]),
    fusion=st.sampled_from(["rrf", "learned", "convex"]),
)
def test_explain_agrees_with_search(
    kb: KnowledgeBase,
    query: str,
    route: str,
    k: int,
    depth: int,
    weights: tuple[float, float],
    audience: str,
    fusion: str,
) -> None:
    filters = Filters(audience=audience, as_of=DAY)
    if fusion != "rrf":
        weights = DEFAULT_WEIGHTS  # RRF's settings; a score fusion refuses others
    if route != "hybrid":  # a route that is not fused refuses fusion settings
        fusion, weights = DEFAULT_FUSION, DEFAULT_WEIGHTS
    options = {"k": k, "route": route, "depth": depth, "weights": weights, "filters": filters,
               "fusion": fusion}  # fmt: skip
    plain = kb.search(query, **options)  # type: ignore[arg-type]
    hits = kb.search(query, explain=True, **options)  # type: ignore[arg-type]
    assert [(h.passage_id, h.score) for h in hits] == [(h.passage_id, h.score) for h in plain]
    for hit in hits:
        e = kb.explain(query, hit.passage_id, **options)  # type: ignore[arg-type]
        for name, position in (("lexical", e.lexical), ("dense", e.dense)):
            found = hit.routes.get(name)
            assert position is not None
            if found is not None:
                assert (position.rank, position.score) == (found.rank, found.score)
            else:
                assert position.rank is None
        if route == "hybrid":
            assert (e.fused.rank, e.fused.score) == (hit.rank, hit.score)
            total = e.rrf_total if fusion == "rrf" else e.parts_total
            assert math.isclose(total, hit.score, abs_tol=1e-9)
        else:
            assert hit.routes[route].rank == hit.rank
        if e.lexical.score is not None:
            assert math.isclose(e.bm25.score, e.lexical.score, abs_tol=1e-9)


def test_lexical_explain_on_an_index_without_vectors(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "docs", FILES)
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        kb.index([docs], inventory=docs / "inventory.csv")
        filters = Filters(as_of=DAY)
        hits = kb.search("lost parcel", route="lexical", explain=True, filters=filters)
        assert hits and set(hits[0].routes) == {"lexical"}
        e = kb.explain("lost parcel", hits[0].passage_id, filters=filters)
        assert e.dense is None and e.lexical.rank == 1
        assert e.fused.score is None and not e.rrf and not e.parts  # one route: nothing fused
        assert "hybrid" not in render_explanation(e)


class Reverse:
    """A stage that reverses the list (to see stages applied and traced)."""

    name = "reverse"

    def apply(self, query: str, ranked: list, filters: Filters) -> list:
        return list(reversed(ranked))


def test_stages_run_after_fusion_and_are_traced(kb: KnowledgeBase) -> None:
    request = SearchRequest("lost parcel refund", k=3, filters=Filters(as_of=DAY), fusion="rrf")
    plain = Pipeline(kb.backend, kb.routes).run(request)
    staged = Pipeline(kb.backend, kb.routes, [Reverse()]).run(request)
    fused = [(f.passage_id, f.score) for f in plain.trace.fused or ()]
    assert staged.trace.stages[0].input == tuple(fused)
    assert [h.passage_id for h in staged.hits] == [p for p, _ in reversed(fused)][:3]
    assert set(staged.trace.routes) == {"lexical", "dense"}


def test_language_filter_is_checked_and_normalised(kb: KnowledgeBase) -> None:
    with pytest.raises(InvalidArgumentError, match="'french'; this index holds en"):
        kb.search("parcel", route="lexical", filters=Filters(language="french", as_of=DAY))
    upper = kb.search("parcel", route="lexical", filters=Filters(language="EN", as_of=DAY))
    assert upper == kb.search("parcel", route="lexical", filters=Filters(language="en", as_of=DAY))


def test_clamped_term_fills_a_short_list(tmp_path: Path) -> None:
    """Issue 14.15: 6 public passages, 3 holding "warranty" (IDF clamped): the query
    `warranty extension` returns those 3, after the passages matching kept terms."""
    texts = {
        f"p{i}.md": f"# Page {i}\n\n## Part\n\n{body}\n"
        for i, body in enumerate(
            [
                "The warranty covers parts.",
                "A warranty claim needs a receipt.",
                "Our warranty lasts two years.",
                "Direct debit is taken monthly.",
                "Parcels arrive quickly.",
                "Gift cards never expire.",
            ]
        )
    }
    texts["inventory.csv"] = pages_inventory(6)
    docs = write_files(tmp_path / "docs", texts)
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        kb.index([docs], inventory=docs / "inventory.csv")
        hits = kb.search("warranty extension", route="lexical", k=5)
        assert sorted(h.doc_id for h in hits) == ["p0", "p1", "p2"]
        debit = kb.search("warranty debit", route="lexical", k=5)
        assert debit[0].doc_id == "p3" and sorted(h.doc_id for h in debit[1:]) == ["p0", "p1", "p2"]
        assert [h.doc_id for h in kb.search("warranty debit", route="lexical", k=1)] == ["p3"]
        e = kb.explain("warranty extension", hits[0].passage_id, route="lexical", k=5)
        assert math.isclose(e.bm25.score, hits[0].score, abs_tol=1e-12)


def test_staff_language_does_not_stem_public_queries(tmp_path: Path) -> None:
    """Issue 14.3: a staff-only French note adds no French stems to a public query."""
    docs = write_files(tmp_path / "docs", FILES)
    filters = Filters(as_of=DAY)
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        kb.index([docs], inventory=docs / "inventory.csv")
        before = kb.search("30s", route="lexical", filters=filters)
        target = "delivery@v1#lost-parcel"
        terms = kb.explain("30s", target, filters=filters).terms
        (docs / "note.md").write_text(
            "---\nlanguage: fr\n---\n# Note\n\n## Délais\n\nLes retours sous 30 jours.\n"
        )
        report = kb.index([docs], inventory=docs / "inventory.csv")
        assert report.added == 1
        assert kb.search("30s", route="lexical", filters=filters) == before
        assert kb.explain("30s", target, filters=filters).terms == terms == ("30s",)
        staff = Filters(audience="staff", as_of=DAY)
        assert "30" in kb.explain("30s", target, filters=staff).terms
        with pytest.raises(InvalidArgumentError, match="holds en$"):
            kb.search("retours", route="lexical", filters=Filters(language="fr", as_of=DAY))


def test_a_snapshot_part_is_built_once_for_all_threads() -> None:
    snapshot = Snapshot(generation=7)
    built: list[int] = []
    barrier = threading.Barrier(8)

    def build() -> object:
        built.append(1)
        return object()

    results: list[object] = []

    def worker() -> None:
        barrier.wait()
        results.append(snapshot.part("impact", build))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1 and len({id(r) for r in results}) == 1


BILINGUAL = {
    **FILES,
    "inventory.csv": FILES["inventory.csv"]
    + "livraison.md,livraison,Livraison,1,2025-01-01,,ops,public,fr,policy,md\n",
    "livraison.md": "# Livraison\n\n## Délais de livraison\n\n"
    "Un colis perdu est remboursé ; la livraison en Belgique prend cinq jours.\n",
}
ENGLISH = "how long does delivery of a lost parcel take"


def trace_of(kb: KnowledgeBase, query: str, fusion: str, filters: Filters) -> Trace:
    request = SearchRequest(query, k=5, route="hybrid", filters=filters, fusion=fusion)
    return kb.pipeline.run(request).trace


@pytest.mark.parametrize("fusion", ["rrf", "convex", "learned"])
def test_one_language_index_marks_nothing(kb: KnowledgeBase, fusion: str) -> None:
    trace = trace_of(kb, ENGLISH, fusion, Filters(as_of=DAY))
    assert trace.query_language is None
    assert all(not c.not_applicable for c in trace.candidates or ())
    assert all(not f.not_applicable and not f.imputed for f in trace.fused or ())


@pytest.mark.parametrize("fusion", ["rrf", "convex", "learned"])
def test_a_passage_in_another_language_has_lexical_evidence_not_applicable(
    tmp_path: Path, fusion: str
) -> None:
    docs = write_files(tmp_path / "docs", BILINGUAL)
    filters = Filters(as_of=DAY)
    target = "livraison@v1#delais-de-livraison"
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=FakeEmbedder()) as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv").ok
        trace = trace_of(kb, ENGLISH, fusion, filters)
        assert trace.query_language == "en"
        marked = {c.passage_id for c in trace.candidates or () if c.not_applicable}
        marked |= {f.passage_id for f in trace.fused or () if f.not_applicable}
        assert marked == {target}  # the French passage only
        hits = kb.search(ENGLISH, k=10, fusion=fusion, filters=filters)
        hit = next(h for h in hits if h.passage_id == target)
        e = kb.explain(ENGLISH, target, k=10, fusion=fusion, filters=filters)
        assert e.not_applicable == {"lexical": "document in fr, query in en"}
        text = render_explanation(e)
        assert "document in fr, query in en: a low lexical score does not count against it" in text
        assert "fusion reads its" in text and "fused score: the hybrid route's score" in text
        total = e.rrf_total if fusion == "rrf" else e.parts_total
        assert math.isclose(total, hit.score, abs_tol=1e-9)
        own, imputed = e.read["lexical"]
        assert own < imputed  # no English word in the French page: the dense reading counts
        if fusion == "rrf":
            dense_rank = hit.routes["dense"].rank
            assert own == 0.0 and imputed == 1 / (10 + dense_rank)
            assert hit.score == 2 * (1 / (10 + dense_rank))
        else:
            assert math.isclose(e.parts["lexical"], imputed) or fusion == "learned"
        # filtered to English, the search returns one language: nothing is marked
        english = Filters(as_of=DAY, language="en")
        assert trace_of(kb, ENGLISH, fusion, english).query_language is None


# issue 22: on a 24-passage index, `search --k 25 --depth 10` (learned fusion) ranked a passage
# 7th with 1.8908 while `explain --depth 10` (its own k) said rank 10, -1.6055: a hybrid run's
# route lists must not depend on k, so explain reads the search's trace whatever k it is given
TOPICS = ["refund", "parcels", "returns", "delivery", "courier", "gift", "card", "points"]


@pytest.fixture(scope="module")
def wide_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    root = tmp_path_factory.mktemp("wide")
    files = {"inventory.csv": pages_inventory(24)}
    for i in range(24):
        a, b, c = TOPICS[i % 8], TOPICS[(i * 3 + 1) % 8], TOPICS[(i * 5 + 2) % 8]
        files[f"p{i}.md"] = f"# Page {i}\n\n## Part {i}\n\nOur {a} rules cover {b} and {c}.\n"
    docs = write_files(root / "docs", files)
    kb = kbsearch.open_kb(root / "kb.db", create=True, embedder=FakeEmbedder())
    assert kb.index([docs], inventory=docs / "inventory.csv").ok
    return kb


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.sampled_from(["refund parcels returns", "gift card points", "courier delivery"]),
    k=st.integers(1, 30),
    explained_k=st.integers(1, 30),
    depth=st.integers(1, 12),
    fusion=st.sampled_from(["learned", "rrf", "convex"]),
)
def test_explain_reads_the_hybrid_search_trace_whatever_its_k(
    wide_kb: KnowledgeBase, query: str, k: int, explained_k: int, depth: int, fusion: str
) -> None:
    hits = wide_kb.search(query, k=k, depth=depth, fusion=fusion)
    assert len(hits) <= 2 * depth  # the union of two routes' top depth
    longer = wide_kb.search(query, k=30, depth=depth, fusion=fusion)
    assert [(h.passage_id, h.score) for h in longer[:k]] == [(h.passage_id, h.score) for h in hits]
    for hit in hits:
        e = wide_kb.explain(query, hit.passage_id, k=explained_k, depth=depth, fusion=fusion)
        assert (e.fused.rank, e.fused.score) == (hit.rank, hit.score)
        total = e.rrf_total if fusion == "rrf" else e.parts_total
        assert math.isclose(total, hit.score, abs_tol=1e-9)
        for name, position in (("lexical", e.lexical), ("dense", e.dense)):
            found = hit.routes.get(name)
            assert position is not None
            assert position.rank == (found.rank if found else None)


def test_the_issue_case_explain_without_the_search_k(wide_kb: KnowledgeBase) -> None:
    query = "refund parcels returns"
    for hit in wide_kb.search(query, k=25, depth=10):
        e = wide_kb.explain(query, hit.passage_id, depth=10)  # default fusion, default k
        assert (e.fused.rank, e.fused.score) == (hit.rank, hit.score)
        found = hit.routes.get("dense")
        assert e.dense is not None and e.dense.rank == (found.rank if found else None)
