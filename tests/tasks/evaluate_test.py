"""Evaluating a knowledge base on a question set (kbsearch.tasks.evaluate)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import FIXTURES_ROOT, LengthReranker, indexed_kb

import kbsearch
from kbsearch.errors import (
    EvaluationError,
    InvalidArgumentError,
    OptionConflictError,
)
from kbsearch.evaluation.formats import load_questions
from kbsearch.filters import Filters
from kbsearch.rerank.rerankers import RerankSettings
from kbsearch.tasks.evaluate import (
    check_search_options,
    evaluate_kb,
    index_corpus,
    search_function,
    unreachable,
)

BEIR = FIXTURES_ROOT / "eval" / "beir"


def test_index_corpus_only_when_empty_then_evaluate(tmp_path: Path) -> None:
    questions = load_questions(BEIR)
    with kbsearch.open_kb(tmp_path / "b.db", create=True, embedder="none") as kb:
        first = index_corpus(kb, questions)
        assert first is not None and first.added > 0
        assert index_corpus(kb, questions) is None
        assert unreachable(kb, questions) == []
        result = evaluate_kb(kb, questions, ["lexical"], 2, depth=5)
    assert result.routes["lexical"].evaluation.evaluated == 2


def test_the_passage_before_the_first_heading_is_reachable_as_section_empty(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("returns", "shipping"):
        (docs / f"{name}.md").write_text(
            f"---\naccess: public\n---\n# {name}\n\nThe first words of {name}.\n\n"
            "## Opened items\n\nOpened items go back within 14 days.\n"
        )
    rows = [
        {"id": "top", "question": "How long?", "relevant": [{"doc_id": "returns", "section": ""}]},
        {"id": "typo", "question": "Open?", "relevant": [{"doc_id": "shipping", "section": "Op"}]},
    ]
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with kbsearch.open_kb(tmp_path / "r.db", create=True, embedder="none") as kb:
        kb.index([docs])
        found = unreachable(kb, load_questions(path))
    assert [(u.qid, u.reason) for u in found] == [("typo", "no such section")]


def test_index_corpus_needs_a_corpus(tmp_path: Path) -> None:
    questions = load_questions(FIXTURES_ROOT / "eval" / "policy_questions.jsonl")
    with (
        kbsearch.open_kb(tmp_path / "p.db", create=True, embedder="none") as kb,
        pytest.raises(EvaluationError, match="no corpus"),
    ):
        index_corpus(kb, questions)


def test_evaluate_kb_checks_its_arguments_before_searching(db: Path) -> None:
    questions = load_questions(BEIR)
    with kbsearch.open_kb(db) as kb, pytest.raises(InvalidArgumentError, match="weight"):
        evaluate_kb(kb, questions, ["lexical"], weights=(0, 0))


def test_the_evaluation_search_gives_the_fusion_settings_to_route_hybrid_only(
    tmp_path: Path,
) -> None:
    settings = {"fusion": "rrf", "rrf_k": 30.0, "weights": (1.0, 0.5)}
    with indexed_kb(tmp_path) as kb:
        search = search_function(kb, **settings)  # type: ignore[arg-type]
        for route in ("lexical", "dense"):
            found = search("lost parcel refund", 5, route, Filters())
            assert found == kb.search("lost parcel refund", k=5, route=route)
        fused = search("lost parcel refund", 5, "hybrid", Filters())
        assert fused == kb.search("lost parcel refund", k=5, **settings)  # type: ignore[arg-type]
        assert fused != kb.search("lost parcel refund", k=5, fusion="rrf")


def test_a_reranked_route_takes_the_fusion_settings_as_its_base_route_does(
    tmp_path: Path, fake_reranker: LengthReranker
) -> None:
    """``lexical+rerank`` is not fused (RRF settings would be refused there); ``hybrid+rerank``
    is hybrid, so it takes them."""
    settings = {"fusion": "rrf", "rrf_k": 30.0, "weights": (1.0, 0.5)}
    query = "lost parcel refund"
    with indexed_kb(tmp_path) as kb:
        search = search_function(kb, rerank=RerankSettings("fake"), **settings)  # type: ignore[arg-type]
        found = search(query, 5, "lexical+rerank", Filters())
        assert found == kb.search(query, k=5, route="lexical", rerank="fake")
        fused = search(query, 5, "hybrid+rerank", Filters())
        assert fused == kb.search(query, k=5, rerank="fake", **settings)  # type: ignore[arg-type]
        with pytest.raises(OptionConflictError, match="needs a reranker"):
            search_function(kb)(query, 5, "hybrid+rerank", Filters())


def test_fusion_settings_count_a_reranked_hybrid_route_as_hybrid() -> None:
    check_search_options(10, fusion="convex", routes=("lexical", "hybrid+rerank"))
    with pytest.raises(OptionConflictError, match="route 'lexical'"):
        check_search_options(10, fusion="convex", routes=("lexical", "lexical+rerank"))


def test_evaluate_kb_refuses_a_reranked_route_without_a_reranker_and_the_reverse(
    db: Path, fake_reranker: LengthReranker
) -> None:
    questions = load_questions(BEIR)
    with kbsearch.open_kb(db) as kb:
        with pytest.raises(OptionConflictError, match="needs a reranker"):
            evaluate_kb(kb, questions, ["lexical+rerank"])
        with pytest.raises(OptionConflictError, match="applies to the routes"):
            evaluate_kb(kb, questions, ["lexical"], rerank=RerankSettings("fake"))
