"""The three verdicts read from a confidence and its bands (judge/verdict.py)."""

from __future__ import annotations

from kbsearch.judge.verdict import ANSWERED, DONT_SAY, UNCERTAIN, Decision, band, decision_fields


def test_a_confidence_falls_in_one_of_three_bands() -> None:
    assert band(0.9, 0.8, 0.2) == ANSWERED
    assert band(0.8, 0.8, 0.2) == ANSWERED  # the threshold itself answers
    assert band(0.5, 0.8, 0.2) == UNCERTAIN
    assert band(0.2, 0.8, 0.2) == UNCERTAIN
    assert band(0.1, 0.8, 0.2) == DONT_SAY
    assert band(0.5, 0.8, None) == DONT_SAY  # no uncertain band


def test_a_decision_without_a_verdict_takes_its_band_and_shows_its_fields() -> None:
    decision = Decision(answerable=False, confidence=0.5, threshold=0.8, floor=0.2)
    assert decision.verdict == UNCERTAIN
    assert decision_fields(decision) == {
        "verdict": UNCERTAIN,
        "answerable": False,
        "confidence": 0.5,
        "min_confidence": 0.8,
        "uncertain_from": 0.2,
    }
    assert set(decision_fields(None).values()) == {None}
