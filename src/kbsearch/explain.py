"""Why a passage is where it is: its rank and score in each route, the BM25 contribution of
each query term, its cosine similarity, and its RRF contributions adding up to the fused score.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np

from .analysis import Analyzer, fold_diacritics
from .dense import DenseIndex
from .embedders import Embedder
from .fusion import Contribution, reciprocal_rank_fusion
from .lexical import BM25Explanation, explain_bm25, query_languages
from .records import Filters
from .store import PassageRow, Store


class Searcher(Protocol):
    """What an explanation reads from a knowledge base (:class:`KnowledgeBase` is one); a
    protocol, so that this module does not import the facade that imports it."""

    store: Store

    @property
    def analyzer(self) -> Analyzer: ...

    def ranking(
        self, route: str, query: str, filters: Filters, depth: int
    ) -> list[tuple[str, float]]: ...

    def embedder(self) -> Embedder | None: ...

    def dense_index(self) -> DenseIndex: ...

    def query_vector(self, query: str) -> np.ndarray: ...


@dataclass(frozen=True)
class RoutePosition:
    """Rank (from 1; ``None`` when outside the route's top ``depth``) and score in a route."""

    rank: int | None
    score: float | None


@dataclass(frozen=True)
class Explanation:
    query: str
    passage_id: str
    terms: tuple[str, ...]
    lexical: RoutePosition
    bm25: BM25Explanation
    dense: RoutePosition | None
    rrf_k: float
    weights: tuple[float, float]
    rrf: Mapping[str, Contribution] = field(default_factory=dict)
    fused: RoutePosition = RoutePosition(None, None)

    @property
    def rrf_total(self) -> float:
        """Sum of the RRF contributions (equals ``fused.score`` when the passage is fused)."""
        return math.fsum(c.value for c in self.rrf.values())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields, with the BM25 sum and ``rrf_total``."""
        out = asdict(self)
        out["bm25"]["score"] = self.bm25.score
        out["rrf_total"] = self.rrf_total
        return out


def _position(ranking: Sequence[tuple[str, float]], passage_id: str) -> RoutePosition:
    for rank, (pid, score) in enumerate(ranking, start=1):
        if pid == passage_id:
            return RoutePosition(rank, score)
    return RoutePosition(None, None)


def explain_passage(
    kb: Searcher,
    query: str,
    row: PassageRow,
    filters: Filters,
    *,
    rrf_k: float,
    depth: int,
    weights: Sequence[float],
) -> Explanation:
    """Build the explanation of one visible passage (the caller checked visibility)."""
    terms = kb.analyzer.query_terms(query, query_languages(kb.store, filters))
    lexical_ranking = kb.ranking("lexical", query, filters, depth)
    folded = [fold_diacritics(t) for t in terms]
    bm25 = explain_bm25(kb.store, folded, row.row_id, filters.audience)
    lexical = _position(lexical_ranking, row.passage.passage_id)
    if lexical.rank is None and bm25.score > 0:
        lexical = RoutePosition(None, bm25.score)
    rankings = {"lexical": lexical_ranking}
    dense: RoutePosition | None = None
    if kb.embedder() is not None:
        rankings["dense"] = kb.ranking("dense", query, filters, depth)
        dense = _position(rankings["dense"], row.passage.passage_id)
        if dense.rank is None:
            index = kb.dense_index()
            at = np.flatnonzero(index.table.row_ids == row.row_id)
            if len(at):
                cosine = float(index.table.vectors[at[0]] @ kb.query_vector(query))
                dense = RoutePosition(None, cosine)
    route_weights = {"lexical": float(weights[0]), "dense": float(weights[1])}
    fused = reciprocal_rank_fusion(rankings, k=rrf_k, weights=route_weights)
    fused_position = _position([(f.passage_id, f.score) for f in fused], row.passage.passage_id)
    contributions = next(
        (f.contributions for f in fused if f.passage_id == row.passage.passage_id), {}
    )
    return Explanation(
        query=query,
        passage_id=row.passage.passage_id,
        terms=tuple(terms),
        lexical=lexical,
        bm25=bm25,
        dense=dense,
        rrf_k=rrf_k,
        weights=(route_weights["lexical"], route_weights["dense"]),
        rrf=dict(contributions),
        fused=fused_position,
    )
