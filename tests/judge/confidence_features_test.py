"""The abstention confidence's features by hand: the routes' lists and the chosen span."""

from __future__ import annotations

import math

import pytest
from support_judge import evidence

from kbsearch.judge.confidence_features import FEATURES, features, span_features
from kbsearch.judge.span import Span


def test_features_by_hand() -> None:
    cos = [0.9, 0.85] + [0.8] * 8 + [0.7] * 10
    values = features(evidence(cos, [4.4, 2.2], (True, False, False)))
    assert set(values) == set(FEATURES)
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
