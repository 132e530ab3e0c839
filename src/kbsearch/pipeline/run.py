"""The search pipeline: routes -> fusion -> stages -> hits, with a trace of every step.

    query, filters --> each route's candidates (top depth, filters applied first)
                   --> fusion (RRF over the routes' lists; hybrid only, or to explain)
                   --> stages (a request's reranker, then the pipeline's own: abstain)
                   --> top k hits  +  Trace (read by kbsearch.pipeline.explain)

One run serves ``search``, ``search --explain`` and ``explain``, so they always agree. The
request it runs is :class:`kbsearch.pipeline.request.SearchRequest`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import StorageError, _IndexChanged
from ..filters import Filters, check_language
from ..fuse.convex import ConvexFused, FusionCandidate
from ..fuse.methods import RRF, parse_fusion, score_fusion
from ..fuse.rrf import Fused, reciprocal_rank_fusion
from ..ranking.stages import JudgingStage, ReportingStage, Run, Stage
from ..ranking.trace import StageTrace, Trace
from ..records import Hit, PassageRow, RouteHit
from ..rerank.rerankers import RerankSettings, load_reranker
from ..rerank.stage import RerankStage
from ..retrieve.backend import Backend
from ..retrieve.crosslang import not_applicable, query_language_among
from ..retrieve.lexical.terms import query_languages
from ..retrieve.query import Query
from ..retrieve.routes import HYBRID, Route, Scorer
from .request import SearchRequest

ATTEMPTS = 5  # runs of one search when another writer removes a hit's passage meanwhile


class RunRows:
    """The stored passages one run reads, by id (unfiltered), each read once: the first read
    also takes the passages :meth:`expect` named (the hits to be), so a run that judges its
    list reads the judge's passages and its hits' rows in one statement."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._rows: dict[str, PassageRow] = {}
        self._read: set[str] = set()
        self._expected: list[str] = []

    def expect(self, passage_ids: Sequence[str]) -> None:
        """Read ``passage_ids`` too with the next read."""
        self._expected = [p for p in passage_ids if p not in self._read]

    def __call__(self, passage_ids: Sequence[str]) -> dict[str, PassageRow]:
        """``{passage_id: row}`` of the stored passages among ``passage_ids``."""
        wanted = list(dict.fromkeys(passage_ids))
        missing = [p for p in wanted if p not in self._read]
        if missing:
            missing = list(dict.fromkeys([*missing, *self._expected]))
            self._expected = []
            self._rows.update(self.backend.passages(missing))
            self._read.update(missing)
        return {p: self._rows[p] for p in wanted if p in self._rows}


@dataclass(frozen=True)
class SearchResult:
    """A run's hits, its trace and its analysed query (whose vector and terms a caller
    reading more of the same run, an explanation or a page's snippets, reuses)."""

    hits: list[Hit]
    trace: Trace
    query: Query


class Pipeline:
    """Runs a :class:`SearchRequest` over ``routes`` (registry order) and ``stages`` (in
    order; a :class:`~kbsearch.ranking.stages.JudgingStage` passes the list on unchanged and
    its verdict is recorded in the trace); ``scorers`` give a score fusion's extra scores
    (``title``)."""

    def __init__(
        self,
        backend: Backend,
        routes: Mapping[str, Route],
        stages: Sequence[Stage | JudgingStage] = (),
        scorers: Mapping[str, Scorer] | None = None,
    ) -> None:
        self.backend = backend
        self.routes = dict(routes)
        self.stages = tuple(stages)
        self.scorers = dict(scorers or {})

    def plan(self, request: SearchRequest) -> list[str]:
        """The routes a request runs: all for hybrid; the one asked for, plus every other
        available route when explaining."""
        if request.route == HYBRID:
            return list(self.routes)
        if not request.explain:
            return [request.route]
        return [
            name
            for name, route in self.routes.items()
            if name == request.route or route.available()
        ]

    def run(self, request: SearchRequest) -> SearchResult:
        """The top ``k`` hits and the trace. A run whose hit was removed by another writer
        before its passage was read runs again (on the new snapshot).

        Raises:
            QueryError, InvalidArgumentError (also: a language the audience's passages do not
            have), EmbedderMismatchError, EmbedderUnavailableError,
            RerankerUnavailableError.
            StorageError: the index changed under ``ATTEMPTS`` runs in a row.
        """
        for _ in range(ATTEMPTS):
            try:
                return self._run(request)
            except _IndexChanged:
                continue
        raise StorageError(f"the index changed under {ATTEMPTS} searches in a row; try again")

    def _run(self, request: SearchRequest) -> SearchResult:
        # analysed once for the run: every route, scorer and stage reads this one
        query, filters = Query(request.query), request.filters
        check_language(filters, self.backend.languages(str(filters.audience)))
        names = self.plan(request)
        # explaining one route also shows where hybrid would put the passage, when there is a
        # hybrid: an index without vectors has one route and nothing to fuse
        fusing = request.route == HYBRID or (request.explain and len(names) > 1)
        deep = fusing or request.explain or request.rerank is not None
        # fusion reads each route's top `depth`, whatever k (so a search and the explain of one
        # of its hits agree for any k); a route searched alone lists its own top max(depth, k)
        own = max(request.depth, request.k) if deep else request.k
        depth = request.depth if request.route == HYBRID else own
        lists = {
            name: self.routes[name].candidates(
                query, filters, own if name == request.route else request.depth
            )
            for name in names
        }
        fusable = {name: ranking[: request.depth] for name, ranking in lists.items()}
        weights = dict(zip(self.routes, request.weights, strict=True))
        spec = parse_fusion(request.fusion)
        fused: list[Fused] | None = None
        candidates: list[FusionCandidate] | None = None
        scored: list[ConvexFused] | None = None
        language, missing = (
            self.not_applicable(query.text, filters, fusable) if fusing else (None, {})
        )
        if request.route == HYBRID and spec.scored:
            candidates = self.candidates(query, filters, fusable, missing)
            audience = str(filters.audience)
            scored = score_fusion(spec, candidates, lambda: self.backend.title_counts(audience))
            ranked = [(f.passage_id, f.score) for f in scored]
        else:
            if fusing:
                chosen = {name: weights[name] for name in names}
                fused = reciprocal_rank_fusion(fusable, request.rrf_k, chosen, missing)
            if fused is not None and request.route == HYBRID:
                ranked = [(f.passage_id, f.score) for f in fused]
            else:
                ranked = list(lists[request.route])
        start = tuple(ranked)
        stages = []
        routes = {name: tuple(ranking) for name, ranking in lists.items()}
        rows = RunRows(self.backend)
        for stage in self.stages_for(request):
            before = tuple(ranked)
            if isinstance(stage, JudgingStage):
                rows.expect([pid for pid, _ in before[: request.k]])
                run = Run(query, filters, request.k, routes, before, request.min_confidence, rows)
                stages.append(StageTrace(stage.name, before, before, stage.judge(run)))
                continue
            report = None
            if isinstance(stage, ReportingStage):
                ranked, report = stage.apply_reported(query.text, ranked, filters)
            else:
                ranked = stage.apply(query.text, ranked, filters)
            stages.append(StageTrace(stage.name, before, tuple(ranked), report))
        trace = Trace(
            query=query.text,
            route=request.route,
            k=request.k,
            depth=depth,
            filters=filters,
            rrf_k=request.rrf_k,
            weights=weights,
            routes=routes,
            fused=None if fused is None else tuple(fused),
            ranked=start,
            stages=tuple(stages),
            fusion=request.fusion if request.route == HYBRID else RRF,
            candidates=None if candidates is None else tuple(candidates),
            scored=None if scored is None else tuple(scored),
            query_language=language,
        )
        return SearchResult(self._hits(trace, rows), trace, query)

    def stages_for(self, request: SearchRequest) -> tuple[Stage | JudgingStage, ...]:
        """The request's reranking stage (its reranker loaded once per process), when it
        asks for one, then the pipeline's own stages.

        Raises:
            RerankerUnavailableError: the reranker cannot be loaded.
        """
        settings = request.rerank
        if not isinstance(settings, RerankSettings):
            return self.stages
        stage = RerankStage(
            load_reranker(settings.reranker),
            self.texts,
            reranker=settings.reranker,
            top_n=settings.top_n,
            budget_ms=settings.budget_ms,
        )
        return (stage, *self.stages)

    def texts(self, passage_ids: Sequence[str], filters: Filters) -> dict[str, str]:
        """``{passage_id: text}`` of the passages among ``passage_ids`` that pass
        ``filters``."""
        return {
            pid: row.passage.text
            for pid, row in self.backend.passages(passage_ids, filters).items()
        }

    def not_applicable(
        self, query: str, filters: Filters, lists: Mapping[str, Sequence[tuple[str, float]]]
    ) -> tuple[str | None, dict[str, frozenset[str]]]:
        """The query's language when the search can return passages of several languages
        (else ``None``), and ``{passage_id: routes that do not apply}`` for the listed
        passages written in another language (:mod:`kbsearch.retrieve.crosslang`); in a
        one-language index, ``(None, {})`` without detecting anything."""
        audience = str(filters.audience)
        visible = query_languages(filters, self.backend.languages(audience))
        language = query_language_among(query, visible)
        if language is None:
            return None, {}
        ids = list(dict.fromkeys(pid for ranking in lists.values() for pid, _ in ranking))
        return language, not_applicable(language, self.backend.passage_languages(ids, audience))

    def candidates(
        self,
        query: Query,
        filters: Filters,
        lists: Mapping[str, Sequence[tuple[str, float]]],
        inapplicable: Mapping[str, frozenset[str]] | None = None,
    ) -> list[FusionCandidate]:
        """The union of the routes' lists (first seen first), each passage scored in every
        route (its own list's score where it is listed, else the route's
        :meth:`~kbsearch.retrieve.routes.Route.scores`) and by every scorer, with its rank in
        each list holding it and the routes that do not apply to it (``inapplicable``, from
        :meth:`not_applicable`)."""
        ids = list(dict.fromkeys(pid for ranking in lists.values() for pid, _ in ranking))
        scores: dict[str, dict[str, float]] = {pid: {} for pid in ids}
        ranks: dict[str, dict[str, int]] = {pid: {} for pid in ids}
        for name, ranking in lists.items():
            listed = dict(ranking)
            missing = [pid for pid in ids if pid not in listed]
            found = self.routes[name].scores(query, filters, missing) if missing else {}
            found.update(listed)
            for pid in ids:
                if pid in found:
                    scores[pid][name] = found[pid]
            for rank, (pid, _) in enumerate(ranking, start=1):
                ranks[pid][name] = rank
        for name, scorer in self.scorers.items():
            for pid, score in scorer.scores(query, filters, ids).items():
                scores[pid][name] = score
        out = inapplicable or {}
        return [
            FusionCandidate(pid, scores[pid], ranks[pid], out.get(pid, frozenset())) for pid in ids
        ]

    def _hits(self, trace: Trace, read: RunRows) -> list[Hit]:
        top = trace.final[: trace.k]
        fusing = trace.fused is not None or trace.scored is not None
        per_route: dict[str, dict[str, RouteHit]] = {pid: {} for pid, _ in top}
        for route, ranking in trace.routes.items():  # each hit's rank in each list fused
            if fusing or route == trace.route:
                for i, (pid, s) in enumerate(ranking, start=1):
                    if pid in per_route:
                        per_route[pid][route] = RouteHit(i, s)
        rows = read([pid for pid, _ in top])
        if len(rows) < len(top):
            raise _IndexChanged
        hits = []
        for rank, (pid, score) in enumerate(top, start=1):
            p = rows[pid].passage
            hits.append(
                Hit(rank, pid, p.doc_id, p.version, p.section, score, p.text, per_route[pid])
            )
        return hits
