"""Paired significance tests between two systems scored on the same queries.

- Randomization (permutation) test, as recommended for IR by Smucker, Allan & Carterette (2007),
  "A comparison of statistical significance tests for information retrieval evaluation", CIKM:
  under the null hypothesis the two systems' labels are exchangeable per query, so each
  per-query difference ``d_i = a_i - b_i`` has a random sign. The p-value is the share of
  ``R`` random sign assignments whose ``|mean(d)|`` is at least the observed one, with the
  observed assignment counted: ``p = (1 + #{|mean(d*)| >= |mean(d)|}) / (R + 1)`` (two-sided).
- Paired bootstrap (Efron & Tibshirani 1993; Sakai 2006, "Evaluating evaluation metrics based on
  the bootstrap", SIGIR): resample the queries with replacement; the p-value uses the
  differences shifted to mean 0 (the null), ``p = (1 + #{|mean(d* - mean(d))| >= |mean(d)|}) /
  (R + 1)``; the 95% interval of the mean difference is the 2.5/97.5 percentile of the unshifted
  resampled means.

Both are seeded (numpy ``default_rng``) so a p-value can be reproduced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import numpy.typing as npt

from kbsearch.errors import EvaluationError

ALPHA = 0.05
RESAMPLES = 10_000
SEED = 0
_BATCH = 500
_TOLERANCE = 1e-12


@dataclass(frozen=True)
class SignificanceResult:
    """Outcome of a paired test of system A against system B on ``n_queries`` queries.

    ``difference`` is ``mean_a - mean_b``; ``significant`` is ``p_value < alpha``.
    ``ci_low``/``ci_high`` bound the mean difference (bootstrap only, else None).
    """

    test: str
    n_queries: int
    mean_a: float
    mean_b: float
    difference: float
    p_value: float
    resamples: int
    seed: int
    alpha: float
    significant: bool
    ci_low: float | None = None
    ci_high: float | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _differences(a: Sequence[float], b: Sequence[float]) -> npt.NDArray[np.float64]:
    if len(a) != len(b):
        raise EvaluationError(f"paired test needs equal lengths, got {len(a)} and {len(b)}")
    if not a:
        raise EvaluationError("paired test needs at least one query")
    diffs = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if not np.all(np.isfinite(diffs)):
        raise EvaluationError("paired test got non-finite scores")
    return diffs


def _check(resamples: int, alpha: float) -> None:
    if resamples < 1:
        raise EvaluationError(f"resamples must be >= 1, got {resamples}")
    if not 0.0 < alpha < 1.0:
        raise EvaluationError(f"alpha must be in (0, 1), got {alpha}")


def randomization_test(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = 10_000,
    seed: int = 0,
    alpha: float = ALPHA,
) -> SignificanceResult:
    """Two-sided paired randomization test of per-query scores ``a`` vs ``b`` (same order).

    Raises:
        EvaluationError: different lengths, no query, non-finite score, resamples < 1,
            alpha outside (0, 1).
    """
    _check(resamples, alpha)
    diffs = _differences(a, b)
    observed = abs(float(diffs.mean()))
    rng = np.random.default_rng(seed)
    extreme = 0
    done = 0
    while done < resamples:
        size = min(_BATCH, resamples - done)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(size, diffs.size))
        means = np.abs((signs * diffs).mean(axis=1))
        extreme += int(np.count_nonzero(means >= observed - _TOLERANCE))
        done += size
    p_value = (extreme + 1) / (resamples + 1)
    return SignificanceResult(
        test="randomization",
        n_queries=int(diffs.size),
        mean_a=float(np.mean(a)),
        mean_b=float(np.mean(b)),
        difference=float(diffs.mean()),
        p_value=p_value,
        resamples=resamples,
        seed=seed,
        alpha=alpha,
        significant=p_value < alpha,
    )


def bootstrap_test(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = 10_000,
    seed: int = 0,
    alpha: float = ALPHA,
) -> SignificanceResult:
    """Two-sided paired bootstrap test of per-query scores ``a`` vs ``b`` (same order), with
    the 95% percentile interval of the mean difference.

    Raises:
        EvaluationError: as :func:`randomization_test`.
    """
    _check(resamples, alpha)
    diffs = _differences(a, b)
    mean = float(diffs.mean())
    rng = np.random.default_rng(seed)
    boot = np.empty(resamples, dtype=np.float64)
    done = 0
    while done < resamples:
        size = min(_BATCH, resamples - done)
        picks = rng.integers(0, diffs.size, size=(size, diffs.size))
        boot[done : done + size] = diffs[picks].mean(axis=1)
        done += size
    extreme = int(np.count_nonzero(np.abs(boot - mean) >= abs(mean) - _TOLERANCE))
    p_value = (extreme + 1) / (resamples + 1)
    low, high = np.percentile(boot, [2.5, 97.5])
    return SignificanceResult(
        test="bootstrap",
        n_queries=int(diffs.size),
        mean_a=float(np.mean(a)),
        mean_b=float(np.mean(b)),
        difference=mean,
        p_value=p_value,
        resamples=resamples,
        seed=seed,
        alpha=alpha,
        significant=p_value < alpha,
        ci_low=float(low),
        ci_high=float(high),
    )


TESTS: dict[str, Callable[..., SignificanceResult]] = {
    "randomization": randomization_test,
    "bootstrap": bootstrap_test,
}


def paired_test(
    name: str,
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    alpha: float = ALPHA,
) -> SignificanceResult:
    """Run the test registered under ``name`` in :data:`TESTS`.

    Raises:
        EvaluationError: unknown test name, or as the test itself.
    """
    if name not in TESTS:
        raise EvaluationError(f"unknown test {name!r}; known: {', '.join(TESTS)}")
    return TESTS[name](a, b, resamples=resamples, seed=seed, alpha=alpha)
