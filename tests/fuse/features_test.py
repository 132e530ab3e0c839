"""The learned fusion's features: hand-computed references, collection counts, and the reading of
a candidate the lexical route does not apply to."""

from __future__ import annotations

import numpy as np
import pytest
from support_fusion import FAQ, candidate, crowd

from kbsearch.errors import InvalidArgumentError
from kbsearch.fuse.convex import FusionCandidate
from kbsearch.fuse.features import FEATURES, CollectionStats, features


def test_counts_that_cannot_hold_together_are_refused() -> None:
    with pytest.raises(InvalidArgumentError):
        CollectionStats(passages=10, titled=11, unique_titled=0, titles=1)


def test_collection_stats_from_titles() -> None:
    stats = CollectionStats.from_titles(["A", "A", "B", None, "C", "C", "C", ""])
    assert stats == CollectionStats(passages=8, titled=6, unique_titled=1, titles=3)
    assert stats.vector() == (6 / 8, 1 / 8, 2.0)
    assert CollectionStats.from_titles([None, None]).vector() == (0.0, 0.0, 0.0)


def test_unmarked_candidates_have_the_features_they_had() -> None:
    """Reference: the features as computed before cross-language marks (main e83bf88)."""
    cands = [*crowd(), candidate("x", 0.0, 0.9, None, {"dense": 1})]
    x = features(cands, FAQ)
    lexical = np.array([c.scores["lexical"] for c in cands])
    dense = np.array([c.scores["dense"] for c in cands])
    lr = np.array([c.ranks.get("lexical", 101) for c in cands])
    dr = np.array([c.ranks.get("dense", 101) for c in cands])
    ln = (lexical - lexical.min()) / (lexical.max() - lexical.min())
    dn = (dense - dense.min()) / (dense.max() - dense.min())
    expected = {
        "lexical_norm": ln,
        "lexical_share": lexical / lexical.max(),
        "lexical_rank": lr.astype(float),
        "both": ((lr <= 100) & (dr <= 100)).astype(float),
        "rrf": 1 / (10 + lr) + 1 / (10 + dr),
        "convex": 0.4 * ln + 0.6 * dn,
    }
    for name, values in expected.items():
        assert np.array_equal(x[:, FEATURES.index(name)], values), name


def test_a_sole_cross_language_match_gets_its_lexical_features_when_none_else_matched() -> None:
    """No applying candidate matched a query word; the French page did (a code): its own
    ``lexical_norm`` and ``lexical_share`` are on every candidate's scale (1.0), not 0."""
    others = [
        candidate("en-a", 0.0, 0.84, 0.70, {"dense": 1}),
        candidate("en-b", 0.0, 0.83, 0.70, {"dense": 2}),
    ]
    code = FusionCandidate("fr", {"lexical": 1.6, "dense": 0.74}, {"lexical": 1, "dense": 20},
                     frozenset({"lexical"}))  # fmt: skip
    x = features([*others, code], FAQ)[-1]
    column = {f: x[i] for i, f in enumerate(FEATURES)}
    assert column["lexical_norm"] == column["lexical_share"] == 1.0
