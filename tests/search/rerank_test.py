"""The reranking stage: order by a pair scorer, within a time budget, never adding a passage."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kbsearch.errors import InvalidArgumentError
from kbsearch.filters import Filters
from kbsearch.search.rerank import RerankStage, cross_encoder_scorer

TEXTS = {"a": "apple pie", "b": "banana bread", "c": "cherry cake", "d": "date loaf"}


def texts(ids: Sequence[str], filters: Filters) -> dict[str, str]:
    return {pid: TEXTS[pid] for pid in ids if pid in TEXTS}


def by_length(pairs: Sequence[tuple[str, str]]) -> list[float]:
    return [float(len(text)) for _, text in pairs]


RANKED = [("a", 4.0), ("b", 3.0), ("c", 2.0), ("d", 1.0)]


def test_reorders_the_head_by_the_scorer() -> None:
    stage = RerankStage(by_length, texts, top_n=3)
    out = stage.apply("q", RANKED, Filters())
    # a 9, b 12, c 11 chars; d is below top_n and keeps its place
    assert out == [("b", 12.0), ("c", 11.0), ("a", 9.0), ("d", 1.0)]
    assert stage.last_scored == 3


def test_ties_keep_the_previous_order() -> None:
    stage = RerankStage(lambda pairs: [1.0] * len(pairs), texts)
    assert [pid for pid, _ in stage.apply("q", RANKED, Filters())] == ["a", "b", "c", "d"]


def test_budget_stops_between_batches() -> None:
    ticks = iter([0.0, 1.0])  # at the start, then before the second batch (1 s later)
    stage = RerankStage(by_length, texts, batch=2, budget_ms=500, clock=lambda: next(ticks))
    out = stage.apply("q", RANKED, Filters())
    assert stage.last_scored == 2  # a and b scored; c and d keep their fused order after them
    assert out == [("b", 12.0), ("a", 9.0), ("c", 2.0), ("d", 1.0)]


def test_never_adds_and_drops_unreadable_passages_from_the_head_only() -> None:
    ranked = [("a", 3.0), ("hidden", 2.5), ("b", 2.0)]
    out = RerankStage(by_length, texts).apply("q", ranked, Filters())
    assert {pid for pid, _ in out} <= {pid for pid, _ in ranked}
    assert [pid for pid, _ in out][:2] == ["b", "a"]


def test_bad_settings_and_missing_model(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidArgumentError):
        RerankStage(by_length, texts, top_n=0)
    with pytest.raises(InvalidArgumentError):
        RerankStage(by_length, texts, budget_ms=0)
    with pytest.raises(InvalidArgumentError, match="no cross-encoder"):
        cross_encoder_scorer(tmp_path / "absent")
