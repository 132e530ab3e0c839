"""Answer or abstain: a calibrated confidence that a relevant passage is in the top 5.

The confidence is a logistic model over features of both routes' ranked lists (Evidence),
fitted and calibrated offline (:mod:`kbsearch.judge.confidence_fit`, script
``benchmarks/train_abstain.py``) and shipped as a small JSON file of coefficients
(``judge/models/abstain.json``):

    confidence = 1 / (1 + exp(-(intercept + sum_i coef_i * (x_i - mean_i) / scale_i)))

It estimates P(a relevant passage is among the top 5 hits | features) (the fused top 5 of
``benchmarks/train_abstain.py``; the same whatever ``k`` a search asks for) for a mix of half
covered and half uncovered questions (the training mix); ``answerable`` is ``confidence >=
threshold`` (:meth:`ConfidenceModel.decide`: the retrieval stage's own cut; with an ``answer``
sub-model, below, the verdict is banded by that sub-model's). Abstention reads the ranked lists
and never reorders them.

The features are :mod:`kbsearch.judge.confidence_features`'s: the retrieval features
(``ALL_FEATURES``, ``features``: the absolute ones of ``FEATURES`` and those read within the
query's own candidate lists, hubness included, of ``RELATIVE_FEATURES``), the dense-only and
lexical ones (``DENSE_FEATURES``, ``LEXICAL_FEATURES``) and the span's (``SPAN_FEATURES``,
``span_features``). A model reads the features its file names (the shipped one: no absolute
cosine or BM25 level, ``benchmarks/train_abstain.py``'s ``MODEL_FEATURES``).

When the lexical evidence is structurally uninformative (``Evidence.lexical_missing``: a search
of several languages whose dense top passage is in another language than the query,
:mod:`kbsearch.retrieve.crosslang`, so the question's words cannot be expected in its answer),
the ``LEXICAL_FEATURES`` are not measured (NaN) and the model's ``dense_only`` sub-model
decides: the same formula over the ``DENSE_FEATURES`` alone, fitted and calibrated on the same
dev rows. (Without a sub-model a NaN feature stands at its training mean.)

The confidence every search and answer shows is a second stage, the model's ``answer``
sub-model (:meth:`ConfidenceModel.judge`): the same formula over the ``ANSWER_FEATURES``, the
retrieval confidence's logit beside what the span chosen among the top passages adds
(``span_features``: its score against the question, how much of the question it covers,
how far it leads another passage's best span, its passage's rank). It estimates P(the shown span
answers | features), fitted on the dev halves of PIAF and covid_faq_en with each question
searched as is and with its relevant documents removed (``benchmarks/answer_tune.py``; label:
the span holds a gold answer, or lies in a relevant passage where there are no gold strings).
Its threshold and floor are the verdicts' bands (:attr:`ConfidenceModel.bands`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError
from .confidence_features import Evidence, features, span_features
from .span import Span
from .verdict import DONT_SAY, Decision, check_threshold

MODEL_RESOURCE = "abstain.json"


@dataclass(frozen=True)
class ConfidenceModel:
    """A standardised logistic model over named features (module docstring's formula).

    ``threshold`` is the default minimum confidence to answer; ``floor`` the default lowest
    confidence of the uncertain band below it (``None``: no band; file key
    ``uncertain_from``); ``info`` records how the
    model was made (training data, sizes, calibration, the threshold's rule); ``dense_only``:
    the sub-model that decides when the evidence's lexical side is missing (``None``: this
    one decides, reading the missing features at their means).
    """

    names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float
    info: Mapping[str, Any] = field(default_factory=dict)
    dense_only: ConfidenceModel | None = None
    floor: float | None = None
    answer: ConfidenceModel | None = None

    def __post_init__(self) -> None:
        sizes = {len(self.names), len(self.mean), len(self.scale), len(self.coef)}
        if len(sizes) != 1:
            raise InvalidArgumentError("abstention model: names, mean, scale and coef differ")
        if any(s <= 0 or not math.isfinite(s) for s in self.scale):
            raise InvalidArgumentError("abstention model: scales must be finite and positive")
        if not 0.0 <= self.threshold <= 1.0:
            raise InvalidArgumentError("abstention model: threshold must be in [0, 1]")
        if self.floor is not None and not 0.0 <= self.floor <= self.threshold:
            raise InvalidArgumentError("abstention model: uncertain_from must be in [0, threshold]")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConfidenceModel:
        """Read the JSON form written by :meth:`to_dict`.

        Raises:
            InvalidArgumentError: a field is missing or malformed.
        """
        try:
            sub = data.get("dense_only")
            answer = data.get("answer")
            return cls(
                dense_only=None if sub is None else cls.from_dict(sub),
                answer=None if answer is None else cls.from_dict(answer),
                names=tuple(str(n) for n in data["features"]),
                mean=tuple(float(v) for v in data["mean"]),
                scale=tuple(float(v) for v in data["scale"]),
                coef=tuple(float(v) for v in data["coef"]),
                intercept=float(data["intercept"]),
                threshold=float(data["threshold"]),
                floor=None if data.get("uncertain_from") is None else float(data["uncertain_from"]),
                info=dict(data.get("info", {})),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidArgumentError(f"malformed abstention model: {exc}") from None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "features": list(self.names),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "threshold": self.threshold,
            "info": dict(self.info),
        }
        if self.floor is not None:
            out["uncertain_from"] = self.floor
        if self.dense_only is not None:
            out["dense_only"] = self.dense_only.to_dict()
        if self.answer is not None:
            out["answer"] = self.answer.to_dict()
        return out

    @classmethod
    def load(cls, path: str | Path | None = None) -> ConfidenceModel:
        """The model at ``path``, or the one shipped in the package.

        Raises:
            InvalidArgumentError: the file cannot be read or is malformed.
        """
        try:
            if path is None:
                shipped = resources.files("kbsearch.judge").joinpath("models", MODEL_RESOURCE)
                data = json.loads(shipped.read_text(encoding="utf-8"))
            else:
                data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InvalidArgumentError(f"cannot read abstention model: {exc}") from None
        return cls.from_dict(data)

    def logit(self, values: Mapping[str, float]) -> float:
        """``intercept + sum coef * (x - mean) / scale`` (the features must all be given; a
        NaN one, not measured, stands at its mean: its term is 0)."""
        return self.intercept + math.fsum(
            c * (values[n] - m) / s
            for n, m, s, c in zip(self.names, self.mean, self.scale, self.coef, strict=True)
            if not math.isnan(values[n])
        )

    def confidence(self, values: Mapping[str, float]) -> float:
        """Probability in [0, 1] (module docstring)."""
        z = self.logit(values)
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))

    def decide(self, evidence: Evidence, threshold: float | None = None) -> Decision:
        """Answer or abstain for one search (by the ``dense_only`` sub-model when the
        evidence's lexical side is missing and there is one).

        Raises:
            InvalidArgumentError: ``threshold`` outside [0, 1].
        """
        limit = self.threshold if threshold is None else check_threshold(threshold)
        values = features(evidence)
        model = self.dense_only if evidence.lexical_missing and self.dense_only else self
        confidence = model.confidence(values)
        # a minimum confidence given moves the band with it: below it is uncertain, never
        # answered; the band's floor stays the model's unless that is above the minimum
        floor = None if self.floor is None else min(self.floor, limit)
        return Decision(confidence >= limit, confidence, limit, values, floor)

    @property
    def bands(self) -> tuple[float, float | None]:
        """``(threshold, floor)`` of the verdicts: the ``answer`` sub-model's when there is
        one (its confidence is the one shown), else this model's."""
        found = self.answer or self
        return found.threshold, found.floor

    def judge(
        self,
        evidence: Evidence,
        span: Span | None,
        passage: str | None,
        threshold: float | None = None,
    ) -> Decision:
        """The verdict on one search and the span chosen for it (in ``passage``; ``None``:
        no span): with an ``answer`` sub-model, its confidence over :func:`span_features` of
        :meth:`decide`'s confidence and the span (the probability that the shown span
        answers), banded by its threshold and floor; without one, :meth:`decide`'s. Without a
        span the verdict is ``dont_say`` (nothing to show). ``threshold`` moves the answered
        band's floor as in :meth:`decide`; the decision's features are both stages'.

        Raises:
            InvalidArgumentError: ``threshold`` outside [0, 1].
        """
        if self.answer is None:
            found = self.decide(evidence, threshold)
        else:
            retrieval = self.decide(evidence)
            found = self.answer.decide_on(
                {**retrieval.features, **span_features(retrieval.confidence, span)}, threshold
            )
        if span is None:
            return replace(found, answerable=False, verdict=DONT_SAY)
        return replace(found, span=span, span_passage=passage)

    def decide_on(self, values: Mapping[str, float], threshold: float | None = None) -> Decision:
        """The decision on feature ``values`` already measured (:meth:`decide`'s bands).

        Raises:
            InvalidArgumentError: ``threshold`` outside [0, 1].
        """
        limit = self.threshold if threshold is None else check_threshold(threshold)
        confidence = self.confidence(values)
        floor = None if self.floor is None else min(self.floor, limit)
        return Decision(confidence >= limit, confidence, limit, dict(values), floor)
