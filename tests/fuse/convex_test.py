"""Convex combination of normalised scores against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kbsearch.errors import FusionError
from kbsearch.fuse.convex import FusionCandidate, convex_fusion, normalise


def test_minmax_zscore_tmm_by_hand() -> None:
    values = np.array([2.0, 4.0, 6.0])
    assert normalise(values, "minmax").tolist() == [0.0, 0.5, 1.0]
    z = normalise(values, "zscore")
    assert math.isclose(z[0], -math.sqrt(1.5)) and math.isclose(z[2], math.sqrt(1.5))
    assert normalise(values, "tmm", "lexical").tolist() == [2 / 6, 4 / 6, 1.0]
    assert normalise(np.array([0.0, 0.5]), "tmm", "dense").tolist() == [2 / 3, 1.0]
    assert normalise(np.array([3.0, 3.0]), "minmax").tolist() == [0.0, 0.0]
    assert normalise(np.array([3.0, 3.0]), "zscore").tolist() == [0.0, 0.0]


def test_unknown_normalisation_or_route() -> None:
    with pytest.raises(FusionError, match="unknown normalisation"):
        normalise(np.array([1.0]), "rank")
    with pytest.raises(FusionError, match="theoretical minimum"):
        normalise(np.array([1.0]), "tmm", "colbert")


def test_hand_computed_fusion() -> None:
    candidates = [
        FusionCandidate("a", {"lexical": 10.0, "dense": 0.80}, {"lexical": 1, "dense": 3}),
        FusionCandidate("b", {"lexical": 5.0, "dense": 0.90}, {"lexical": 2, "dense": 1}),
        FusionCandidate("c", {"lexical": 0.0, "dense": 0.85}, {"dense": 2}),
    ]
    fused = convex_fusion(candidates, {"lexical": 0.4, "dense": 0.6})
    # lexical minmax: a 1, b 0.5, c 0; dense minmax: a 0, b 1, c 0.5
    scores = {f.passage_id: f.score for f in fused}
    assert math.isclose(scores["a"], 0.4)
    assert math.isclose(scores["b"], 0.4 * 0.5 + 0.6)
    assert math.isclose(scores["c"], 0.3)
    assert [f.passage_id for f in fused] == ["b", "a", "c"]
    assert math.isclose(fused[0].parts["lexical"], 0.2) and fused[0].ranks == {
        "lexical": 2,
        "dense": 1,
    }


def test_missing_route_score_is_the_lowest_of_that_route() -> None:
    candidates = [
        FusionCandidate("a", {"lexical": 4.0, "dense": 0.5}, {"lexical": 1, "dense": 2}),
        FusionCandidate("b", {"dense": 0.9}, {"dense": 1}),
        FusionCandidate("c", {"lexical": 2.0, "dense": 0.7}, {"lexical": 2}),
    ]
    scores = {f.passage_id: f.score for f in convex_fusion(candidates, {"lexical": 1, "dense": 0})}
    assert scores == {"a": 1.0, "b": 0.0, "c": 0.0}


def test_ties_broken_by_evidence_not_id() -> None:
    # equal fused scores: "z" was found by both routes, "m" by one at rank 1, "a" by one at rank 2
    candidates = [
        FusionCandidate("a", {"lexical": 1.0, "dense": 1.0}, {"dense": 2}),
        FusionCandidate("m", {"lexical": 1.0, "dense": 1.0}, {"lexical": 1}),
        FusionCandidate("z", {"lexical": 1.0, "dense": 1.0}, {"lexical": 3, "dense": 3}),
        FusionCandidate("b", {"lexical": 1.0, "dense": 1.0}, {"dense": 2}),
    ]
    order = [f.passage_id for f in convex_fusion(candidates, {"lexical": 0.5, "dense": 0.5})]
    assert order == ["z", "m", "a", "b"]


def test_route_absent_from_every_candidate_adds_nothing() -> None:
    candidates = [
        FusionCandidate("a", {"lexical": 2.0}, {"lexical": 1}),
        FusionCandidate("b", {"lexical": 1.0}, {"lexical": 2}),
    ]
    fused = convex_fusion(candidates, {"lexical": 0.5, "title": 0.5})
    assert [(f.passage_id, f.score) for f in fused] == [("a", 0.5), ("b", 0.0)]


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({"lexical": -0.1, "dense": 1.0}, "finite and >= 0"),
        ({"lexical": math.nan, "dense": 1.0}, "finite and >= 0"),
        ({"lexical": 0.0, "dense": 0.0}, "positive"),
    ],
)
def test_bad_weights(weights: dict[str, float], message: str) -> None:
    with pytest.raises(FusionError, match=message):
        convex_fusion([FusionCandidate("a", {"lexical": 1.0, "dense": 1.0}, {})], weights)


def test_bad_candidates() -> None:
    twice = [FusionCandidate("a", {"dense": 1.0}, {}), FusionCandidate("a", {"dense": 0.5}, {})]
    with pytest.raises(FusionError, match="twice"):
        convex_fusion(twice, {"dense": 1.0})
    with pytest.raises(FusionError, match="non-finite"):
        convex_fusion([FusionCandidate("a", {"dense": math.inf}, {})], {"dense": 1.0})
    assert convex_fusion([], {"dense": 1.0}) == []


def test_a_route_that_does_not_apply_reads_the_better_of_its_own_and_the_imputed() -> None:
    """c and d are in another language than the query: c's BM25 0 is no evidence against it
    (its lexical part is imputed from its dense one), d's product-code match still counts (its
    own lexical part, capped at the best applying one). Lexical is normalised over a and b."""
    lexical_bound = frozenset({"lexical"})
    candidates = [
        FusionCandidate("a", {"lexical": 10.0, "dense": 0.80}, {"lexical": 1, "dense": 3}),
        FusionCandidate("b", {"lexical": 5.0, "dense": 0.90}, {"lexical": 2, "dense": 1}),
        FusionCandidate("c", {"lexical": 0.0, "dense": 0.85}, {"dense": 2}, lexical_bound),
        FusionCandidate("d", {"lexical": 20.0, "dense": 0.80}, {"lexical": 1}, lexical_bound),
    ]
    fused = convex_fusion(candidates, {"lexical": 0.4, "dense": 0.6})
    by_id = {f.passage_id: f for f in fused}
    # lexical minmax over a, b: a 1, b 0; dense minmax: a 0, b 1, c 0.5, d 0
    assert math.isclose(by_id["a"].score, 0.4) and math.isclose(by_id["b"].score, 0.6)
    c = by_id["c"]  # own: 0.4 * (0 - 5) / 5 = -0.4; imputed: 0.4 * (0.6 * 0.5) / 0.6 = 0.2
    assert math.isclose(c.score, 0.6 * 0.5 / 0.6)
    assert math.isclose(c.parts["lexical"], 0.2) and math.isclose(c.parts["dense"], 0.3)
    assert np.allclose(c.read["lexical"], (-0.4, 0.2))
    d = by_id["d"]  # own: 0.4 * 3 capped at 0.4; imputed: 0
    assert math.isclose(d.parts["lexical"], 0.4) and np.allclose(d.read["lexical"], (0.4, 0.0))
    for f in fused:
        assert set(f.parts) == {"lexical", "dense"}
        assert math.isclose(sum(f.parts.values()), f.score)
        assert bool(f.read) == (f.passage_id in "cd")
    # read as zero (before), c was below a; as not applicable it is between b and a
    assert [f.passage_id for f in fused] == ["b", "c", "a", "d"]  # a, d tie: a found twice


def test_unmarked_candidates_fuse_bit_for_bit_as_before() -> None:
    rng = np.random.default_rng(3)
    candidates = [
        FusionCandidate(
            f"p{i}",
            {"lexical": float(rng.uniform(0, 9)), "dense": float(rng.uniform())},
            {"dense": i + 1},
        )  # fmt: skip
        for i in range(20)
    ]
    weights = {"lexical": 0.4, "dense": 0.6}
    fused = convex_fusion(candidates, weights)
    lexical = normalise(np.array([c.scores["lexical"] for c in candidates]), "minmax")
    dense = normalise(np.array([c.scores["dense"] for c in candidates]), "minmax")
    expected = 0.4 * lexical + 0.6 * dense
    got = {f.passage_id: f.score for f in fused}
    assert [got[c.passage_id] for c in candidates] == expected.tolist()


def test_a_sole_cross_language_match_counts_when_no_applying_candidate_matched() -> None:
    """An English question naming a code only a French page holds: BM25 matched none of the
    English candidates, so the French page's own lexical part is fitted on every candidate's
    score (the full lexical weight for the sole match), not on the English ones' zeros."""
    bound = frozenset({"lexical"})
    candidates = [
        FusionCandidate("en-a", {"lexical": 0.0, "dense": 0.90}, {"dense": 1}),
        FusionCandidate("en-b", {"lexical": 0.0, "dense": 0.85}, {"dense": 2}),
        FusionCandidate("fr", {"lexical": 1.6, "dense": 0.80}, {"lexical": 1, "dense": 3}, bound),
    ]
    fused = convex_fusion(candidates, {"lexical": 0.4, "dense": 0.6})
    fr = next(f for f in fused if f.passage_id == "fr")
    assert np.allclose(fr.read["lexical"], (0.4, 0.0)) and math.isclose(fr.score, 0.4)
    assert [f.passage_id for f in fused] == ["en-a", "fr", "en-b"]  # en-b: 0.6 * 0.5
