"""Abstention measures on hand-computed cases."""

from __future__ import annotations

import pytest

from kbsearch.evaluation.abstention import abstention, auroc, risk_coverage, summarise_groups


def test_auroc_by_hand() -> None:
    # pairs (answerable, unanswerable): (0.9,0.2) (0.9,0.5) (0.4,0.2) (0.4,0.5) -> 3 of 4 right
    assert auroc([0.9, 0.4, 0.2, 0.5], [True, True, False, False]) == pytest.approx(0.75)
    assert auroc([0.5, 0.5], [True, False]) == pytest.approx(0.5)  # a tie counts one half
    assert auroc([0.1, 0.2], [True, True]) is None


def test_abstention_counts() -> None:
    conf = [0.9, 0.8, 0.3, 0.2, 0.1, 0.6]
    answerable = [True, True, True, False, False, False]
    hit = [True, False, True, False, False, False]
    a = abstention(conf, answerable, hit, 0.5)
    assert (a.abstained, a.unanswerable) == (3, 3)
    assert a.precision == pytest.approx(2 / 3)  # abstained on 0.3 (answerable), 0.2, 0.1
    assert a.recall == pytest.approx(2 / 3)  # 0.6 was answered though unanswerable
    assert a.answered_share == pytest.approx(2 / 3)
    assert a.hit_among_answered == pytest.approx(1 / 2)
    nothing = abstention([0.9], [True], [True], 0.5)
    assert nothing.precision is None and nothing.recall is None


def test_risk_coverage_points() -> None:
    points = risk_coverage([0.9, 0.8, 0.8, 0.1], [True, False, True, False])
    assert points == [
        (0.9, 0.25, 0.0),
        (0.8, 0.75, pytest.approx(1 / 3)),
        (0.1, 1.0, 0.5),
    ]


def test_groups_include_all() -> None:
    items = [
        {"confidence": 0.9, "answerable": True, "hit": True, "kind": "a"},
        {"confidence": 0.1, "answerable": False, "hit": False, "kind": "b"},
    ]
    out = summarise_groups(items, ["kind"], 0.5)
    assert set(out) == {"all", "kind=a", "kind=b"}
    assert out["all"]["auroc"] == 1.0 and out["kind=a"]["auroc"] is None


def test_risk_coverage_chart_is_inline_svg() -> None:
    from kbsearch.evaluation.abstention import risk_coverage_chart

    chart = risk_coverage_chart({"hybrid": risk_coverage([0.9, 0.2], [True, False])})
    assert chart.startswith('<div class="chart"><svg') and "coverage" in chart
