"""Fitting the abstention model: logistic regression, Platt calibration, a default threshold.

Input: one row per (question, condition) searched on a dev half, with its features
(:data:`kbsearch.judge.confidence.FEATURES`), ``label`` (1 when a relevant passage is in the top
k) and the ``group`` (dataset and question) and ``stratum`` (dataset) it belongs to.

1. Weights: every dataset weighs the same, and within a dataset the covered questions
   (``covered`` true) and the uncovered ones weigh half each (the mix the confidence is
   calibrated for).
2. Features standardised (mean, population standard deviation of the rows), then scikit-learn's
   ``LogisticRegression`` (L2, C = ``c``, lbfgs) with those weights.
3. Calibration (Platt, "Probabilistic outputs for support vector machines", 1999): the logits
   of ``folds``-fold cross-validation (folds by group, so a question's conditions stay together)
   are fitted by a one-feature logistic regression ``sigma(a * logit + b)``; ``a`` and ``b``
   are folded into the coefficients, so the shipped model stays one linear formula.
4. Threshold: the highest confidence cut under which the weighted share of abstentions that
   are right (no relevant passage in the top k) is at least ``precision``, on the calibrated
   cross-validated confidences.
4b. With ``answer_precision`` (issue 21's three verdicts): that cut becomes the floor of the
   uncertain band (``uncertain_from``), and the answer threshold is the lowest cut at which
   the weighted share of answered questions with a relevant passage in the top k is at least
   ``answer_precision`` (:func:`choose_answer_threshold`), on the same confidences.
4c. With a :class:`BandRule` (``bands``) instead: bands by what each kind of question sees,
   whatever their mix (:func:`choose_bands`): answered from the lowest cut at which the
   answered *covered* rows are right at least ``answered_precision`` of the time and at most
   ``uncovered_answered`` of the uncovered rows are answered; uncertain from the lowest cut
   at which at most ``uncovered_shown`` of the uncovered rows are shown (answered or
   uncertain). Shares are weighted (step 1) within their kind, so neither cut depends on the
   training mix's share of uncovered questions, which no user's collection shares.
5. With ``dense_only`` feature names, steps 2-3 again over those features alone: the
   sub-model that decides when a search's lexical evidence is missing
   (:attr:`~kbsearch.judge.confidence.ConfidenceModel.dense_only`); it shares the threshold of
   step 4 (both are calibrated on the same mix of questions).

Deterministic (no shuffling; lbfgs), and written with values rounded to 9 significant digits,
so the same table gives the same file byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import InvalidArgumentError
from .confidence import ConfidenceModel
from .confidence_features import FEATURES

DIGITS = 9


@dataclass(frozen=True)
class TrainingRow:
    """One searched (question, condition) with its features."""

    stratum: str  # dataset
    group: str  # dataset and question id: a question's conditions share it
    covered: bool  # its relevant passages were in the index
    label: int  # 1 when a relevant passage is in the top k
    values: Mapping[str, float]


def weights(rows: Sequence[TrainingRow]) -> np.ndarray:
    """Per-row weights (module docstring, step 1), summing to the number of strata."""
    out = np.zeros(len(rows))
    totals: dict[tuple[str, bool], int] = {}
    for r in rows:
        totals[(r.stratum, r.covered)] = totals.get((r.stratum, r.covered), 0) + 1
    for i, r in enumerate(rows):
        halves = sum(1 for c in (True, False) if totals.get((r.stratum, c)))
        out[i] = 1.0 / (halves * totals[(r.stratum, r.covered)])
    return out


def _round(value: float) -> float:
    return float(f"{value:.{DIGITS}g}")


def _logistic(x: np.ndarray, y: np.ndarray, w: np.ndarray, c: float) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, solver="lbfgs", max_iter=5000, tol=1e-10)
    model.fit(x, y, sample_weight=w * len(w) / w.sum())
    return model.coef_[0].astype(np.float64), float(model.intercept_[0])


def fold_of(groups: Sequence[str], folds: int) -> np.ndarray:
    """Fold index per row: groups in sorted order dealt round-robin (no randomness)."""
    order = {g: i % folds for i, g in enumerate(sorted(set(groups)))}
    return np.array([order[g] for g in groups])


def choose_threshold(
    confidence: np.ndarray, label: np.ndarray, w: np.ndarray, precision: float
) -> float:
    """The highest cut ``t`` (one of the confidences) with weighted abstention precision
    ``sum w[conf < t and label 0] / sum w[conf < t] >= precision``; 0 when none reaches it."""
    best = 0.0
    for t in np.unique(confidence):
        below = confidence < t
        if not below.any():
            continue
        share = w[below & (label == 0)].sum() / w[below].sum()
        if share >= precision:
            best = max(best, float(t))
    return best


def choose_answer_threshold(
    confidence: np.ndarray, label: np.ndarray, w: np.ndarray, precision: float
) -> float:
    """The lowest cut ``t`` (one of the confidences) with weighted answer precision
    ``sum w[conf >= t and label 1] / sum w[conf >= t] >= precision``; 1 when none reaches it."""
    for t in np.unique(confidence):
        above = confidence >= t
        if w[above & (label == 1)].sum() / w[above].sum() >= precision:
            return float(t)
    return 1.0


@dataclass(frozen=True)
class BandRule:
    """The verdict bands' rule by kind of question (module docstring, step 4c): shares in
    [0, 1] of the dev rows (weighted)."""

    answered_precision: float = 0.7  # answered covered questions whose span is right, at least
    uncovered_answered: float = 0.1  # uncovered questions answered, at most
    uncovered_shown: float = 0.3  # uncovered questions answered or uncertain, at most

    def __post_init__(self) -> None:
        shares = (self.answered_precision, self.uncovered_answered, self.uncovered_shown)
        if not all(0.0 <= v <= 1.0 for v in shares):
            raise InvalidArgumentError("band rule: shares must be in [0, 1]")
        if self.uncovered_answered > self.uncovered_shown:
            raise InvalidArgumentError("band rule: fewer may be answered than shown")

    def describe(self) -> str:
        return (
            f"answered from the lowest cut where answered answerable dev questions are right"
            f" >= {self.answered_precision} and <= {self.uncovered_answered} of dev questions"
            f" whose documents were removed are answered; uncertain from the lowest cut where"
            f" <= {self.uncovered_shown} of those are shown (CV)"
        )


def choose_bands(
    confidence: np.ndarray, label: np.ndarray, covered: np.ndarray, w: np.ndarray, rule: BandRule
) -> tuple[float, float]:
    """``(threshold, floor)`` by ``rule`` (module docstring, step 4c) over the cuts at the
    rows' confidences: the lowest meeting each condition (1 when none does; the floor at most
    the threshold).

    Args:
        confidence, label, covered, w: per row, the same length: the calibrated
            cross-validated confidence, 1 when its span is right, whether its relevant
            passages were indexed, its weight (:func:`weights`).
    """
    uncovered_total = w[~covered].sum() or 1.0
    threshold = floor = 1.0
    for t in np.unique(confidence)[::-1]:  # from the highest cut down: the lowest that holds
        above = confidence >= t
        shown = w[above & ~covered].sum() / uncovered_total
        answered = w[above & covered].sum()
        right = w[above & covered & (label == 1)].sum()
        precision = right / answered if answered > 0 else 1.0
        if precision >= rule.answered_precision and shown <= rule.uncovered_answered:
            threshold = float(t)
        if shown <= rule.uncovered_shown:
            floor = float(t)
    return threshold, min(floor, threshold)


def _inputs(
    rows: Sequence[TrainingRow], names: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(z, y, w, mean, scale)``: standardised features, labels, weights (steps 1-2)."""
    if len({r.label for r in rows}) < 2:
        raise InvalidArgumentError("abstention training needs both labels")
    try:
        x = np.array([[float(r.values[n]) for n in names] for r in rows], dtype=np.float64)
    except KeyError as exc:
        raise InvalidArgumentError(f"training row lacks feature {exc}") from None
    y = np.array([r.label for r in rows], dtype=np.int64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    if (scale == 0).any():
        constant = [n for n, s in zip(names, scale, strict=True) if s == 0]
        raise InvalidArgumentError(f"constant features cannot be scaled: {', '.join(constant)}")
    return (x - mean) / scale, y, weights(rows), mean, scale


def _calibrated_folds(
    rows: Sequence[TrainingRow], z: np.ndarray, y: np.ndarray, w: np.ndarray, c: float, folds: int
) -> tuple[np.ndarray, float, float]:
    """``(confidences, a, b)``: each row's calibrated cross-validated confidence and the Platt
    parameters (step 3)."""
    fold = fold_of([r.group for r in rows], folds)
    oof = np.zeros(len(rows))
    for f in range(folds):
        train = fold != f
        coef_f, intercept_f = _logistic(z[train], y[train], w[train], c)
        oof[~train] = z[~train] @ coef_f + intercept_f
    a_coef, b = _logistic(oof[:, None], y, w, 1e6)
    a = float(a_coef[0])
    return 1.0 / (1.0 + np.exp(-(a * oof + b))), a, b


def cross_validated(
    rows: Sequence[TrainingRow], names: Sequence[str] = FEATURES, *, c: float = 1.0, folds: int = 5
) -> np.ndarray:
    """Each row's calibrated cross-validated confidence (steps 1-3): what the threshold is
    chosen on, and what a risk-coverage trade-off on dev data reads.

    Raises:
        InvalidArgumentError: as :func:`fit`.
    """
    z, y, w, _, _ = _inputs(rows, names)
    return _calibrated_folds(rows, z, y, w, c, folds)[0]


def fit(
    rows: Sequence[TrainingRow],
    names: Sequence[str] = FEATURES,
    *,
    c: float = 1.0,
    folds: int = 5,
    precision: float = 0.9,
    info: Mapping[str, Any] | None = None,
    dense_only: Sequence[str] = (),
    answer_precision: float | None = None,
    bands: BandRule | None = None,
) -> ConfidenceModel:
    """The calibrated model (module docstring), with a ``dense_only`` sub-model over those
    features when they are given (step 5).

    Raises:
        InvalidArgumentError: fewer than two classes, a feature missing from a row, or a
            feature constant over every row.
    """
    z, y, w, mean, scale = _inputs(rows, names)
    calibrated_oof, a, b = _calibrated_folds(rows, z, y, w, c, folds)
    threshold = choose_threshold(calibrated_oof, y, w, precision)
    floor = None
    rule = f"highest cut with abstention precision >= {precision} on dev (CV)"
    if answer_precision is not None:
        floor = threshold
        threshold = max(floor, choose_answer_threshold(calibrated_oof, y, w, answer_precision))
        rule = (
            f"answered from the lowest cut with answer precision >= {answer_precision} on dev"
            f" (CV); uncertain from the {rule}"
        )
    if bands is not None:
        covered = np.array([r.covered for r in rows])
        threshold, floor = choose_bands(calibrated_oof, y, covered, w, bands)
        rule = bands.describe()
    coef, intercept = _logistic(z, y, w, c)
    record = dict(info or {})
    record |= {
        "rows": len(rows),
        "positives": int(y.sum()),
        "c": c,
        "folds": folds,
        "platt": [_round(a), _round(b)],
        "threshold_rule": rule,
    }
    sub = None
    if dense_only:
        found = fit(rows, dense_only, c=c, folds=folds)
        rule = "the main model's threshold"
        sub = replace(
            found, threshold=_round(threshold), info={**found.info, "threshold_rule": rule}
        )
    return ConfidenceModel(
        dense_only=sub,
        names=tuple(names),
        mean=tuple(_round(v) for v in mean),
        scale=tuple(_round(v) for v in scale),
        coef=tuple(_round(a * v) for v in coef),
        intercept=_round(a * intercept + b),
        threshold=_round(threshold),
        floor=None if floor is None else _round(floor),
        info=record,
    )


def dumps(model: ConfidenceModel) -> str:
    """The model file's text: indented JSON, keys in a fixed order, a final newline."""
    return json.dumps(model.to_dict(), indent=1, ensure_ascii=False) + "\n"
