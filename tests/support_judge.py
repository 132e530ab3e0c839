"""Constructed evidence shared by the tests of the judge (tests/judge/)."""

from __future__ import annotations

from kbsearch.judge.confidence_features import Evidence


def evidence(dense: list[float], lexical: list[float], in_top: tuple[bool, ...]) -> Evidence:
    return Evidence(
        lexical=tuple((f"L{i}", s) for i, s in enumerate(lexical)),
        dense=tuple((f"L{i}" if i < 2 else f"D{i}", s) for i, s in enumerate(dense)),
        term_idf=(2.0, 1.0, 1.0),
        term_known=(True, True, False),
        term_in_top=in_top,
        term_in_dense_top=in_top,
        passages=100,
        sentence_coverage=0.5,
        background_mean=0.75,
        background_std=0.05,
        query_language="en",
    )
