"""A gradient-boosted tree ensemble read from LightGBM's text model format, evaluated in numpy.

LightGBM (Ke et al., "LightGBM: A Highly Efficient Gradient Boosting Decision Tree", NeurIPS
2017) trains the model (``benchmarks/train_fusion.py``); searching only needs numpy, so LightGBM
is a training-time dependency (the ``rank`` extra), not a runtime one.

Only numerical splits are supported (no categorical features, no linear trees), with LightGBM's
missing-value rule per split (``decision_type`` bits: 1 categorical, 2 default-left, bits 3-4
the missing type: 0 none, 1 zero, 2 NaN; ``tree.h``, ``NumericalDecision``):

- a NaN value is replaced by 0 unless the missing type is NaN;
- missing type zero and ``|x| <= 1e-35``, or missing type NaN and x is NaN: go to the split's
  default side;
- otherwise go left when ``x <= threshold``.

The prediction is the sum over trees of the leaf reached. :meth:`TreeEnsemble.contributions`
splits it along each row's paths (Saabas, "Interpreting random forests", 2014): each split moves
the node value from the parent's to the child's, and that change is credited to the split's
feature; the root values form the bias, so bias + contributions = prediction.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ..errors import ModelFormatError

ZERO_THRESHOLD = 1e-35
# the five copies of a row a split may read: NaN as 0 (no missing type); NaN to the left or to
# the right (missing type NaN, default left / right); zero (or NaN) to the left or to the right
# (missing type zero)
VARIANTS = ("nan as 0", "nan left", "nan right", "zero left", "zero right")
CATEGORICAL, DEFAULT_LEFT = 1, 2
MISSING_ZERO, MISSING_NAN = 1, 2


@dataclass(frozen=True)
class TreeEnsemble:
    """All trees flattened into one node space (internal nodes and leaves alike); a leaf's
    children are itself, so every row can take ``depth`` steps.

    ``feature``, ``threshold``, ``default_left``, ``missing``, ``left``, ``right`` and ``value``
    have one entry per node (``value``: the leaf value, or the internal value LightGBM records
    for an internal node; ``column``: which of :data:`VARIANTS` copies of the row the split
    reads, as ``variant * features + feature``); ``roots`` one per tree.
    """

    feature_names: tuple[str, ...]
    feature: np.ndarray
    threshold: np.ndarray
    default_left: np.ndarray
    missing: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    roots: np.ndarray
    depth: int
    column: np.ndarray

    @cached_property
    def _children(self) -> np.ndarray:
        """Both children of every node, in one array indexed by *edge*: node ``i`` goes to
        ``[2 * i + left]`` (``left`` 1 when the split sends it left)."""
        return np.stack([self.right, self.left], axis=1).ravel()

    @cached_property
    def _edge_delta(self) -> np.ndarray:
        """Per edge: the child's value minus the parent's (0 from a leaf to itself)."""
        return self.value[self._children] - np.repeat(self.value, 2)

    @cached_property
    def _edge_feature(self) -> np.ndarray:
        """Per edge: the parent's split feature."""
        return np.repeat(self.feature, 2)

    def _walk(self, x: np.ndarray) -> list[np.ndarray]:
        """The node of every (row, tree) at each step, from the roots to the leaves."""
        roots, edges = self._edges(x)
        return [roots, *(self._children[edge] for edge in edges)]

    def _edges(self, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """The roots (shape ``(rows, trees)``) and the edge every (row, tree) takes at each
        step (:attr:`_children`), down to the leaves.

        The missing-value rule is applied to ``x`` once, not per split: each split reads one of
        five copies of the row (:data:`VARIANTS`: NaN as 0, or the split's default side written
        as -inf, left of every threshold, or as NaN, right of every threshold: a comparison
        with NaN is false, where +inf would go left of a split at ``threshold=inf``, which
        LightGBM writes and the shipped model has).
        """
        if x.ndim != 2 or x.shape[1] != len(self.feature_names):
            raise ModelFormatError(
                f"expected rows of {len(self.feature_names)} features, got shape {x.shape}"
            )
        nan = np.isnan(x)
        zero = np.where(nan, 0.0, x)
        tiny = np.abs(zero) <= ZERO_THRESHOLD
        copies = np.hstack(
            [
                zero,
                np.where(nan, -np.inf, x),
                x,  # NaN stays NaN: always right
                np.where(tiny, -np.inf, zero),
                np.where(tiny, np.nan, zero),
            ]
        ).ravel()
        offset = np.arange(x.shape[0])[:, None] * (len(VARIANTS) * x.shape[1])
        # contiguous index arrays and np.take: indexing through a broadcast (stride 0) array
        # cost several times more (~1 ms a search for 150 candidates x 100 trees)
        roots = node = np.repeat(self.roots[None, :], x.shape[0], axis=0)
        edges = []
        for _ in range(self.depth):
            left = np.take(copies, np.take(self.column, node) + offset) <= np.take(
                self.threshold, node
            )
            edge = node * 2
            edge += left
            node = np.take(self._children, edge)
            edges.append(edge)
        return roots, edges

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Scores of the rows of ``x`` (shape ``(n, features)``, float64) -> shape ``(n,)``.

        Raises:
            ModelFormatError: ``x`` has the wrong number of columns.
        """
        leaves = self._walk(np.asarray(x, dtype=np.float64))[-1]
        return np.asarray(self.value[leaves].sum(axis=1), dtype=np.float64)

    def contributions(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        """Per-feature contributions (shape ``(n, features)``) and the bias, so that
        ``contributions.sum(axis=1) + bias == predict(x)`` (up to rounding).

        Raises:
            ModelFormatError: ``x`` has the wrong number of columns.
        """
        x = np.asarray(x, dtype=np.float64)
        _, edges = self._edges(x)
        n, width = x.shape
        slot = (np.arange(n) * width)[:, None]
        total = np.zeros(n * width, dtype=np.float64)
        for edge in edges:
            total += np.bincount(
                (slot + self._edge_feature[edge]).ravel(),
                self._edge_delta[edge].ravel(),
                minlength=n * width,
            )
        return total.reshape(n, width), float(self.value[self.roots].sum())


def _numbers(fields: dict[str, str], key: str, kind: type) -> np.ndarray:
    text = fields.get(key, "").strip()
    return np.array([kind(v) for v in text.split()] if text else [], dtype=kind)


def parse_lightgbm(text: str) -> TreeEnsemble:
    """A :class:`TreeEnsemble` from the text of a LightGBM model file (``Booster.save_model``).

    Raises:
        ModelFormatError: no trees, a categorical split or a linear tree, or a malformed tree.
    """
    header, _, body = text.partition("\nTree=")
    head = dict(line.split("=", 1) for line in header.splitlines() if "=" in line)
    if "feature_names" not in head or not body:
        raise ModelFormatError("not a LightGBM text model (no feature_names or no trees)")
    names = tuple(head["feature_names"].split())
    body = body.split("\nend of trees", 1)[0]
    feature: list[np.ndarray] = []
    threshold: list[np.ndarray] = []
    dleft: list[np.ndarray] = []
    missing: list[np.ndarray] = []
    left: list[np.ndarray] = []
    right: list[np.ndarray] = []
    value: list[np.ndarray] = []
    roots: list[int] = []
    depth, base = 0, 0
    for block in body.split("\nTree="):
        fields = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
        if fields.get("is_linear", "0") != "0" or fields.get("num_cat", "0") != "0":
            raise ModelFormatError("linear trees and categorical splits are not supported")
        leaf_value = _numbers(fields, "leaf_value", float)
        n_leaves = leaf_value.size
        if n_leaves == 0 or int(fields.get("num_leaves", -1)) != n_leaves:
            raise ModelFormatError("a tree's leaf count does not match its leaf values")
        n_internal = n_leaves - 1
        decision = _numbers(fields, "decision_type", int)
        if (decision & CATEGORICAL).any():
            raise ModelFormatError("categorical splits are not supported")
        lc, rc = _numbers(fields, "left_child", int), _numbers(fields, "right_child", int)
        internal = _numbers(fields, "internal_value", float)
        if n_internal and not (lc.size == rc.size == decision.size == internal.size == n_internal):
            raise ModelFormatError("a tree's split arrays differ in length")

        own = np.arange(base + n_internal, base + n_internal + n_leaves)
        feature += [_numbers(fields, "split_feature", int), np.zeros(n_leaves, dtype=int)]
        threshold += [_numbers(fields, "threshold", float), np.zeros(n_leaves)]
        dleft += [(decision & DEFAULT_LEFT) > 0, np.zeros(n_leaves, dtype=bool)]
        missing += [(decision >> 2) & 3, np.zeros(n_leaves, dtype=int)]
        left += [_to_global(lc, base, n_internal), own]
        right += [_to_global(rc, base, n_internal), own]
        value += [internal, leaf_value]
        roots.append(base if n_internal else base + n_internal)
        depth = max(depth, _depth(lc, rc))
        base += n_internal + n_leaves
    split = np.concatenate(feature)
    default_left, missing_type = np.concatenate(dleft), np.concatenate(missing)
    variant = np.select(
        [
            (missing_type == MISSING_NAN) & default_left,
            missing_type == MISSING_NAN,
            (missing_type == MISSING_ZERO) & default_left,
            missing_type == MISSING_ZERO,
        ],
        [1, 2, 3, 4],
        default=0,
    )
    return TreeEnsemble(
        names,
        split,
        np.concatenate(threshold),
        default_left,
        missing_type,
        np.concatenate(left),
        np.concatenate(right),
        np.concatenate(value),
        np.array(roots),
        depth,
        variant * len(names) + split,
    )


def _to_global(child: np.ndarray, base: int, n_internal: int) -> np.ndarray:
    """A tree's child array (node index, or ``~leaf index`` for a leaf) in the flat node space
    (the tree's internal nodes from ``base``, then its leaves)."""
    return np.where(child >= 0, base + child, base + n_internal + ~child)


def _depth(left: np.ndarray, right: np.ndarray) -> int:
    """Longest root-to-leaf path (in splits) of one tree's child arrays."""
    if left.size == 0:
        return 0
    deepest, stack = 0, [(0, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        stack += [(int(c), d + 1) for c in (left[node], right[node]) if c >= 0]
    return deepest


def load_lightgbm(path: Path) -> TreeEnsemble:
    """:func:`parse_lightgbm` of a file.

    Raises:
        OSError: the file cannot be read.
        ModelFormatError: see :func:`parse_lightgbm`.
    """
    return parse_lightgbm(path.read_text(encoding="utf-8"))
