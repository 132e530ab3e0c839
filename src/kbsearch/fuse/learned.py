"""Learned fusion: a small LambdaRank tree ensemble over features of both routes.

The hybrid route's candidates (the union of the lexical and dense top lists, each scored in
every route, :class:`kbsearch.fuse.convex.FusionCandidate`) are turned into one feature row
each (:data:`~kbsearch.fuse.features.FEATURES`, :func:`~kbsearch.fuse.features.features`)
and scored by a gradient-boosted tree ensemble trained
with LambdaRank (Burges, "From RankNet to LambdaRank to LambdaMART: An Overview", MSR-TR-2010-82;
LightGBM's ``lambdarank`` objective) on the pooled ``dev`` halves of the shared datasets
(``benchmarks/train_fusion.py``; the model ships as ``models/fusion_lgbm.txt`` and is evaluated
in numpy by :mod:`kbsearch.fuse.trees`).

The features are :mod:`kbsearch.fuse.features`'s (a candidate the lexical route does not
apply to included).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import cache, cached_property
from importlib import resources
from pathlib import Path

import numpy as np

from ..errors import ModelFormatError
from .convex import ConvexFused, FusionCandidate, evidence_order
from .features import FEATURES, LEXICAL, CollectionStats, feature_columns
from .trees import TreeEnsemble, parse_lightgbm

MODEL_RESOURCE = "fusion_lgbm.txt"
# which part of the explanation each feature's contribution adds to
PART_OF = {
    **{f: "lexical" for f in ("lexical_norm", "lexical_share", "lexical_rank")},
    **{f: "dense" for f in ("dense_norm", "dense_cos", "dense_gap", "dense_rank")},
    **{f: "title" for f in ("title_norm", "title_cos", "title_gap")},
    **{f: "agreement" for f in ("both", "agreement")},
    **{f: "fusions" for f in ("rrf", "convex")},
    **{f: "query" for f in ("lexical_top_gap", "dense_top_gap", "dense_max")},
    **{f: "collection" for f in ("titled_share", "unique_title_share", "passages_per_title")},
}


@cache
def shipped_model() -> TreeEnsemble:
    """The model shipped with kbsearch (``fuse/models/fusion_lgbm.txt``), loaded once.

    Raises:
        ModelFormatError: the file is malformed or its features are not :data:`FEATURES`.
    """
    text = resources.files("kbsearch.fuse").joinpath("models", MODEL_RESOURCE).read_text()
    return checked(parse_lightgbm(text))


def load_model(path: Path) -> TreeEnsemble:
    """A model file trained by ``benchmarks/train_fusion.py``.

    Raises:
        OSError: unreadable file. ModelFormatError: malformed, or other features.
    """
    return checked(parse_lightgbm(path.read_text(encoding="utf-8")))


def checked(model: TreeEnsemble) -> TreeEnsemble:
    """``model`` if every feature it reads is one of :data:`FEATURES` (a model may read a
    subset: the shipped one leaves the query and collection signals out).

    Raises:
        ModelFormatError: it reads a feature :mod:`kbsearch.fuse.features` does not compute.
    """
    unknown = [f for f in model.feature_names if f not in FEATURES]
    if unknown:
        raise ModelFormatError(f"fusion model reads unknown features {unknown}; retrain it")
    return model


def fuse_learned(
    candidates: Sequence[FusionCandidate],
    collection: CollectionStats,
    model: TreeEnsemble | None = None,
) -> list[ConvexFused]:
    """Candidates scored by the learned model (default: :func:`shipped_model`), best first;
    ties as :func:`kbsearch.fuse.convex.evidence_order` (more routes found it, better
    best rank, passage id).

    Each result's ``parts`` split its score by the groups of features the model reads (of
    ``lexical``, ``dense``, ``title``, ``agreement``, ``fusions`` (the ``rrf`` and ``convex``
    features), ``query``, ``collection``), plus
    the model's constant ``bias`` (:meth:`TreeEnsemble.contributions`): they add up to
    ``score`` (up to rounding, 1e-12). They are computed for all candidates at once on the
    first read of any result's parts (an explanation), not by a plain search.

    Raises:
        FusionError: a passage listed twice or an infinite score.
    """
    model = checked(model or shipped_model())
    columns = [FEATURES.index(f) for f in model.feature_names]
    rows, own_norm, dense_norm = feature_columns(candidates, collection)
    own, imputed = own_norm.tolist(), dense_norm.tolist()
    x = rows[:, columns]
    table = _PartsTable(model, x)
    fused = [
        ConvexFused(
            c.passage_id,
            score,
            _Parts(table, i),
            dict(c.ranks),
            {LEXICAL: (own[i], imputed[i])} if LEXICAL in c.not_applicable else {},
        )
        for i, (c, score) in enumerate(zip(candidates, model.predict(x).tolist(), strict=True))
    ]
    fused.sort(key=evidence_order)
    return fused


class _PartsTable:
    """The parts of every candidate of one fusion, computed on first use (thread-safe: a
    second thread computing them at the same time computes the same rows)."""

    def __init__(self, model: TreeEnsemble, x: np.ndarray) -> None:
        self._model, self._x = model, x

    @cached_property
    def rows(self) -> list[dict[str, float]]:
        contrib, bias = self._model.contributions(self._x)
        groups = sorted({PART_OF[f] for f in self._model.feature_names})
        names = self._model.feature_names
        member = np.array([[PART_OF[f] == g for g in groups] for f in names], float)
        return [
            {**dict(zip(groups, row, strict=True)), "bias": bias}
            for row in (contrib @ member).tolist()
        ]


class _Parts(Mapping[str, float]):
    """One candidate's parts, read from its :class:`_PartsTable` (a plain dict when pickled)."""

    def __init__(self, table: _PartsTable, row: int) -> None:
        self._table, self._row = table, row

    def __getitem__(self, key: str) -> float:
        return self._table.rows[self._row][key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.rows[self._row])

    def __len__(self) -> int:
        return len(self._table.rows[self._row])

    def __repr__(self) -> str:
        return repr(self._table.rows[self._row])

    def __reduce__(self) -> tuple[type[dict[str, float]], tuple[dict[str, float]]]:
        return dict, (dict(self),)
