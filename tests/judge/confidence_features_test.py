"""The abstention confidence's features by hand: the routes' lists and the chosen span."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from support_judge import evidence

from kbsearch.judge.confidence_features import (
    ALL_FEATURES,
    RELATIVE_FEATURES,
    features,
    relative_features,
    span_features,
)
from kbsearch.judge.span import Span


def test_features_by_hand() -> None:
    cos = [0.9, 0.85] + [0.8] * 8 + [0.7] * 10
    values = features(evidence(cos, [4.4, 2.2], (True, False, False)))
    assert set(values) == set(ALL_FEATURES)
    assert values["dense_top"] == 0.9
    assert values["dense_margin"] == pytest.approx(0.05)
    assert values["dense_gap"] == pytest.approx(0.1)  # c1 - c10
    assert values["dense_z"] == pytest.approx((0.9 - 0.75) / 0.05)
    maximum = (2.0 + 1.0 + 1.0) * 2.2  # sum IDF * (k1 + 1)
    assert values["lexical_top"] == pytest.approx(4.4 / maximum)
    assert values["lexical_margin"] == pytest.approx(2.2 / maximum)
    assert values["term_coverage"] == pytest.approx(2.0 / 4.0)
    assert values["unknown_terms"] == pytest.approx(1 / 3)
    assert values["overlap"] == pytest.approx(2 / 10)  # L0, L1 in both top tens
    assert values["top_agree"] == 1.0
    assert values["log_terms"] == pytest.approx(math.log(4))


def test_empty_routes_give_nothing_found_values() -> None:
    values = features(evidence([], [], (False, False, False)))
    assert values["dense_top"] == 0.0 and values["dense_z"] == 0.0
    assert values["lexical_top"] == 0.0 and values["term_coverage"] == 0.0
    assert values["overlap"] == 0.0 and values["top_agree"] == 0.0


def test_span_features_by_hand() -> None:
    values = span_features(0.8, Span(1, 0, 10, 0.7, 0.5, 0.2, 0.5))
    assert values["retrieval_logit"] == pytest.approx(math.log(0.8 / 0.2))
    assert (values["span_score"], values["span_coverage"]) == (0.7, 0.5)
    assert (values["span_margin"], values["span_agree"], values["span_rank"]) == (0.2, 0.5, 1.0)
    none = span_features(0.5, None)
    assert none["retrieval_logit"] == 0.0 and none["span_coverage"] == 0.0


def test_relative_features_by_hand() -> None:
    # cosines 0.9, 0.8, 0.7 (std sqrt(2/300)); the first is a hub: centrality 0.85 against
    # 0.7 and 0.7, so the hub-corrected scores are 0.05, 0.1, 0.0 and the second leads
    base = evidence([0.9, 0.8, 0.7], [6.0, 3.0, 0.0], (True, False, False))
    values = relative_features(replace(base, dense_centrality=(0.85, 0.7, 0.7)))
    assert set(values) == set(RELATIVE_FEATURES)
    std = math.sqrt(2 / 300)
    assert values["dense_local_margin"] == pytest.approx(0.1 / std)
    assert values["lexical_local_z"] == pytest.approx((6 - 3) / math.sqrt(6))
    assert values["lexical_ratio"] == pytest.approx(0.5)
    hub_std = math.sqrt(((0.05 - 0.05) ** 2 + 0.05**2 + 0.05**2) / 3)
    assert values["hub_local_z"] == pytest.approx(0.05 / hub_std)
    assert values["hub_margin"] == pytest.approx(0.05 / hub_std)
    assert values["hub_kept"] == 0.0  # the dense top passage is not first once corrected
    assert values["top_centrality"] == pytest.approx((0.85 - 0.75) / math.sqrt(0.005))


def test_relative_features_without_centralities_or_spread_are_zero() -> None:
    values = relative_features(evidence([0.9], [2.0], (True, False, False)))
    assert values == dict.fromkeys(RELATIVE_FEATURES, 0.0)


def test_lexical_relative_features_are_not_measured_without_the_lexical_side() -> None:
    base = evidence([0.9, 0.8], [6.0, 3.0], (True, False, False))
    values = features(replace(base, lexical_missing=True))
    assert math.isnan(values["lexical_local_z"]) and math.isnan(values["lexical_ratio"])
    assert not math.isnan(values["dense_local_margin"])
