"""The verdict of the abstention stage: answered, uncertain or "the documents don't say".

A :class:`Decision` carries the confidence (:mod:`kbsearch.judge.confidence`), the bands it is
read against (``threshold``: answered from; ``floor``: uncertain from) and the span judged;
:func:`band` maps a confidence to its verdict; :func:`decision_fields` is what every search
result carries (CLI JSON, the HTTP API, MCP).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgumentError, shown_value

if TYPE_CHECKING:
    from .span import Span


@dataclass(frozen=True)
class Decision:
    """The abstention stage's verdict: ``answerable`` is ``confidence >= threshold``;
    ``floor``: the confidence from which an answer is shown as uncertain rather than "the
    documents don't say" (``None``: no uncertain band); ``verdict``: one of :data:`VERDICTS`
    (default: the confidence's :func:`band`); ``span``: the span the verdict was given on and
    ``span_passage`` the passage it lies in (``None``: no span judged, or none found).
    ``search``, ``ask``, the HTTP API, the page and the MCP tools all show this ``verdict``.
    """

    answerable: bool
    confidence: float
    threshold: float
    features: Mapping[str, float] = field(default_factory=dict)
    floor: float | None = None
    verdict: str = ""
    span: Span | None = None
    span_passage: str | None = None

    def __post_init__(self) -> None:
        if not self.verdict:
            object.__setattr__(self, "verdict", band(self.confidence, self.threshold, self.floor))


ANSWERED, UNCERTAIN, DONT_SAY = "answered", "uncertain", "dont_say"
VERDICTS = (ANSWERED, UNCERTAIN, DONT_SAY)


def shown_confidence(value: float) -> str:
    """A confidence or a band's bound (``min_confidence``, ``uncertain_from``) as text shows
    it, to 2 decimals (``0.498150829`` -> ``"0.50"``); JSON carries the number itself."""
    return f"{value:.2f}"


def band(confidence: float, threshold: float, floor: float | None) -> str:
    """The verdict of a confidence alone: ``answered`` from ``threshold``, ``uncertain`` from
    ``floor`` (``None``: no uncertain band), else ``dont_say``."""
    if confidence >= threshold:
        return ANSWERED
    if floor is not None and confidence >= floor:
        return UNCERTAIN
    return DONT_SAY


def decision_fields(decision: Decision | None) -> dict[str, Any]:
    """``verdict`` (the decision's: :attr:`Decision.verdict`), ``answerable``,
    ``confidence``, ``min_confidence`` and ``uncertain_from`` as every search result carries
    them (CLI JSON and the HTTP API); all ``None`` without a decision (no vectors)."""
    if decision is None:
        return dict.fromkeys(
            ("verdict", "answerable", "confidence", "min_confidence", "uncertain_from")
        )
    return {
        "verdict": decision.verdict,
        "answerable": decision.answerable,
        "confidence": decision.confidence,
        "min_confidence": decision.threshold,
        "uncertain_from": decision.floor,
    }


def check_threshold(value: object) -> float:
    """``value`` as a float in [0, 1].

    Raises:
        InvalidArgumentError: anything else.
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0.0 <= float(value) <= 1.0
    ):
        raise InvalidArgumentError(
            f"minimum confidence must be a number from 0 to 1, got {shown_value(value)}"
        )
    return float(value)
