"""The numpy evaluator of LightGBM text models: hand-computed trees, and LightGBM itself."""

from __future__ import annotations

import math
from importlib import resources

import numpy as np
import pytest

from kbsearch.errors import ModelFormatError
from kbsearch.fuse.learned import shipped_model
from kbsearch.fuse.trees import (
    MISSING_NAN,
    MISSING_ZERO,
    ZERO_THRESHOLD,
    TreeEnsemble,
    parse_lightgbm,
)

# Tree 0: a <= 0.5 (NaN goes left: decision 10 = NaN missing type, default left) -> -1;
# else b <= 0.25 (decision 2: no missing type, so NaN reads as 0) -> 0.5, else 2.
# Tree 1: a single leaf, 0.25.
MODEL = """tree
version=v4
num_class=1
num_tree_per_iteration=1
label_index=0
max_feature_idx=1
objective=lambdarank
feature_names=a b
feature_infos=[0:1] [0:1]
tree_sizes=1 1

Tree=0
num_leaves=3
num_cat=0
split_feature=0 1
split_gain=1 1
threshold=0.5 0.25
decision_type=10 2
left_child=-1 -2
right_child=1 -3
leaf_value=-1 0.5 2
leaf_weight=1 1 1
leaf_count=1 1 1
internal_value=0 1
internal_weight=3 2
internal_count=3 2
is_linear=0
shrinkage=1


Tree=1
num_leaves=1
num_cat=0
split_feature=
split_gain=
threshold=
decision_type=
left_child=
right_child=
leaf_value=0.25
leaf_weight=
leaf_count=
internal_value=
internal_weight=
internal_count=
is_linear=0
shrinkage=1


end of trees
"""


def test_hand_computed_predictions_and_missing_values() -> None:
    model = parse_lightgbm(MODEL)
    x = np.array(
        [[0.2, 0.9], [0.8, 0.1], [0.8, 0.9], [math.nan, 0.9], [0.8, math.nan], [0.5, 0.25]]
    )
    assert model.predict(x).tolist() == [-0.75, 0.75, 2.25, -0.75, 0.75, -0.75]


def test_contributions_follow_the_path_and_add_up() -> None:
    model = parse_lightgbm(MODEL)
    contrib, bias = model.contributions(np.array([[0.8, 0.9], [0.2, 0.9]]))
    assert bias == 0.25
    # row 0: root (0) -> node 1 (1) credits a with +1, node 1 -> leaf 2 (2) credits b with +1
    assert contrib.tolist() == [[1.0, 1.0], [-1.0, 0.0]]


def test_wrong_width_and_unsupported_models_are_refused() -> None:
    model = parse_lightgbm(MODEL)
    with pytest.raises(ModelFormatError):
        model.predict(np.zeros((2, 3)))
    with pytest.raises(ModelFormatError):
        parse_lightgbm("not a model")
    with pytest.raises(ModelFormatError):
        parse_lightgbm(MODEL.replace("decision_type=10 2", "decision_type=1 2"))
    with pytest.raises(ModelFormatError):
        parse_lightgbm(MODEL.replace("num_leaves=3", "num_leaves=4"))


def test_matches_lightgbm_on_a_trained_ranker_with_missing_values() -> None:
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 4))
    x[rng.random(600) < 0.2, 2] = math.nan
    x[rng.random(600) < 0.2, 3] = 0.0
    y = ((x[:, 0] + np.nan_to_num(x[:, 2]) + rng.normal(scale=0.5, size=600)) > 0.5).astype(int)
    params = {
        "objective": "lambdarank",
        "num_leaves": 6,
        "min_data_in_leaf": 5,
        "deterministic": True,
        "num_threads": 1,
        "seed": 0,
        "verbosity": -1,
    }
    booster = lgb.train(params, lgb.Dataset(x, y, group=[20] * 30), num_boost_round=15)
    ours = parse_lightgbm(booster.model_to_string())
    probe = rng.normal(size=(200, 4))
    probe[::3, 2] = math.nan
    probe[::4, 3] = 0.0
    probe[::5, 1] = math.nan
    np.testing.assert_allclose(ours.predict(probe), booster.predict(probe), rtol=0, atol=1e-12)
    contrib, bias = ours.contributions(probe)
    np.testing.assert_allclose(contrib.sum(axis=1) + bias, booster.predict(probe), atol=1e-9)


def walk_one_row(model: TreeEnsemble, row: np.ndarray) -> float:
    """The reference: each tree walked node by node for one row with LightGBM's rule
    (``tree.h``, ``NumericalDecision``), summing the leaves reached."""
    total = 0.0
    for root in model.roots.tolist():
        node = root
        while model.left[node] != node:  # a leaf is its own child
            x = float(row[model.feature[node]])
            missing = int(model.missing[node])
            if math.isnan(x) and missing != MISSING_NAN:
                x = 0.0
            if (missing == MISSING_ZERO and abs(x) <= ZERO_THRESHOLD) or (
                missing == MISSING_NAN and math.isnan(x)
            ):
                left = bool(model.default_left[node])
            else:
                left = x <= model.threshold[node]
            node = int(model.left[node] if left else model.right[node])
        total += float(model.value[node])
    return total


def test_the_vectorised_walk_equals_a_per_row_walk_on_the_shipped_model() -> None:
    model = shipped_model()
    rng = np.random.default_rng(7)
    x = rng.uniform(-0.2, 1.2, size=(300, len(model.feature_names)))
    x[:, [i for i, f in enumerate(model.feature_names) if f.endswith("_rank")]] *= 100
    x[rng.random(x.shape) < 0.1] = math.nan
    x[rng.random(x.shape) < 0.1] = 0.0
    expected = [walk_one_row(model, row) for row in x]
    np.testing.assert_allclose(model.predict(x), expected, rtol=0, atol=1e-12)
    contrib, bias = model.contributions(x)
    np.testing.assert_allclose(contrib.sum(axis=1) + bias, expected, rtol=0, atol=1e-12)


def test_the_shipped_model_predicts_as_lightgbm_with_missing_values() -> None:
    lgb = pytest.importorskip("lightgbm")
    model = shipped_model()
    path = resources.files("kbsearch.fuse").joinpath("models", "fusion_lgbm.txt")
    booster = lgb.Booster(model_str=path.read_text())
    rng = np.random.default_rng(11)
    x = rng.uniform(-0.2, 1.2, size=(2000, len(model.feature_names)))
    x[rng.random(x.shape) < 0.15] = math.nan  # a split at threshold=inf sends NaN right
    x[rng.random(x.shape) < 0.15] = 0.0
    np.testing.assert_allclose(model.predict(x), booster.predict(x), rtol=0, atol=1e-12)
