"""The reranking stage: order by a pair scorer, within a time budget, never adding or losing a
passage, and reporting what it did."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import pytest

from kbsearch.errors import InvalidArgumentError
from kbsearch.filters import Filters
from kbsearch.rerank.stage import RerankReport, RerankStage

TEXTS = {"a": "apple pie", "b": "banana bread", "c": "cherry cake", "d": "date loaf"}


def texts(ids: Sequence[str], filters: Filters) -> dict[str, str]:
    return {pid: TEXTS[pid] for pid in ids if pid in TEXTS}


def by_length(pairs: Sequence[tuple[str, str]]) -> list[float]:
    return [float(len(text)) for _, text in pairs]


RANKED = [("a", 4.0), ("b", 3.0), ("c", 2.0), ("d", 1.0)]


def ticking(*times: float) -> Iterator[float]:
    """A clock that returns ``times`` in order, then the last one for ever."""
    yield from times
    while True:
        yield times[-1]


def test_reorders_the_head_by_the_scorer_and_reports_it() -> None:
    stage = RerankStage(by_length, texts, reranker="fake", top_n=3)
    out, report = stage.apply_reported("q", RANKED, Filters())
    # a 9, b 12, c 11 chars; d is below top_n and keeps its place and its score
    assert out == [("b", 12.0), ("c", 11.0), ("a", 9.0), ("d", 1.0)]
    assert (report.reranker, report.top_n, report.candidates, report.scored) == ("fake", 3, 3, 3)
    assert not report.stopped and report.elapsed_ms >= 0
    assert report.scores == (("b", 12.0), ("c", 11.0), ("a", 9.0))
    assert report.score_of("c") == 11.0 and report.score_of("d") is None
    assert stage.apply("q", RANKED, Filters()) == out


def test_ties_keep_the_previous_order() -> None:
    stage = RerankStage(lambda pairs: [1.0] * len(pairs), texts)
    assert [pid for pid, _ in stage.apply("q", RANKED, Filters())] == ["a", "b", "c", "d"]


def test_budget_stops_when_not_one_more_pair_fits() -> None:
    # start 0; the first batch (2 pairs) runs from 0.0 to 0.4 s: 0.2 s a pair; at 0.4 s,
    # 0.1 s of the 0.5 s budget is left: not one pair fits
    clock = ticking(0.0, 0.0, 0.4, 0.4)
    stage = RerankStage(by_length, texts, budget_ms=500, clock=lambda: next(clock))
    out, report = stage.apply_reported("q", RANKED, Filters())
    assert report.stopped and report.scored == 2 and report.candidates == 4
    # a and b scored; c and d keep their fused order and scores after them: nothing lost
    assert out == [("b", 12.0), ("a", 9.0), ("c", 2.0), ("d", 1.0)]


def test_batches_are_sized_by_the_time_left() -> None:
    calls: list[int] = []

    def counted(pairs: Sequence[tuple[str, str]]) -> list[float]:
        calls.append(len(pairs))
        return by_length(pairs)

    # a first batch of 1 pair in 0.1 s; 0.15 s left of 0.25 s: one more pair; then 0.05 s
    clock = ticking(0.0, 0.0, 0.1, 0.1, 0.2, 0.2)
    stage = RerankStage(counted, texts, budget_ms=250, first_batch=1, clock=lambda: next(clock))
    out, report = stage.apply_reported("q", RANKED, Filters())
    assert calls == [1, 1] and report.stopped and report.scored == 2
    assert out == [("b", 12.0), ("a", 9.0), ("c", 2.0), ("d", 1.0)]
    calls.clear()
    # 0.1 s a pair, 0.4 s left of 0.5 s: the 3 other pairs in one batch (at most `batch`)
    clock = ticking(0.0, 0.0, 0.1, 0.1, 0.4)
    stage = RerankStage(counted, texts, budget_ms=500, first_batch=1, clock=lambda: next(clock))
    out, report = stage.apply_reported("q", RANKED, Filters())
    assert calls == [1, 3] and not report.stopped and report.scored == 4
    assert [pid for pid, _ in out] == ["b", "c", "a", "d"]


def test_budget_spent_before_the_first_batch_keeps_the_whole_order() -> None:
    clock = ticking(0.0, 2.0)  # reading the texts took 2 s of a 500 ms budget
    stage = RerankStage(by_length, texts, budget_ms=500, clock=lambda: next(clock))
    out, report = stage.apply_reported("q", RANKED, Filters())
    assert out == RANKED and report.stopped and report.scored == 0 and report.scores == ()


def test_never_adds_and_keeps_unreadable_passages() -> None:
    ranked = [("a", 3.0), ("hidden", 2.5), ("b", 2.0)]
    seen: list[tuple[str, str]] = []

    def scorer(pairs: Sequence[tuple[str, str]]) -> list[float]:
        seen.extend(pairs)
        return by_length(pairs)

    out, report = RerankStage(scorer, texts).apply_reported("q", ranked, Filters())
    assert [pid for pid, _ in out] == ["b", "a", "hidden"]  # the same set, nothing added
    assert {pid for pid, _ in out} == {pid for pid, _ in ranked}
    assert [text for _, text in seen] == ["apple pie", "banana bread"]
    assert report.candidates == 2


@pytest.mark.parametrize("bad", [lambda p: [1.0], lambda p: [math.nan] * len(p)])
def test_a_broken_scorer_is_an_error(bad: object) -> None:
    with pytest.raises(ValueError, match="not finite"):
        RerankStage(bad, texts).apply("q", RANKED, Filters())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "settings",
    [
        {"top_n": 0},
        {"batch": 0},
        {"first_batch": 0},
        {"top_n": 2.5},
        {"budget_ms": 0},
        {"budget_ms": math.inf},
    ],
)
def test_bad_settings(settings: dict[str, object]) -> None:
    with pytest.raises(InvalidArgumentError, match="rerank"):
        RerankStage(by_length, texts, **settings)  # type: ignore[arg-type]


def test_report_is_a_record() -> None:
    report = RerankReport("x", 3, 100.0, 2, 1, True, 5.0, (("a", 1.0),))
    assert report.score_of("a") == 1.0 and report.score_of("b") is None
