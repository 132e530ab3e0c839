"""Run a question set through a search function, route by route, and score it.

The search function is called as ``search(text, n, route, filters)`` and returns hits in rank
order (for a knowledge base: ``lambda t, n, r, f: kb.search(t, k=n, route=r, filters=f, ...)``).
Each question is searched with its own filters: ``as_of``; the audience ``public`` when
``public_ok`` else ``staff`` (question sets without access information are searched as ``staff``,
which sees everything); its ``language`` only when ``use_language`` is set (cross-language
questions would otherwise lose their answer). Hits are judged by
:mod:`kbsearch.evaluation.judging` and scored by :mod:`kbsearch.evaluation.metrics`.

Latency is the wall time of each search call (``time.perf_counter``, milliseconds), after
``warmup`` untimed calls per route; loading a model before :func:`evaluate` is not counted.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kbsearch.errors import EvaluationError, QueryError
from kbsearch.evaluation.judging import judge_hits, question_qrels, set_qrels
from kbsearch.evaluation.metrics import RunEvaluation, evaluate_run
from kbsearch.evaluation.questions import Question, QuestionSet
from kbsearch.records import Filters, Hit

SearchFn = Callable[[str, int, str, Filters], Sequence[Hit]]


DEFAULT_K = 10  # the cutoff of hit@k, R@k, P@k and "missed"
DEFAULT_DEPTH = 100  # results asked per question


def default_measures(k: int, depth: int) -> tuple[str, ...]:
    """hit@k, R@5 (when ``k > 5``: an earlier cut-off than k, never a second one past it),
    R@k, R@100 (when ``depth >= 100``), P@k, MRR@10, nDCG@10 and AP (over the whole retrieved
    list), without repeats."""
    early = ["R@5"] if k > 5 else []
    names = [f"hit@{k}", *early, f"R@{k}", *(["R@100"] if depth >= 100 else [])]
    names += [f"P@{k}", "MRR@10", "nDCG@10", "AP"]
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class Latency:
    """Per-query search latency in milliseconds over ``count`` timed queries."""

    count: int
    mean_ms: float
    p50_ms: float
    p95_ms: float

    @classmethod
    def of(cls, millis: Sequence[float]) -> Latency:
        if not millis:
            return cls(0, math.nan, math.nan, math.nan)
        values = np.asarray(millis, dtype=np.float64)
        p50, p95 = np.percentile(values, [50, 95])
        return cls(len(millis), float(values.mean()), float(p50), float(p95))


@dataclass(frozen=True)
class Missed:
    """A question with relevant items and none of them in the top k, with its top results."""

    qid: str
    text: str
    kind: str | None
    relevant: tuple[str, ...]
    top: tuple[Hit, ...]


@dataclass(frozen=True)
class RouteResult:
    """Everything measured on one route. ``run`` is the judged run (distinct keys in returned
    order, what the TREC file holds); ``first_relevant`` the rank of the first relevant key per
    evaluated question (None when not retrieved); ``refused`` the questions the search refused
    (QueryError), scored as empty result lists."""

    route: str
    evaluation: RunEvaluation
    latency: Latency
    per_kind: Mapping[str, RunEvaluation]
    missed: tuple[Missed, ...]
    first_relevant: Mapping[str, int | None]
    run: Mapping[str, tuple[str, ...]]
    refused: tuple[str, ...]


@dataclass(frozen=True)
class EvaluationResult:
    """The result of :func:`evaluate`: one :class:`RouteResult` per route."""

    source: str
    rule: str
    k: int
    depth: int
    measures: tuple[str, ...]
    questions: int
    qrels: Mapping[str, Mapping[str, int]]
    routes: Mapping[str, RouteResult]

    def to_dict(self) -> dict[str, object]:
        """A JSON-able dict (NaN written as None)."""

        def clean(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 4)

        routes: dict[str, object] = {}
        for name, res in self.routes.items():
            routes[name] = {
                **res.evaluation.to_dict(),
                "latency_ms": {
                    "count": res.latency.count,
                    "mean": clean(res.latency.mean_ms),
                    "p50": clean(res.latency.p50_ms),
                    "p95": clean(res.latency.p95_ms),
                },
                "per_kind": {kind: ev.to_dict() for kind, ev in res.per_kind.items()},
                "missed": [
                    {
                        "qid": m.qid,
                        "text": m.text,
                        "kind": m.kind,
                        "relevant": list(m.relevant),
                        "top": [
                            {"rank": h.rank, "passage_id": h.passage_id, "score": h.score}
                            for h in m.top
                        ],
                    }
                    for m in res.missed
                ],
                "first_relevant_rank": dict(res.first_relevant),
                "refused": list(res.refused),
            }
        return {
            "source": self.source,
            "rule": self.rule,
            "k": self.k,
            "depth": self.depth,
            "questions": self.questions,
            "routes": routes,
        }


def question_filters(question: Question, access_aware: bool, use_language: bool) -> Filters:
    """The filters a question is searched under (see the module docstring)."""
    audience = ("public" if question.public_ok else "staff") if access_aware else "staff"
    language = question.language if use_language else None
    return Filters(audience=audience, as_of=question.as_of, language=language)


def _first_relevant(judged: Mapping[str, int], keys: Sequence[str]) -> int | None:
    return next((rank for rank, key in enumerate(keys, 1) if judged.get(key, 0) >= 1), None)


def evaluate(
    search: SearchFn,
    questions: QuestionSet,
    routes: Sequence[str],
    k: int = DEFAULT_K,
    *,
    depth: int = DEFAULT_DEPTH,
    warmup: int = 3,
    measures: Sequence[str] | None = None,
    use_language: bool = False,
    top_missed: int = 3,
) -> EvaluationResult:
    """Search every question on every route and score the runs.

    Args:
        search: ``search(text, n, route, filters) -> hits`` in rank order.
        questions: the question set (its ``rule`` decides how hits are judged).
        routes: route names handed to ``search``.
        k: the cutoff of hit@k, R@k, P@k and of "missed".
        depth: how many results are asked per question (``max(k, depth)``).
        warmup: untimed searches per route before timing (the first questions).
        measures: metric names (default :func:`default_measures`).
        use_language: also filter by the question's language.
        top_missed: how many top hits to keep per missed question.

    Raises:
        EvaluationError: k or depth < 1, no route, a route listed twice, a route returning
            a passage twice.
        KbsearchError: whatever ``search`` raises besides QueryError.
    """
    if k < 1 or depth < 1 or warmup < 0:
        raise EvaluationError("k and depth must be >= 1 and warmup >= 0")
    if not routes:
        raise EvaluationError("no route to evaluate")
    twice = [r for r in dict.fromkeys(routes) if list(routes).count(r) > 1]
    if twice:
        raise EvaluationError(f"route {twice[0]!r} is listed twice")
    fetch = max(k, depth)
    chosen = tuple(measures) if measures else default_measures(k, fetch)
    qrels = set_qrels(questions)
    qids = [q.qid for q in questions.questions]
    results: dict[str, RouteResult] = {}
    for route in routes:
        for question in questions.questions[:warmup]:
            filters = question_filters(question, questions.access_aware, use_language)
            with contextlib.suppress(QueryError):
                search(question.text, fetch, route, filters)
        hits: dict[str, tuple[Hit, ...]] = {}
        millis: list[float] = []
        refused: list[str] = []
        for question in questions.questions:
            filters = question_filters(question, questions.access_aware, use_language)
            start = time.perf_counter()
            try:
                found = tuple(search(question.text, fetch, route, filters))
            except QueryError:
                found = ()
                refused.append(question.qid)
            millis.append((time.perf_counter() - start) * 1000.0)
            hits[question.qid] = found
        run = {
            q.qid: tuple(judge_hits(q, hits[q.qid], questions.rule)) for q in questions.questions
        }
        evaluation = evaluate_run(qrels, run, chosen, queries=qids)
        per_kind = {
            kind: evaluate_run(
                qrels, run, chosen, queries=[q.qid for q in questions.questions if q.kind == kind]
            )
            for kind in questions.kinds
        }
        missed = tuple(
            Missed(q.qid, q.text, q.kind, tuple(question_qrels(q)), hits[q.qid][:top_missed])
            for q in questions.questions
            if q.qid in evaluation.per_query
            and _first_relevant(qrels[q.qid], run[q.qid][:k]) is None
        )
        first = {qid: _first_relevant(qrels[qid], run[qid]) for qid in evaluation.per_query}
        results[route] = RouteResult(
            route=route,
            evaluation=evaluation,
            latency=Latency.of(millis),
            per_kind=per_kind,
            missed=missed,
            first_relevant=first,
            run=run,
            refused=tuple(refused),
        )
    return EvaluationResult(
        source=questions.source,
        rule=questions.rule,
        k=k,
        depth=fetch,
        measures=chosen,
        questions=len(questions),
        qrels=qrels,
        routes=results,
    )
