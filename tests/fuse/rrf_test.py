"""Reciprocal Rank Fusion against hand-computed values."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kbsearch.errors import FusionError
from kbsearch.fuse.rrf import reciprocal_rank_fusion


def ranked(ids: list[str]) -> list[tuple[str, float]]:
    return [(pid, float(len(ids) - i)) for i, pid in enumerate(ids)]


def test_hand_computed_example_k60() -> None:
    lexical = ranked(["b", "x", "c", "d", "a"])  # a is 5th lexically
    dense = ranked(["a", "x", "e"])  # a is 1st densely; x 2nd in both
    fused = {
        f.passage_id: f for f in reciprocal_rank_fusion({"lexical": lexical, "dense": dense}, k=60)
    }
    assert round(fused["a"].score, 6) == 0.031778
    assert math.isclose(fused["a"].score, 1 / 65 + 1 / 61)
    assert round(fused["x"].score, 6) == 0.032258
    order = [
        f.passage_id for f in reciprocal_rank_fusion({"lexical": lexical, "dense": dense}, k=60)
    ]
    assert order[0] == "x"


@pytest.mark.parametrize("k", [60.0, 0.0])
def test_fusing_two_small_lists(k: float) -> None:
    fused = reciprocal_rank_fusion({"r1": ranked(["0", "1"]), "r2": ranked(["1", "2"])}, k=k)
    scores = {f.passage_id: f.score for f in fused}
    assert math.isclose(scores["0"], 1 / (k + 1))
    assert math.isclose(scores["1"], 1 / (k + 2) + 1 / (k + 1))
    assert math.isclose(scores["2"], 1 / (k + 2))
    assert [f.passage_id for f in fused] == ["1", "0", "2"]


def test_contributions_add_up_and_ties_break_by_id() -> None:
    fused = reciprocal_rank_fusion({"a": ranked(["q", "p"]), "b": ranked(["p", "q"])}, k=60)
    assert [f.passage_id for f in fused] == ["p", "q"]  # exact tie
    for f in fused:
        assert math.isclose(sum(c.value for c in f.contributions.values()), f.score)


def test_weights_scale_contributions() -> None:
    fused = reciprocal_rank_fusion(
        {"lexical": ranked(["a"]), "dense": ranked(["b"])},
        k=60,
        weights={"lexical": 2.0, "dense": 1},
    )
    assert [f.passage_id for f in fused] == ["a", "b"]
    assert math.isclose(fused[0].score, 2 / 61)


def test_absent_passage_gets_nothing_from_that_route() -> None:
    fused = reciprocal_rank_fusion({"a": ranked(["x"]), "b": ranked(["y"])})
    assert set(fused[0].contributions) == {"a"}


@pytest.mark.parametrize(
    "rankings",
    [
        {"a": [("x", 1.0), ("x", 0.5)]},
        {"a": [("x", float("nan"))]},
        {"a": [("x", float("inf"))]},
    ],
)
def test_bad_lists_refused(rankings: dict[str, list[tuple[str, float]]]) -> None:
    with pytest.raises(FusionError):
        reciprocal_rank_fusion(rankings)


def test_bad_k_refused() -> None:
    with pytest.raises(FusionError):
        reciprocal_rank_fusion({"a": ranked(["x"])}, k=-1)


def test_default_k_is_documented_choice() -> None:
    from kbsearch.fuse.rrf import DEFAULT_RRF_K

    fused = reciprocal_rank_fusion({"a": ranked(["x"])})
    assert DEFAULT_RRF_K == 10 and math.isclose(fused[0].score, 1 / 11)


def test_ties_broken_by_evidence_then_best_rank_then_id() -> None:
    # k=0, weights chosen so that every passage scores exactly 1.0
    lexical = ranked(["m", "both"])  # m rank 1; both rank 2
    dense = ranked(["a", "both", "b"])  # a rank 1, both rank 2, b rank 3
    fused = reciprocal_rank_fusion(
        {"lexical": lexical, "dense": dense}, k=0, weights={"lexical": 1.0, "dense": 1.0}
    )
    scores = {f.passage_id: f.score for f in fused}
    assert scores == {"m": 1.0, "both": 1.0, "a": 1.0, "b": 1 / 3}
    # "both" was found by two routes; "a" and "m" by one at rank 1 (then by id)
    assert [f.passage_id for f in fused] == ["both", "a", "m", "b"]


def test_a_route_that_does_not_apply_reads_the_better_of_its_own_and_the_imputed() -> None:
    """A French passage for an English query: a lexical 0 does not count against it (the
    lexical route is read as ranking it where the dense one did), a lexical match still counts."""
    rankings = {
        "lexical": [("en1", 9.0), ("en2", 3.0), ("fr2", 2.0)],
        "dense": [("en2", 0.9), ("fr1", 0.88), ("en1", 0.7), ("fr2", 0.6)],
    }
    k = 10
    marks = {p: frozenset({"lexical"}) for p in ("fr1", "fr2")}
    fused = reciprocal_rank_fusion(rankings, k=k, not_applicable=marks)
    by_id = {f.passage_id: f for f in fused}
    fr1 = by_id["fr1"]  # not listed by the lexical route: imputed from its dense rank 2
    assert fr1.score == 2 * (1 / (k + 2)) and set(fr1.contributions) == {"dense"}
    assert fr1.not_applicable == {"lexical"} and fr1.imputed == {"lexical": 1 / (k + 2)}
    assert fr1.read("lexical") == 1 / (k + 2)
    fr2 = by_id["fr2"]  # lexical rank 3 beats the imputed dense rank 4: its own counts
    assert fr2.imputed == {"lexical": 1 / (k + 4)} and fr2.read("lexical") == 1 / (k + 3)
    assert math.isclose(fr2.score, 1 / (k + 3) + 1 / (k + 4))
    plain = {f.passage_id: f for f in reciprocal_rank_fusion(rankings, k=k)}
    for pid in ("en1", "en2"):  # a passage every route applies to: as before
        assert by_id[pid] == plain[pid] and not by_id[pid].imputed
    assert fr1.score > plain["fr1"].score and fr2.score >= plain["fr2"].score
    weighted = reciprocal_rank_fusion(
        {"lexical": [("en1", 1.0)], "dense": [("fr1", 0.9)]},
        k=k,
        weights={"lexical": 1.0, "dense": 3.0},
        not_applicable={"fr1": frozenset({"lexical"})},
    )
    fr1 = next(f for f in weighted if f.passage_id == "fr1")
    assert math.isclose(fr1.score, (4 / 3) * 3 / (k + 1))


@given(lexical_rank=st.integers(1, 50), dense_rank=st.integers(1, 50), weight=st.floats(0.1, 5))
def test_more_lexical_evidence_never_lowers_a_cross_language_score(
    lexical_rank: int, dense_rank: int, weight: float
) -> None:
    """Listed by the lexical route (at any rank) scores at least as high as not listed."""
    others = [(f"x{i}", 1.0) for i in range(60)]
    dense = [*others[: dense_rank - 1], ("fr", 0.5)]
    listed = [*others[: lexical_rank - 1], ("fr", 1.0)]
    marks = {"fr": frozenset({"lexical"})}
    weights = {"lexical": weight, "dense": 1.0}

    def score(lexical: list[tuple[str, float]]) -> float:
        fused = reciprocal_rank_fusion(
            {"lexical": lexical, "dense": dense}, weights=weights, not_applicable=marks
        )
        return next(f.score for f in fused if f.passage_id == "fr")

    assert score(listed) >= score(others[: lexical_rank - 1])


def test_without_marks_rrf_is_unchanged() -> None:
    rankings = {"lexical": [("a", 2.0), ("b", 1.0)], "dense": [("b", 0.9), ("c", 0.8)]}
    assert reciprocal_rank_fusion(rankings, not_applicable={}) == reciprocal_rank_fusion(rankings)
