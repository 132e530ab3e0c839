"""Paired significance tests: sanity on identical and clearly different runs."""

from __future__ import annotations

import numpy as np
import pytest

from kbsearch.errors import EvaluationError
from kbsearch.evaluation.significance import bootstrap_test, paired_test, randomization_test

TESTS = [randomization_test, bootstrap_test]


@pytest.mark.parametrize("test", TESTS)
def test_identical_runs_are_not_significant(test) -> None:  # type: ignore[no-untyped-def]
    scores = list(np.random.default_rng(1).random(50))
    result = test(scores, scores, resamples=2000, seed=3)
    assert result.p_value == 1.0
    assert not result.significant
    assert result.difference == 0.0


@pytest.mark.parametrize("test", TESTS)
def test_clearly_better_run_is_significant(test) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(2)
    worse = list(rng.random(60) * 0.5)
    better = [x + 0.3 + 0.05 * rng.random() for x in worse]
    result = test(better, worse, resamples=2000, seed=0)
    assert result.significant
    assert result.p_value < 0.01
    assert result.resamples == 2000
    assert result.difference == pytest.approx(np.mean(better) - np.mean(worse))


@pytest.mark.parametrize("test", TESTS)
def test_noise_is_not_significant(test) -> None:  # type: ignore[no-untyped-def]
    a = [1.0, 0.0] * 20
    b = [0.0, 1.0] * 20  # same mean, opposite per query
    assert not test(a, b, resamples=2000, seed=0).significant


def test_seeded_and_reproducible() -> None:
    rng = np.random.default_rng(5)
    a, b = list(rng.random(30)), list(rng.random(30))
    first = randomization_test(a, b, resamples=1000, seed=7)
    assert randomization_test(a, b, resamples=1000, seed=7) == first
    boot = bootstrap_test(a, b, resamples=1000, seed=7)
    assert boot.ci_low is not None and boot.ci_high is not None
    assert boot.ci_low <= boot.difference <= boot.ci_high


def test_bad_inputs() -> None:
    with pytest.raises(EvaluationError):
        randomization_test([1.0], [1.0, 2.0])
    with pytest.raises(EvaluationError):
        randomization_test([], [])
    with pytest.raises(EvaluationError):
        bootstrap_test([1.0], [0.0], resamples=0)
    with pytest.raises(EvaluationError, match="unknown test"):
        paired_test("t-test", [1.0], [0.0])


def test_comparison_json_difference_is_other_minus_baseline() -> None:
    from kbsearch.evaluation.compare import compare_runs

    qrels = {f"q{i}": {"d1": 1} for i in range(20)}
    worse = {f"q{i}": ["d0", "d1"] for i in range(20)}
    better = {f"q{i}": ["d1", "d0"] for i in range(20)}
    out = compare_runs(qrels, {"base": worse, "new": better}, ["MRR@10"]).to_dict()
    (comparison,) = out["comparisons"]  # type: ignore[misc]
    assert comparison["difference"] == 0.5
    assert comparison["verdict"] == "gain"
    assert all(d == 0.5 for d in comparison["differences"].values())
