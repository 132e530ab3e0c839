"""Evaluate a knowledge base on a question set, for the CLI (``kbsearch eval``, ``bench``) and
the benchmarks: index a benchmark corpus, the timed search function, the relevant items no
search can return, the abstention stage and the answers on every question; a route written
``ROUTE+rerank`` is that route followed by the reranking stage, each of its reports kept in a
:class:`RerankLog`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Unpack

from ..errors import EvaluationError, OptionConflictError, QueryError, shown_value
from ..evaluation.answers import UNKNOWN, Judged
from ..evaluation.gold import Unreachable, unreachable_relevant
from ..evaluation.questions import Question, QuestionSet
from ..evaluation.runner import DEFAULT_K, EvaluationResult, Latency, SearchFn, evaluate
from ..fuse.methods import DEFAULT_FUSION, parse_fusion
from ..fuse.rrf import DEFAULT_RRF_K
from ..index.indexer import IndexReport
from ..judge.answer import Answer
from ..knowledge_base import DEFAULT_WEIGHTS, KnowledgeBase
from ..pipeline import HYBRID, RankingOptions, SearchRequest
from ..pipeline.request import check_fusion_settings
from ..records import Filters, Hit
from ..rerank.rerankers import RerankSettings, load_reranker
from ..rerank.stage import RerankReport
from .workflows import Progress


def index_corpus(
    kb: KnowledgeBase,
    questions: QuestionSet,
    *,
    analyzer: str | None = None,
    progress: Progress | None = None,
) -> IndexReport | None:
    """Index the question set's corpus (a BEIR ``corpus.jsonl``, documents ``public``) when
    the knowledge base holds no document; ``None`` when it already holds some.

    Raises:
        EvaluationError: the knowledge base is empty and the question set has no corpus.
    """
    if kb.stats()["documents"]:
        return None
    if questions.corpus is None:
        raise EvaluationError(f"{questions.source} has no corpus.jsonl to index")
    return kb.index(
        [questions.corpus], default_access="public", analyzer=analyzer, progress=progress
    )


RERANKED = "+rerank"  # an evaluated route's suffix: that route, then the reranking stage


@dataclass
class RerankLog:
    """The reranking stage's report of every question's search of each ``ROUTE+rerank``
    route, so an evaluation can show what the stage cost (:func:`evaluate_kb` drops the
    untimed warm-up searches: "3 searches" for 3 questions)."""

    reports: dict[str, list[RerankReport]] = field(default_factory=dict)

    def add(self, route: str, report: RerankReport) -> None:
        self.reports.setdefault(route, []).append(report)

    def keep_last(self, route: str, count: int) -> None:
        """Keep the last ``count`` reports of ``route`` (its questions' searches, which ran
        after its warm-up searches)."""
        if route in self.reports:
            self.reports[route] = self.reports[route][-count:] if count > 0 else []

    def summary(self) -> dict[str, dict[str, float | int | str]]:
        """Per route: ``reranker``, ``searches``, ``stopped`` (the budget ran out),
        ``mean_scored`` (passages), and the stage's own wall time ``p50_ms`` / ``p95_ms``."""
        out: dict[str, dict[str, float | int | str]] = {}
        for route, reports in self.reports.items():
            latency = Latency.of([r.elapsed_ms for r in reports])
            out[route] = {
                "reranker": reports[-1].reranker,
                "searches": len(reports),
                "stopped": sum(r.stopped for r in reports),
                "mean_scored": round(sum(r.scored for r in reports) / len(reports), 2),
                "p50_ms": round(latency.p50_ms, 2),
                "p95_ms": round(latency.p95_ms, 2),
            }
        return out


def base_route(route: str) -> tuple[str, bool]:
    """``("hybrid", True)`` for ``"hybrid+rerank"``, ``("hybrid", False)`` for ``"hybrid"``."""
    reranked = route.endswith(RERANKED)
    return (route[: -len(RERANKED)] if reranked else route), reranked


def search_function(
    kb: KnowledgeBase,
    *,
    rerank: RerankSettings | None = None,
    log: RerankLog | None = None,
    **options: Unpack[RankingOptions],
) -> SearchFn:
    """``search(text, n, route, filters) -> hits`` for :func:`kbsearch.evaluation.evaluate`;
    each call encodes its query again (no query cache), so timed searches include it. The
    ranking ``options`` (:class:`~kbsearch.pipeline.request.RankingOptions`) make one
    request that each question's replaces the query, ``k``, route and filters of; the fusion
    settings go to the hybrid route only (the others are not fused: their ``depth`` alone).
    A route ``ROUTE+rerank`` runs ``ROUTE`` with ``rerank`` and adds the stage's report to
    ``log``.

    Raises:
        InvalidArgumentError, OptionConflictError: bad ``options``, as
            :class:`~kbsearch.pipeline.SearchRequest`.
        OptionConflictError (from the returned function): a ``+rerank`` route without
            ``rerank``.
    """
    fused = SearchRequest("", route=HYBRID, **options)  # type: ignore[arg-type]
    alone = SearchRequest("", depth=fused.depth)

    def search(text: str, n: int, route: str, filters: Filters) -> Sequence[Hit]:
        kb.clear_query_cache()
        name, reranked = base_route(route)
        if reranked and rerank is None:
            raise OptionConflictError(
                f"route {shown_value(route)} needs a reranker (--rerank NAME)"
            )
        request = (fused if name == HYBRID else alone).replace(
            query=text, k=n, route=name, filters=filters, rerank=rerank if reranked else None
        )
        result = kb.run(request)
        report = result.trace.verdict("rerank") if reranked else None
        if log is not None and isinstance(report, RerankReport):
            log.add(route, report)
        return result.hits

    return search


def unreachable(kb: KnowledgeBase, questions: QuestionSet) -> list[Unreachable]:
    """Relevant items of ``questions`` that no search of ``kb`` can return (see
    :mod:`kbsearch.evaluation.gold`): a typo in a question file otherwise looks exactly like
    a retrieval failure."""
    documents = [d.document for d in kb.documents()]
    named = {i.passage_id for q in questions.questions for i in q.relevant if i.passage_id}
    rows = kb.store.passages.rows(named) if named else {}
    access = {pid: row.access for pid, row in rows.items()}
    by_section = {
        str(i.doc_id) for q in questions.questions for i in q.relevant if i.section is not None
    }  # "" too: the passage before the first heading
    sections: dict[tuple[str, str], set[str]] = {}
    for doc_id in sorted(by_section):
        for passage in kb.store.passages.of_document(doc_id, None, "staff"):
            sections.setdefault((passage.doc_id, passage.version), set()).add(passage.section)
    return unreachable_relevant(questions, documents, access, sections)


def check_search_options(
    k: int,
    *,
    routes: Sequence[str] = (HYBRID,),
    given: Collection[str] = (),
    **options: Unpack[RankingOptions],
) -> SearchRequest:
    """Check a run's search options (``k`` and the ranking ``options``) before any work
    (indexing, searching) starts, and return them as the hybrid request each question's
    search replaces the query of; the fusion settings apply to the hybrid route
    (``hybrid+rerank`` too), so ``routes`` without it take none (``given``: the settings
    named, set even at their default value, as
    :func:`~kbsearch.pipeline.request.check_fusion_settings`).

    Raises:
        InvalidArgumentError: as :class:`kbsearch.pipeline.SearchRequest`.
        OptionConflictError: fusion settings other than the defaults without route hybrid.
    """
    bases = [base_route(route)[0] for route in routes]
    fused = HYBRID if HYBRID in bases else next(iter(bases), HYBRID)
    # which route first: RRF settings without route hybrid are refused as such, not as RRF
    # settings with the default (score) fusion
    fusion = parse_fusion(options.get("fusion", DEFAULT_FUSION))
    rrf_k, weights = options.get("rrf_k", DEFAULT_RRF_K), options.get("weights", DEFAULT_WEIGHTS)
    check_fusion_settings(fused, fusion, rrf_k, tuple(weights), given)
    return SearchRequest("", k=k, route=HYBRID, **options)  # type: ignore[arg-type]


def evaluate_kb(
    kb: KnowledgeBase,
    questions: QuestionSet,
    routes: Sequence[str],
    k: int = DEFAULT_K,
    *,
    rerank: RerankSettings | None = None,
    log: RerankLog | None = None,
    **options: Unpack[RankingOptions],
) -> EvaluationResult:
    """Search every question in every route of ``kb`` and score the runs (see
    :func:`kbsearch.evaluation.evaluate`; the ranking ``options``, ``depth``, ``rrf_k``,
    ``weights`` and ``fusion``, as in :meth:`KnowledgeBase.search`). ``rerank`` applies to
    the routes written ``ROUTE+rerank`` (its reranker is loaded before the first search, so
    the load is never timed); their stage reports go into ``log``.

    Raises:
        InvalidArgumentError: bad ``depth``, ``rrf_k`` or ``weights``.
        OptionConflictError: fusion settings other than the defaults without route hybrid
            (or ``hybrid+rerank``); a ``+rerank`` route without ``rerank``, or ``rerank``
            without one.
        RerankerUnavailableError: the reranker cannot be loaded.
        EvaluationError: as :func:`kbsearch.evaluation.evaluate`.
    """
    template = check_search_options(k, routes=routes, **options)
    check_rerank_routes(routes, rerank)
    if rerank is not None:
        load_reranker(rerank.reranker)
    search = search_function(kb, rerank=rerank, log=log, **options)
    result = evaluate(search, questions, routes, k, depth=template.depth)
    if log is not None:  # each route's warm-up searches ran first: not the questions'
        for route, run in result.routes.items():
            log.keep_last(route, len(questions.questions) - len(run.refused))
    return result


def check_rerank_routes(routes: Sequence[str], rerank: RerankSettings | None) -> None:
    """Raises OptionConflictError: a ``ROUTE+rerank`` route without a reranker, or a
    reranker and no such route (it would change nothing)."""
    reranked = [r for r in routes if base_route(r)[1]]
    if reranked and rerank is None:
        raise OptionConflictError(
            f"route {shown_value(reranked[0])} needs a reranker: add --rerank NAME"
        )
    if rerank is not None and not reranked:
        raise OptionConflictError(
            "--rerank applies to the routes written ROUTE+rerank"
            " (for example --routes hybrid,hybrid+rerank)"
        )


def assess_questions(
    kb: KnowledgeBase,
    questions: QuestionSet,
    k: int = DEFAULT_K,
    **options: Unpack[RankingOptions],
) -> tuple[list[dict[str, object]], list[str]]:
    """The abstention stage on every question (hybrid, each under its own filters, the
    ranking ``options`` as :func:`evaluate_kb`'s): per
    question ``qid``, ``kind``, ``language``, ``confidence``, ``answered``, ``answerable``
    (it has a relevant item and is not marked ``abstain``) and ``hit`` (a relevant item in the
    top ``k``); and the ids of the questions the search refused (empty, too long: left out,
    as :func:`kbsearch.evaluation.evaluate` counts them). No items for an index without
    vectors (no confidence there).

    Raises:
        InvalidArgumentError: bad ``k``, ``depth``, ``rrf_k``, ``weights`` or ``fusion``.
    """
    from ..evaluation.judging import judge_hits, question_qrels
    from ..evaluation.runner import question_filters

    template = check_search_options(k, **options)
    items: list[dict[str, object]] = []
    refused: list[str] = []
    for q in questions.questions:
        filters = question_filters(q, questions.access_aware, use_language=False)
        try:
            assessed = kb.assess_request(template.replace(query=q.text, filters=filters))
        except QueryError:
            refused.append(q.qid)
            continue
        if assessed.decision is None:
            return [], refused
        qrels = question_qrels(q)
        keys = judge_hits(q, assessed.hits, questions.rule)[:k]
        items.append(
            {
                "qid": q.qid,
                "kind": q.kind or UNKNOWN,
                "language": q.language or UNKNOWN,
                "confidence": assessed.decision.confidence,
                "answered": assessed.decision.answerable,
                "threshold": assessed.decision.threshold,
                "answerable": q.has_relevant,
                "hit": any(qrels.get(key, 0) >= 1 for key in keys),
            }
        )
    return items, refused


def answer_questions(
    kb: KnowledgeBase,
    questions: QuestionSet,
    answers: Mapping[str, Sequence[str]] | None = None,
    *,
    k: int = DEFAULT_K,
    min_confidence: float | None = None,
    on_answer: Callable[[Question, Answer], None] | None = None,
) -> tuple[list[Judged], list[str]]:
    """``kb.ask`` on every question (each under its own filters, as the abstention
    measurement searches them) and each answer judged against the question's gold
    (:mod:`kbsearch.evaluation.answers`: ``answers``, gold answer strings by question id, else
    the question's ``keys``); and the ids of the questions the search refused (empty, too
    long: left out). ``on_answer`` sees every answer (for a dump). Each record also says
    whether the chosen span holds the gold whatever the verdict (``Answer.span_text``), so
    whether a lower cut would answer it rightly (``Judged.span_right``).

    Raises:
        NoVectorsError: the index has no vectors.
        InvalidArgumentError: bad ``k`` or ``min_confidence``.
    """
    from ..evaluation.answers import judge_question
    from ..evaluation.runner import question_filters

    items: list[Judged] = []
    refused: list[str] = []
    for q in questions.questions:
        filters = question_filters(q, questions.access_aware, use_language=False)
        try:
            answer = kb.ask(q.text, k=k, filters=filters, min_confidence=min_confidence)
        except QueryError:
            refused.append(q.qid)
            continue
        if on_answer is not None:
            on_answer(q, answer)
        cited = None
        if answer.citation is not None:
            cited = next(h for h in answer.nearest if h.passage_id == answer.citation.passage_id)
        items.append(
            judge_question(
                q,
                answer.verdict,
                answer.text,
                answers or {},
                cited,
                answer.confidence,
                answer.span_text,
            )  # fmt: skip
        )
    return items, refused
