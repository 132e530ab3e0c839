"""Learned fusion: a small LambdaRank tree ensemble over features of both routes.

The hybrid route's candidates (the union of the lexical and dense top lists, each scored in
every route, :class:`kbsearch.fuse.convex.FusionCandidate`) are turned into one feature row
each (:data:`FEATURES`, :func:`features`) and scored by a gradient-boosted tree ensemble trained
with LambdaRank (Burges, "From RankNet to LambdaRank to LambdaMART: An Overview", MSR-TR-2010-82;
LightGBM's ``lambdarank`` objective) on the pooled ``dev`` halves of the shared datasets
(``benchmarks/train_fusion.py``; the model ships as ``models/fusion_lgbm.txt`` and is evaluated
in numpy by :mod:`kbsearch.fuse.trees`).

Features per candidate (n candidates of one query):

- ``lexical_norm``, ``dense_norm``, ``title_norm``: the route's score min-max normalised over the
  candidates (Bruch, Gai & Ingber, ACM TOIS 2023), a candidate without a lexical or dense score
  taking that route's lowest; ``title_norm`` over the candidates with a title score only;
- ``dense_cos``, ``title_cos``: the raw cosines; ``lexical_share``: BM25 / the best BM25 (0 when
  no candidate matches a term); ``dense_gap``, ``title_gap``: best cosine minus the candidate's;
- ``lexical_rank``, ``dense_rank``: rank (from 1) in the route's top list, ``depth + 1`` when the
  route did not list it; ``both``: 1 when both routes listed it; the two fusions the trees
  start from: ``rrf`` (sum of ``1 / (10 + rank)``, Cormack, Clarke & Buettcher, SIGIR 2009, with
  the absent rank as above) and ``convex`` (``0.4 * lexical_norm + 0.6 * dense_norm``);
- query signals, the same for all its candidates: ``lexical_top_gap`` ((s1 - s2) / s1 of the two
  best BM25 scores), ``dense_top_gap`` (c1 - c2 of the two best cosines), ``dense_max`` (c1),
  ``agreement`` (share of the lexical top 10 also in the dense top 10);
- collection signals (:class:`CollectionStats`), so one model can treat a FAQ (every passage
  under its own question as title) unlike articles (many passages per title) without knowing
  the collection's name: ``titled_share``, ``unique_title_share``, ``passages_per_title``.

A title score is absent (or NaN) when the passage has no heading vector; its three title
features are then NaN, which the trees route by their learned default side.

A candidate the lexical route does not apply to (``FusionCandidate.not_applicable``: a passage in
another language than the query's, :mod:`kbsearch.retrieve.crosslang`) has no lexical evidence
*against* it: a lexical score of 0 there says nothing (read as "the words are not there", it
sank such passages: the demo's English question answered by a French page), but a lexical match
there (a product code, a name shared by both languages) is still evidence for it. So each of its
lexical features is the better of its own and the dense route's standing in for it, as if the
lexical route agreed with the dense one (the reading RRF and the convex fusion give a route that
does not apply, :mod:`kbsearch.fuse.rrf`, :mod:`kbsearch.fuse.convex`):
``lexical_norm`` = max(own, ``dense_norm``), ``lexical_share`` = max(own, ``dense_norm``),
``lexical_rank`` = min(own, ``dense_rank``), ``both`` = listed by the dense route, ``rrf`` =
max(own, ``2 / (10 + dense_rank)``), ``convex`` = max(own, ``dense_norm``). Its own
``lexical_norm`` and ``lexical_share`` use the statistics of the candidates the route applies to
(clipped to [0, 1]; when the route matched none of those, every candidate's, so a sole match
still counts); those alone give the lexical normalisation and the query's lexical signals.
The shipped model is monotone in each of these features (``train_fusion.py --monotone``), so more
lexical evidence never lowers a score. The dense reading was chosen on dev over NaN features
(with or without training copies that mark a random share of candidates lexical-missing,
``benchmarks/train_fusion.py cv --augment``): on simulated cross-language questions
(``benchmarks/crosslang_sim.py``) it ranked best, and it needs no retraining, so a one-language
index ranks exactly as before (docs/benchmarks.md); taking the better of it and the own evidence
keeps every simulated figure where the passage shares no word with the query and raises those
where it does.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from pathlib import Path

import numpy as np

from ..errors import FusionError, InvalidArgumentError, ModelFormatError
from .convex import ConvexFused, FusionCandidate, evidence_order
from .trees import TreeEnsemble, parse_lightgbm

MODEL_RESOURCE = "fusion_lgbm.txt"
DEPTH = 100  # the top-list depth the model was trained with (ranks beyond it read as DEPTH + 1)
TOP = 10  # the head compared by ``agreement``
RRF_K = 10.0  # the ``rrf`` feature: reciprocal rank fusion as the default hybrid route ranks
CONVEX_DENSE = 0.6  # the ``convex`` feature's dense weight (the best dev setting, issue 13)
LEXICAL = "lexical"

FEATURES = (
    "lexical_norm",
    "dense_norm",
    "title_norm",
    "dense_cos",
    "title_cos",
    "lexical_share",
    "dense_gap",
    "title_gap",
    "lexical_rank",
    "dense_rank",
    "both",
    "rrf",
    "convex",
    "lexical_top_gap",
    "dense_top_gap",
    "dense_max",
    "agreement",
    "titled_share",
    "unique_title_share",
    "passages_per_title",
)
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


@dataclass(frozen=True)
class CollectionStats:
    """Counts over the passages an audience may see (the fields of
    :class:`kbsearch.retrieve.backend.TitleCounts`, which
    :func:`kbsearch.index.headings.title_counts` computes from a store).

    ``passages``: passages; ``titled``: those whose document has a title of its own (not the
    one the indexer makes from the document id); ``unique_titled``: titled passages whose title
    heads no other passage; ``titles``: distinct titles among the titled passages.

    The shipped model reads none of these (leave-one-dataset-out on dev showed no gain from
    them, docs/benchmarks.md); they are part of the signature so that a model trained with the
    collection features (``benchmarks/train_fusion.py --variant all``) can be dropped in.

    Raises (at construction):
        InvalidArgumentError: a negative count, or counts that cannot hold together
            (``unique_titled <= titles <= titled <= passages``).
    """

    passages: int
    titled: int
    unique_titled: int
    titles: int

    def __post_init__(self) -> None:
        if not 0 <= self.unique_titled <= self.titles <= self.titled <= self.passages:
            raise InvalidArgumentError(
                "collection counts must satisfy 0 <= unique_titled <= titles <= titled"
                f" <= passages, got {self}"
            )

    @classmethod
    def from_titles(cls, titles: Sequence[str | None]) -> CollectionStats:
        """From one entry per passage: its document's title, or ``None`` / ``""`` when it has
        none of its own."""
        counts: dict[str, int] = {}
        for title in titles:
            if title:
                counts[title] = counts.get(title, 0) + 1
        unique = sum(1 for n in counts.values() if n == 1)
        return cls(len(titles), sum(counts.values()), unique, len(counts))

    def vector(self) -> tuple[float, float, float]:
        """``(titled_share, unique_title_share, passages_per_title)``; shares of all passages,
        passages per distinct title (0 when no passage has a title)."""
        n = max(self.passages, 1)
        per_title = self.titled / self.titles if self.titles else 0.0
        return self.titled / n, self.unique_titled / n, per_title


def _minmax(x: np.ndarray) -> np.ndarray:
    present = ~np.isnan(x)
    if not present.any():
        return x.copy()
    low, high = float(x[present].min()), float(x[present].max())
    return (x - low) / (high - low) if high > low else np.where(present, 0.0, np.nan)


def _minmax_as(x: np.ndarray, raw: np.ndarray, applies: np.ndarray) -> np.ndarray:
    """:func:`_minmax` of ``x`` (NaN where the route does not apply), and for those NaN rows
    ``raw`` (their own score) put on the same scale, clipped to [0, 1]."""
    out = _minmax(x)
    fitted = x[applies & ~np.isnan(x)]
    if (~applies).any() and fitted.size and fitted.max() > fitted.min():
        low, high = float(fitted.min()), float(fitted.max())
        out = np.where(applies, out, np.clip((raw - low) / (high - low), 0.0, 1.0))
    elif (~applies).any() and raw.max() > raw.min():
        # the route gave the candidates it applies to no spread (none matched): the others'
        # own scores are put on the scale of every candidate's, so a sole match still counts
        low, high = float(raw.min()), float(raw.max())
        out = np.where(applies, out, (raw - low) / (high - low))
    elif (~applies).any():
        out = np.where(applies, out, 0.0)
    return out


def _route_scores(candidates: Sequence[FusionCandidate], route: str) -> np.ndarray:
    raw = np.array([c.scores.get(route, math.nan) for c in candidates], dtype=np.float64)
    if np.isinf(raw).any():
        raise FusionError(f"route {route!r} gives a candidate a non-finite score")
    return raw


def features(candidates: Sequence[FusionCandidate], collection: CollectionStats) -> np.ndarray:
    """One row of :data:`FEATURES` per candidate, in order: shape ``(n, len(FEATURES))``.

    Raises:
        FusionError: a passage listed twice or an infinite score.
    """
    return _features(candidates, collection)[0]


def _features(
    candidates: Sequence[FusionCandidate], collection: CollectionStats
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`features`, and per candidate its own ``lexical_norm`` and the dense route's
    (``dense_norm``, the imputed one)."""
    ids = [c.passage_id for c in candidates]
    if len(set(ids)) != len(ids):
        raise FusionError("a passage is listed twice among the candidates")
    n = len(candidates)
    out = np.full((n, len(FEATURES)), np.nan)
    if n == 0:
        return out, np.zeros(0), np.zeros(0)
    lexical = _route_scores(candidates, "lexical")
    dense = _route_scores(candidates, "dense")
    title = _route_scores(candidates, "title")
    applies = np.array([LEXICAL not in c.not_applicable for c in candidates], dtype=bool)
    # a route that did not score a candidate: its lowest score (over those it applies to)
    for raw, where in ((lexical, applies), (dense, np.ones(n, dtype=bool))):
        present = ~np.isnan(raw) & where
        raw[~present & where] = raw[present].min() if present.any() else 0.0
    # the lexical scores of the candidates the route does not apply to (their own evidence,
    # the lowest applying score where absent) stay aside; the route's statistics ignore them
    low = lexical[applies & ~np.isnan(lexical)].min() if applies.any() else 0.0
    raw_lexical = np.where(np.isnan(lexical), low, lexical)
    lexical[~applies] = np.nan
    ranks = {
        route: np.array([min(c.ranks.get(route, DEPTH + 1), DEPTH + 1) for c in candidates])
        for route in ("lexical", "dense")
    }
    lex_sorted = np.sort(lexical[applies])[::-1]
    dense_sorted = np.sort(dense)[::-1]
    top_lex = lex_sorted[0] if len(lex_sorted) else 0.0
    second = lex_sorted[1] if len(lex_sorted) > 1 else 0.0
    head = {
        "lexical": set(np.flatnonzero(applies & (ranks["lexical"] <= TOP)).tolist()),
        "dense": set(np.flatnonzero(ranks["dense"] <= TOP).tolist()),
    }
    has_title = ~np.isnan(title)
    title_max = title[has_title].max() if has_title.any() else np.nan
    dense_norm = _minmax(dense)
    rrf_dense = 1 / (RRF_K + ranks["dense"])
    listed = (ranks["lexical"] <= DEPTH) & (ranks["dense"] <= DEPTH)
    lexical_norm = _minmax_as(lexical, raw_lexical, applies)
    # the best applying BM25, or every candidate's best when none of those matched
    top_share = top_lex if top_lex > 0 else float(raw_lexical.max())
    share = np.minimum(raw_lexical / top_share, 1.0) if top_share > 0 else np.zeros(n)
    own = {
        "lexical_norm": lexical_norm,
        "lexical_share": share,
        "lexical_rank": ranks["lexical"].astype(np.float64),
        "both": listed.astype(np.float64),
        "rrf": 1 / (RRF_K + ranks["lexical"]) + rrf_dense,
        "convex": (1 - CONVEX_DENSE) * lexical_norm + CONVEX_DENSE * dense_norm,
    }
    # a candidate the lexical route does not apply to: per feature, the better of its own
    # lexical evidence and the dense route's standing in for it (module docstring)
    imputed = {
        "lexical_norm": dense_norm,
        "lexical_share": dense_norm,
        "lexical_rank": ranks["dense"].astype(np.float64),
        "both": (ranks["dense"] <= DEPTH).astype(np.float64),
        "rrf": 2 * rrf_dense,
        "convex": dense_norm,
    }
    better = {name: np.minimum if name == "lexical_rank" else np.maximum for name in own}
    columns: dict[str, np.ndarray | float] = {
        name: np.where(applies, own[name], better[name](own[name], imputed[name])) for name in own
    }
    columns |= {
        "dense_norm": dense_norm,
        "title_norm": _minmax(title),
        "dense_cos": dense,
        "title_cos": title,
        "dense_gap": dense_sorted[0] - dense,
        "title_gap": title_max - title,
        "dense_rank": ranks["dense"].astype(np.float64),
        "lexical_top_gap": (top_lex - second) / top_lex if top_lex > 0 else 0.0,
        "dense_top_gap": dense_sorted[0] - (dense_sorted[1] if n > 1 else dense_sorted[0]),
        "dense_max": dense_sorted[0],
        "agreement": len(head["lexical"] & head["dense"]) / TOP,
    }
    columns.update(zip(FEATURES[-3:], collection.vector(), strict=True))
    for j, name in enumerate(FEATURES):
        out[:, j] = columns[name]
    return out, lexical_norm, dense_norm


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
        ModelFormatError: it reads a feature this module does not compute.
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
    rows, own_norm, dense_norm = _features(candidates, collection)
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
