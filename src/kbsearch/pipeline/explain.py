"""Why a passage is where it is, read from a pipeline :class:`~kbsearch.ranking.trace.Trace`:
its rank and score in each route, the BM25 contribution of each query term, its cosine
similarity, and its RRF contributions adding up to the fused score; under a score fusion
(``convex``...), its score in every route (and ``title``) and each part of its fused score
instead of RRF's. A route that does not apply to the passage (the lexical route for a passage in
another language than the query's, :mod:`kbsearch.retrieve.crosslang`) is named with the reason
in ``not_applicable`` and, in ``read``, its own part and the one imputed from the routes that
apply, of which fusion counted the larger (a 0 there is not evidence against it, a match
is evidence for it). :meth:`Explanation.legend` and :meth:`Explanation.reading` word it for
the CLI and the search page alike. After a reranker, its score there and the rank it moved
from and to.

Nothing here retrieves: ranks and scores come from the trace of the very run that produced
the hits; only the per-term BM25 breakdown and, for a passage outside a route's list, its
score there are looked up for that one passage.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..fuse.rrf import Contribution
from ..ranking.trace import Trace
from ..rerank.stage import RerankReport
from ..retrieve.lexical.bm25 import BM25Explanation


@dataclass(frozen=True)
class RoutePosition:
    """Rank (from 1; ``None`` when outside the route's top ``depth``) and score in a route."""

    rank: int | None
    score: float | None


@dataclass(frozen=True)
class RerankPosition:
    """What a reranker did to the passage: its rank before and after the stage (from 1;
    ``None`` when outside the list), the reranker's score (``None``: not scored, below
    ``top_n`` or after the budget ran out), and the stage's report (passages scored, whether
    the budget ran out, its wall time in ms)."""

    reranker: str
    before: int | None
    after: int | None
    score: float | None
    top_n: int
    scored: int
    stopped: bool
    elapsed_ms: float

    @classmethod
    def of(
        cls,
        report: RerankReport,
        before: int | None = None,
        after: int | None = None,
        score: float | None = None,
    ) -> RerankPosition:
        """The passage's ranks and score beside the stage's ``report`` (without them: the
        stage's part alone)."""
        return cls(report.reranker, before, after, score, report.top_n, report.scored,
                   report.stopped, report.elapsed_ms)  # fmt: skip


@dataclass(frozen=True)
class Explanation:
    query: str
    passage_id: str
    terms: tuple[str, ...]
    lexical: RoutePosition
    bm25: BM25Explanation
    dense: RoutePosition | None
    rrf_k: float
    weights: tuple[float, ...]
    rrf: Mapping[str, Contribution] = field(default_factory=dict)
    fused: RoutePosition = RoutePosition(None, None)
    fusion: str = "rrf"
    scores: Mapping[str, float] = field(default_factory=dict)  # a score fusion's inputs
    parts: Mapping[str, float] = field(default_factory=dict)  # ... and its fused score's parts
    # routes that do not apply to the passage, with why ("document in fr, query in en")
    not_applicable: Mapping[str, str] = field(default_factory=dict)
    # for each of them: (its own part, the part imputed from the routes that apply); fusion
    # counted the larger. RRF: own = weight / (k + its rank there), 0 when it did not list it;
    # convex: weight x normalised score; learned: its own lexical_norm and the dense route's
    read: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    rerank: RerankPosition | None = None

    @property
    def parts_total(self) -> float:
        """Sum of a score fusion's parts (equals ``fused.score`` when the passage is fused)."""
        return math.fsum(self.parts.values())

    @property
    def rrf_parts(self) -> dict[str, float]:
        """RRF: each route's part of the fused score, its contribution, or for a route in
        ``read`` the larger of its own and the imputed one."""
        parts = {r: c.value for r, c in sorted(self.rrf.items())}
        return parts | {r: max(pair) for r, pair in sorted(self.read.items())}

    @property
    def rrf_total(self) -> float:
        """Sum of :attr:`rrf_parts` (equals ``fused.score`` when the passage is fused, up to
        rounding)."""
        return math.fsum(self.rrf_parts.values())

    def legend(self) -> str:
        """What "fused" and "part" mean for this explanation's fusion, in one sentence."""
        if self.fusion == "rrf":
            how = "weight / (k + its rank there)"
        elif self.fusion.startswith("learned"):
            how = (
                "what the model's trees add for that group of features (fusions: its rrf and"
                " convex features; query, collection: signals shared by all candidates; bias:"
                " the model's constant)"
            )
        else:
            how = "its weight x its score normalised over this query's candidates"
        return (
            "fused score: the hybrid route's score, which orders the results; each route's part"
            f" of it: {how}; the parts add up to the fused score"
        )

    def reading(self, route: str) -> str:
        """Why ``route`` does not count against the passage and what fusion read instead
        (empty when the route applies)."""
        if route not in self.not_applicable:
            return ""
        own, imputed = self.read.get(route, (0.0, 0.0))
        if self.fusion.startswith("learned"):
            what, source = "its lexical_norm", "the dense route's"
            every = " (likewise each lexical feature: its own or the dense route's, the better)"
        else:
            what, source, every = "its part", "imputed from the routes that apply", ""
        return (
            f"{self.not_applicable[route]}: a low {route} score does not count against it; fusion"
            f" reads {what} as max(own {own:.4f}, {source} {imputed:.4f})"
            f" = {max(own, imputed):.4f}{every}"
        )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["bm25"]["score"] = self.bm25.score
        out["rrf_total"] = self.rrf_total
        out["rrf_parts"] = self.rrf_parts if self.rrf else {}
        out["legend"] = self.legend() if self.fused.score is not None else ""
        out["reading"] = {r: self.reading(r) for r in self.not_applicable}
        if self.parts:
            out["parts_total"] = self.parts_total
        return out


def position(ranking: Sequence[tuple[str, float]], passage_id: str) -> RoutePosition:
    """Where ``passage_id`` is in ``ranking`` (rank from 1), or ``(None, None)``."""
    for rank, (pid, score) in enumerate(ranking, start=1):
        if pid == passage_id:
            return RoutePosition(rank, score)
    return RoutePosition(None, None)


def rerank_position(trace: Trace, passage_id: str) -> RerankPosition | None:
    """What the last reranking stage of ``trace`` did to ``passage_id`` (``None`` when no
    reranker ran)."""
    found = [(s, s.verdict) for s in trace.stages if isinstance(s.verdict, RerankReport)]
    if not found:
        return None
    stage, report = found[-1]
    before, after = position(stage.input, passage_id), position(stage.output, passage_id)
    return RerankPosition.of(report, before.rank, after.rank, report.score_of(passage_id))


def explain_from_trace(
    trace: Trace,
    passage_id: str,
    terms: Sequence[str],
    bm25: BM25Explanation,
    cosine: float | None,
    has_dense: bool,
    document_language: str | None = None,
) -> Explanation:
    """The explanation of one visible passage from ``trace``.

    ``bm25`` is its per-term breakdown; ``cosine`` its similarity to the query (used when it
    is outside the dense list); ``has_dense``: the index has vectors; ``document_language``:
    its document's language (named when a route did not apply to it).
    """
    lexical = position(trace.routes.get("lexical", ()), passage_id)
    if lexical.rank is None and bm25.score > 0:
        lexical = RoutePosition(None, bm25.score)
    dense: RoutePosition | None = None
    if has_dense:
        dense = position(trace.routes.get("dense", ()), passage_id)
        if dense.rank is None and cosine is not None:
            dense = RoutePosition(None, cosine)
    fused_list = trace.fused or ()
    fused = position([(f.passage_id, f.score) for f in fused_list], passage_id)
    entry = next((f for f in fused_list if f.passage_id == passage_id), None)
    contributions = entry.contributions if entry else {}
    missing = entry.not_applicable if entry else frozenset()
    read = {r: (entry.own(r), v) for r, v in entry.imputed.items()} if entry else {}
    scores: Mapping[str, float] = {}
    parts: Mapping[str, float] = {}
    if trace.scored is not None:
        fused = position([(f.passage_id, f.score) for f in trace.scored], passage_id)
        scored = next((f for f in trace.scored if f.passage_id == passage_id), None)
        parts = scored.parts if scored else {}
        read = dict(scored.read) if scored else {}
        candidate = next((c for c in trace.candidates or () if c.passage_id == passage_id), None)
        scores = candidate.scores if candidate else {}
        missing = candidate.not_applicable if candidate else frozenset()
    why = f"document in {document_language}, query in {trace.query_language}"
    return Explanation(
        rerank=rerank_position(trace, passage_id),
        query=trace.query,
        passage_id=passage_id,
        terms=tuple(terms),
        lexical=lexical,
        bm25=bm25,
        dense=dense,
        rrf_k=trace.rrf_k,
        weights=tuple(trace.weights.values()),
        rrf=dict(contributions),
        fused=fused,
        fusion=trace.fusion,
        scores=dict(scores),
        parts=dict(parts),
        not_applicable={route: why for route in sorted(missing)},
        read=read,
    )
