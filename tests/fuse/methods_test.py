"""The fusion seam: ``--fusion`` names a method (checked, with its parameters); RRF stays the
default and unchanged; a score fusion ranks the union of the routes' lists, each candidate
scored in every route and by its heading, exactly as the method ranks those candidates, and
explanations show the parts of its fused score."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import FILES, FakeEmbedder, indexed_kb, write_files

import kbsearch
from kbsearch import embedders
from kbsearch.cli import cli
from kbsearch.errors import InvalidArgumentError, OptionConflictError
from kbsearch.filters import Filters
from kbsearch.fuse.convex import convex_fusion
from kbsearch.fuse.features import CollectionStats
from kbsearch.fuse.learned import fuse_learned
from kbsearch.fuse.methods import fusion_names, parse_fusion
from kbsearch.fuse.rrf import DEFAULT_RRF_K
from kbsearch.index.headings import title_counts
from kbsearch.knowledge_base import KnowledgeBase
from kbsearch.pipeline import SearchRequest

QUERIES = ["lost parcel refund", "return window days", "late parcel goodwill", "items 30"]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    return indexed_kb(tmp_path_factory.mktemp("kb"))


def test_names_and_parameters_are_checked() -> None:
    assert fusion_names() == ("rrf", "convex", "learned")
    assert str(parse_fusion("learned")) == "learned"
    assert str(parse_fusion("convex")) == "convex:alpha=0.6,title=0.2"
    assert dict(parse_fusion("convex:title=0,alpha=0.75").parameters) == {
        "alpha": 0.75,
        "title": 0.0,
    }
    assert str(parse_fusion("rrf")) == "rrf"
    with pytest.raises(InvalidArgumentError, match="choose one of rrf, convex"):
        parse_fusion("cc")
    with pytest.raises(InvalidArgumentError, match="among: alpha, title"):
        parse_fusion("convex:beta=1")
    with pytest.raises(InvalidArgumentError, match="among: none"):
        parse_fusion("rrf:k=3")
    for bad in ("convex:alpha=x", "convex:alpha=-1", "convex:title=nan", "convex:alpha"):
        with pytest.raises(InvalidArgumentError):
            parse_fusion(bad)
    with pytest.raises(InvalidArgumentError, match="unknown fusion 'x'"):
        SearchRequest("q", fusion="x")


def test_convex_alpha_above_one_is_refused(kb: KnowledgeBase) -> None:
    with pytest.raises(InvalidArgumentError, match="alpha must be a finite number from 0 to 1"):
        kb.search("lost parcel", fusion="convex:alpha=2")
    with pytest.raises(InvalidArgumentError, match="alpha must be a finite number from 0 to 1"):
        parse_fusion("convex:alpha=1.5")  # when parsed, as a non-finite value is
    assert parse_fusion("convex:alpha=1").parameters["alpha"] == 1


def test_learned_is_the_default_and_rrf_stays_available(kb: KnowledgeBase) -> None:
    for query in QUERIES:
        default = kb.pipeline.run(SearchRequest(query, k=10))
        named = kb.pipeline.run(SearchRequest(query, k=10, fusion="learned"))
        assert default.hits == named.hits and default.trace.fusion == "learned"
        rrf = kb.pipeline.run(SearchRequest(query, k=10, fusion="rrf"))
        assert rrf.trace.fused is not None and rrf.trace.scored is None


def test_rrf_settings_with_a_score_fusion_are_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="add --fusion rrf"):
        SearchRequest("q", weights=(1.0, 2.0))
    with pytest.raises(InvalidArgumentError, match="add --fusion rrf"):
        SearchRequest("q", rrf_k=60)
    SearchRequest("q", weights=(1.0, 2.0), rrf_k=60, fusion="rrf")


@pytest.mark.parametrize("route", ["lexical", "dense"])
@pytest.mark.parametrize(
    "settings",
    [{"fusion": "convex:alpha=0.3"}, {"fusion": "rrf"}, {"rrf_k": 30}, {"weights": (1.0, 2.0)}],
)
@pytest.mark.parametrize("explain", [False, True])
def test_fusion_settings_for_a_route_that_is_not_fused_are_refused(
    route: str, settings: dict[str, object], explain: bool
) -> None:
    with pytest.raises(OptionConflictError, match=f"hybrid route only; route '{route}'"):
        SearchRequest("q", route=route, explain=explain, **settings)  # type: ignore[arg-type]
    SearchRequest("q", route=route, explain=explain, fusion="learned", rrf_k=DEFAULT_RRF_K)


def test_a_fusion_parameter_given_twice_is_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="alpha is given twice"):
        parse_fusion("convex:alpha=0.3,alpha=0.5")
    with pytest.raises(InvalidArgumentError, match="title is given twice"):
        parse_fusion("convex:title=0,alpha=0.3,title=0")


@pytest.mark.parametrize(
    "spec",
    ["convex:", "learned:", "convex:alpha=0.5 0.1", "con vex", "convex:alpha=0.5,",
     "convex:,alpha=0.5", "convex:alpha=0.5,,title=0", "convex:al pha=0.5"],
)  # fmt: skip
def test_a_malformed_fusion_spec_is_refused(spec: str) -> None:
    with pytest.raises(InvalidArgumentError, match="malformed fusion"):
        parse_fusion(spec)


def test_spaces_around_separators_are_allowed() -> None:
    spaced = parse_fusion(" convex : alpha = 0.5, title=0.1 ")
    assert spaced == parse_fusion("convex:alpha=0.5,title=0.1")


def test_the_title_weight_is_from_0_to_1() -> None:
    assert parse_fusion("convex:alpha=1,title=1").parameters["title"] == 1
    with pytest.raises(InvalidArgumentError, match="title must be a finite number from 0 to 1"):
        parse_fusion("convex:alpha=1,title=1.5")


@pytest.mark.parametrize("audience", ["public", "staff"])
@pytest.mark.parametrize("query", QUERIES)
def test_convex_ranks_the_scored_union(kb: KnowledgeBase, query: str, audience: str) -> None:
    filters = Filters(audience=audience)
    spec = "convex:alpha=0.6,title=0.3"
    result = kb.pipeline.run(SearchRequest(query, k=10, depth=3, filters=filters, fusion=spec))
    trace = result.trace
    assert trace.fusion == spec and trace.fused is None and trace.candidates is not None
    listed = {pid for ranking in trace.routes.values() for pid, _ in ranking}
    assert {c.passage_id for c in trace.candidates} == listed  # the union of the top lists
    for c in trace.candidates:
        assert set(c.scores) >= {"lexical", "dense", "title"}  # scored in every route
        for route, ranking in trace.routes.items():
            if route in c.ranks:
                assert ranking[c.ranks[route] - 1] == (c.passage_id, c.scores[route])
    expected = convex_fusion(trace.candidates, {"lexical": 0.4, "dense": 0.6, "title": 0.3})
    assert [(h.passage_id, h.score) for h in result.hits] == [
        (f.passage_id, f.score) for f in expected[:10]
    ]
    for hit in result.hits:  # each hit's rank in each list that holds it
        for route, at in hit.routes.items():
            assert trace.routes[route][at.rank - 1] == (hit.passage_id, at.score)


def test_convex_without_titles_is_the_two_route_combination(kb: KnowledgeBase) -> None:
    result = kb.pipeline.run(SearchRequest("lost parcel", k=10, fusion="convex:title=0"))
    parts = {tuple(f.parts) for f in result.trace.scored or ()}
    assert parts == {("lexical", "dense")}


@pytest.mark.parametrize("audience", ["public", "staff"])
def test_learned_ranks_the_candidates_with_the_shipped_model(
    kb: KnowledgeBase, audience: str
) -> None:
    filters = Filters(audience=audience)
    for query in QUERIES:
        result = kb.pipeline.run(SearchRequest(query, k=10, filters=filters, fusion="learned"))
        assert result.trace.fusion == "learned" and result.trace.candidates is not None
        stats = CollectionStats(**vars(title_counts(kb.store, audience)))
        expected = fuse_learned(result.trace.candidates, stats)
        assert [(h.passage_id, h.score) for h in result.hits] == [
            (f.passage_id, f.score) for f in expected[:10]
        ]
    hits = kb.search("lost parcel refund", k=3, fusion="learned")
    e = kb.explain("lost parcel refund", hits[0].passage_id, k=3, fusion="learned")
    assert "bias" in e.parts and math.isclose(e.parts_total, hits[0].score, abs_tol=1e-9)


def test_explain_shows_the_parts_of_the_fused_score(kb: KnowledgeBase) -> None:
    spec = "convex:alpha=0.5,title=0.2"
    hits = kb.search("lost parcel refund", k=3, fusion=spec)
    e = kb.explain("lost parcel refund", hits[1].passage_id, k=3, fusion=spec)
    assert e.fusion == spec and e.fused.rank == 2 and not e.rrf
    assert set(e.parts) == {"lexical", "dense", "title"}
    assert math.isclose(e.parts_total, hits[1].score, abs_tol=1e-12)
    assert e.fused.score == hits[1].score and "title" in e.scores
    assert e.to_dict()["parts_total"] == e.parts_total


def test_cli_fusion_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(embedders.EMBEDDERS, "fake", (lambda arg, threads: FakeEmbedder(), "test"))
    docs = write_files(tmp_path / "docs", FILES)
    db = str(tmp_path / "kb.db")
    runner = CliRunner()
    args = ["index", str(docs), "--db", db, "--inventory", str(docs / "inventory.csv")]
    assert runner.invoke(cli, [*args, "--embedder", "fake"]).exit_code == 0
    bad = runner.invoke(cli, ["search", "lost parcel", "--db", db, "--fusion", "cc"])
    assert bad.exit_code == 2 and "choose one of rrf, convex" in bad.output
    ok = runner.invoke(cli, ["search", "lost parcel", "--db", db, "--fusion", "convex"])
    assert ok.exit_code == 0, ok.output
    with kbsearch.open_kb(db) as kb:
        top = kb.search("lost parcel", fusion="convex")[0].passage_id
    assert top in ok.output
    why = runner.invoke(cli, ["explain", "lost parcel", top, "--db", db, "--fusion", "convex"])
    assert why.exit_code == 0, why.output
    assert "hybrid (convex:alpha=0.6,title=0.2): rank 1" in why.output
    assert "its weight x its score normalised over this query's candidates" in why.output
    assert "lexical (score " in why.output and "sum of the parts = " in why.output
    questions = tmp_path / "questions.jsonl"
    row = {"id": "q1", "question": "is a lost parcel refunded", "as_of": "2026-06-01",
           "public_ok": True, "relevant_chunks": ["delivery@v1#lost-parcel"]}  # fmt: skip
    questions.write_text(json.dumps(row) + "\n")
    evaluate = ["eval", str(questions), "--db", db, "--routes", "hybrid", "--json"]
    bad_eval = runner.invoke(cli, [*evaluate, "--fusion", "convex:beta=1"])
    assert bad_eval.exit_code == 2 and "among: alpha, title" in bad_eval.output
    convex = runner.invoke(cli, [*evaluate, "--fusion", "convex"])
    assert convex.exit_code == 0, convex.output
    assert json.loads(convex.stdout)["routes"]["hybrid"]["missed"] == []
