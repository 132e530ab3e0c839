"""Learned fusion: the shipped model loads, and ranks small constructed candidate sets sensibly."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from support_fusion import ARTICLES, FAQ, UNTITLED, candidate, crowd

from kbsearch.errors import FusionError, ModelFormatError
from kbsearch.fuse.convex import ConvexFused, FusionCandidate, evidence_order
from kbsearch.fuse.features import FEATURES, CollectionStats, features
from kbsearch.fuse.learned import PART_OF, checked, fuse_learned, shipped_model
from kbsearch.fuse.trees import parse_lightgbm


def test_the_shipped_model_loads_and_reads_the_features() -> None:
    model = shipped_model()
    assert set(model.feature_names) <= set(FEATURES)
    assert {"lexical_norm", "dense_norm", "title_norm"} <= set(model.feature_names)
    assert model.roots.size >= 1
    assert shipped_model() is model  # loaded once


@pytest.mark.parametrize("stats", [FAQ, ARTICLES, UNTITLED])
def test_a_candidate_best_in_every_route_comes_first(stats: CollectionStats) -> None:
    best = candidate("zz-best", 12.0, 0.90, 0.95, {"lexical": 1, "dense": 1})
    second = candidate("zz-second", 8.0, 0.85, 0.85, {"lexical": 2, "dense": 2})
    fused = fuse_learned([*crowd(), second, best], stats)
    ids = [f.passage_id for f in fused]
    assert ids[0] == "zz-best"
    assert ids.index("zz-second") < len(ids) // 2


def test_monotone_raising_one_route_score_never_lowers_a_candidate() -> None:
    others = crowd()
    previous = -math.inf
    for dense in (0.70, 0.74, 0.78, 0.82, 0.86, 0.90):
        target = candidate("target", 3.0, dense, 0.7, {"lexical": 5})
        fused = fuse_learned([*others, target], FAQ)
        score = next(f.score for f in fused if f.passage_id == "target")
        assert score >= previous - 1e-12
        previous = score


def test_missing_title_scores_are_handled() -> None:
    untitled = crowd(title=False)
    assert np.isnan(features(untitled, UNTITLED)[:, FEATURES.index("title_norm")]).all()
    mixed = [
        *crowd(10),
        candidate("x", 2.0, 0.75, None, {"dense": 40}),
        candidate("w", 4.0, 0.79, None, {"lexical": 2}),
    ]
    for stats, cands in ((UNTITLED, untitled), (FAQ, mixed)):
        fused = fuse_learned(cands, stats)
        assert sorted(f.passage_id for f in fused) == sorted(c.passage_id for c in cands)
        assert all(math.isfinite(f.score) for f in fused)
    nan_title = candidate("y", 2.0, 0.75, math.nan, {"dense": 41})
    assert fuse_learned([*mixed, nan_title], FAQ)  # NaN reads as absent


def test_parts_add_up_to_the_score() -> None:
    for f in fuse_learned(crowd(), ARTICLES):
        assert {"lexical", "dense", "title", "bias"} <= set(f.parts)
        assert math.isclose(sum(f.parts.values()), f.score, abs_tol=1e-9)


def test_deterministic_and_independent_of_input_order() -> None:
    cands = crowd()
    first = [(f.passage_id, f.score) for f in fuse_learned(cands, FAQ)]
    again = [(f.passage_id, f.score) for f in fuse_learned(list(reversed(cands)), FAQ)]
    assert first == again


def test_bad_input_is_refused() -> None:
    assert fuse_learned([], FAQ) == []
    with pytest.raises(FusionError):
        fuse_learned([candidate("a", 1, 0.5, None, {}), candidate("a", 2, 0.6, None, {})], FAQ)
    with pytest.raises(FusionError):
        fuse_learned([candidate("a", math.inf, 0.5, None, {})], FAQ)


def test_a_model_of_other_features_is_refused() -> None:
    text = (
        "tree\nversion=v4\nfeature_names=lexical_norm b\n\nTree=0\nnum_leaves=1\nnum_cat=0\n"
        "leaf_value=0.5\nis_linear=0\nshrinkage=1\n\n\nend of trees\n"
    )
    with pytest.raises(ModelFormatError):
        checked(parse_lightgbm(text))


def test_a_cross_language_candidate_is_not_punished_for_its_lexical_zero() -> None:
    """A French page for an English query: BM25 0 because the words are in another language.
    Marked as out of the lexical route's reach, its lexical features are the dense route's (as
    RRF and convex read a route that does not apply), and it ranks above where a 0 put it."""
    others = [
        candidate("en-a", 9.0, 0.84, 0.70, {"lexical": 1, "dense": 3}),
        candidate("en-b", 6.0, 0.83, 0.70, {"lexical": 2, "dense": 4}),
        *crowd(),
    ]
    scores = {"lexical": 0.0, "dense": 0.88, "title": 0.75}
    zero = FusionCandidate("fr", scores, {"dense": 1})
    missing = FusionCandidate("fr", scores, {"dense": 1}, frozenset({"lexical"}))
    before = fuse_learned([*others, zero], FAQ)
    after = fuse_learned([*others, missing], FAQ)
    rank = {name: [f.passage_id for f in fused].index("fr") for name, fused in
            (("before", before), ("after", after))}  # fmt: skip
    assert rank["after"] < rank["before"] and rank["after"] == 0
    x = features([*others, missing], FAQ)[-1]
    column = {f: x[i] for i, f in enumerate(FEATURES)}
    assert column["lexical_norm"] == column["lexical_share"] == column["dense_norm"] == 1.0
    assert column["lexical_rank"] == column["dense_rank"] == 1.0 and column["both"] == 1.0
    assert column["rrf"] == 2 / 11 and column["convex"] == column["dense_norm"]
    # everyone else's features do not move, except the lexical normalisation (fr left out)
    plain = features([*others, zero], FAQ)[:-1]
    same = [i for i, f in enumerate(FEATURES) if f not in ("lexical_norm", "convex")]
    assert np.array_equal(features([*others, missing], FAQ)[:-1][:, same], plain[:, same])


def test_a_cross_language_candidate_keeps_its_own_lexical_evidence_where_better() -> None:
    """An English page for a French question naming its product code: BM25 matched the code,
    so each lexical feature is the better of its own and the dense route's; with more lexical
    evidence (score and rank) its score never falls, and never below the dense reading."""
    others = [
        candidate("fr-a", 9.0, 0.84, 0.70, {"lexical": 2, "dense": 1}),
        candidate("fr-b", 6.0, 0.83, 0.70, {"lexical": 3, "dense": 2}),
        *crowd(),
    ]
    bound = frozenset({"lexical"})
    previous = -math.inf
    for lexical, ranks in (
        (0.0, {"dense": 20}),
        (2.0, {"lexical": 40, "dense": 20}),
        (5.0, {"lexical": 8, "dense": 20}),
        (12.0, {"lexical": 1, "dense": 20}),
    ):
        code = FusionCandidate(
            "en", {"lexical": lexical, "dense": 0.74, "title": 0.7}, ranks, bound
        )
        fused = fuse_learned([*others, code], FAQ)
        score = next(f.score for f in fused if f.passage_id == "en")
        assert score >= previous - 1e-12
        previous = score
    x = features([*others, code], FAQ)[-1]
    column = {f: x[i] for i, f in enumerate(FEATURES)}
    # its 12.0 is above every applying candidate's 9.0: clipped to 1, its rank 1 kept
    assert column["lexical_norm"] == column["lexical_share"] == 1.0
    assert column["lexical_rank"] == 1.0 and column["rrf"] == 1 / 11 + 1 / 30
    read = next(f for f in fused if f.passage_id == "en").read
    assert read["lexical"][0] == 1.0 and read["lexical"][1] == column["dense_norm"]


def eager_reference(candidates: list[FusionCandidate], stats: CollectionStats) -> list[ConvexFused]:
    """fuse_learned as it was before its parts became lazy: every candidate's contributions
    computed up front, the score their sum plus the bias."""
    model = shipped_model()
    x = features(candidates, stats)[:, [FEATURES.index(f) for f in model.feature_names]]
    contrib, bias = model.contributions(x)
    groups = sorted({PART_OF[f] for f in model.feature_names})
    member = np.array([[PART_OF[f] == g for g in groups] for f in model.feature_names], float)
    out = [
        ConvexFused(
            c.passage_id,
            float(contrib[i].sum() + bias),
            {**dict(zip(groups, (contrib @ member)[i].tolist(), strict=True)), "bias": bias},
            dict(c.ranks),
        )
        for i, c in enumerate(candidates)
    ]
    return sorted(out, key=evidence_order)


@pytest.mark.parametrize("stats", [FAQ, ARTICLES, UNTITLED])
@pytest.mark.parametrize("seed", range(5))
def test_lazy_parts_rank_and_add_up_as_the_eager_reference(
    stats: CollectionStats, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    cands = []
    for i in range(150):
        ranks = {r: int(rng.integers(1, 101)) for r in ("lexical", "dense") if rng.random() < 0.7}
        title = None if rng.random() < 0.3 else float(rng.uniform(0.6, 0.95))
        cands.append(
            candidate(
                f"p{i:03d}",
                float(rng.uniform(0, 20)),
                float(rng.uniform(0.7, 0.95)),
                title,
                ranks or {"lexical": 100},
            )  # fmt: skip
        )
    cands[7] = FusionCandidate("twin", dict(cands[3].scores), dict(cands[3].ranks))  # an exact tie
    fast, reference = fuse_learned(cands, stats), eager_reference(cands, stats)
    assert [f.passage_id for f in fast] == [f.passage_id for f in reference]
    for f, r in zip(fast, reference, strict=True):
        assert f.score == pytest.approx(r.score, abs=1e-12)
        assert dict(f.parts) == r.parts and f.ranks == r.ranks
    assert isinstance(pickle.loads(pickle.dumps(fast[0].parts)), dict)
