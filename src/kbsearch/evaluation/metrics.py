"""Ranking metrics over qrels and runs, following trec_eval's conventions.

Inputs: ``qrels`` is ``{qid: {docid: grade}}`` (a grade >= 1 is relevant, 0 or less is judged
not relevant) and ``run`` is ``{qid: [docid, ...]}`` in the order the system returned the results.
The order of the list decides: ties in score are *not* re-sorted (trec_eval re-sorts them by
docid). For one query with ``R`` relevant documents, ``rel_i`` the grade at rank ``i`` (0 when
unjudged or not relevant) and ``[rel_i >= 1]`` its binary relevance:

- ``hit@k`` (ir_measures ``Success@k``): 1 if a relevant document is in the top k, else 0.
- ``R@k`` (Recall): ``sum_{i<=k} [rel_i >= 1] / R``.
- ``P@k`` (Precision): ``sum_{i<=k} [rel_i >= 1] / k`` (trec_eval divides by k even when fewer
  than k results were returned).
- ``MRR@k`` (``RR@k``): ``1 / rank`` of the first relevant document within the top k, else 0.
- ``nDCG@k`` (Järvelin & Kekäläinen 2002, trec_eval ``ndcg_cut``): ``DCG@k / IDCG@k`` with
  ``DCG@k = sum_{i<=k} rel_i / log2(i + 1)`` and IDCG the DCG of the qrels' grades sorted in
  decreasing order (the ideal comes from the qrels, never from the retrieved list).
- ``AP@k`` (trec_eval ``map_cut``): ``sum_{i<=k, rel_i >= 1} P@i / R``; ``AP`` has no cutoff.

A query with no relevant document is left out of every mean and counted apart
(``no_relevant_queries``, and ``no_relevant_with_results`` for those that still got results). A
query with relevant documents and no results scores 0 everywhere.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from kbsearch.errors import EvaluationError

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Sequence[str]]
MeasureFn = Callable[[Sequence[int], Sequence[int], int | None], float]

_ALIASES = {
    "hit": "hit",
    "success": "hit",
    "r": "R",
    "recall": "R",
    "p": "P",
    "precision": "P",
    "mrr": "MRR",
    "rr": "MRR",
    "ndcg": "nDCG",
    "ap": "AP",
    "map": "AP",
}
_NAME = re.compile(r"^([A-Za-z]+)(?:@(\d+))?$")


@dataclass(frozen=True)
class Measure:
    """A metric family and its cutoff (``None`` = the whole list; only AP allows it)."""

    family: str
    k: int | None

    @property
    def name(self) -> str:
        return self.family if self.k is None else f"{self.family}@{self.k}"

    def __str__(self) -> str:
        return self.name


def parse_measure(name: str) -> Measure:
    """Parse ``hit@5``, ``R@100``, ``P@10``, ``MRR@10``, ``nDCG@10``, ``AP@100`` or ``AP``
    (aliases: Success, Recall, Precision, RR, MAP; case-insensitive family).

    Raises:
        EvaluationError: unknown family, a cutoff below 1, or a missing cutoff (except AP).
    """
    found = _NAME.match(name.strip())
    family = _ALIASES.get(found.group(1).lower()) if found else None
    if found is None or family is None:
        raise EvaluationError(
            f"unknown measure {name!r}; use hit@k, R@k, P@k, MRR@k, nDCG@k, AP@k or AP"
        )
    k = int(found.group(2)) if found.group(2) else None
    if k is None and family != "AP":
        raise EvaluationError(f"measure {name!r} needs a cutoff, e.g. {family}@10")
    if k is not None and k < 1:
        raise EvaluationError(f"measure {name!r}: the cutoff must be >= 1")
    return Measure(family, k)


def _top(grades: Sequence[int], k: int | None) -> Sequence[int]:
    return grades if k is None else grades[:k]


def _hit(grades: Sequence[int], ideal: Sequence[int], k: int | None) -> float:
    return 1.0 if any(g >= 1 for g in _top(grades, k)) else 0.0


def _recall(grades: Sequence[int], ideal: Sequence[int], k: int | None) -> float:
    return sum(1 for g in _top(grades, k) if g >= 1) / len(ideal)


def _precision(grades: Sequence[int], ideal: Sequence[int], k: int | None) -> float:
    if k is None:
        raise EvaluationError("P needs a cutoff, e.g. P@10")
    return sum(1 for g in _top(grades, k) if g >= 1) / k


def _rr(grades: Sequence[int], ideal: Sequence[int], k: int | None) -> float:
    for rank, grade in enumerate(_top(grades, k), start=1):
        if grade >= 1:
            return 1.0 / rank
    return 0.0


def _dcg(grades: Iterable[int]) -> float:
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(grades, start=1) if g > 0)


def _ndcg(grades: Sequence[int], ideal: Sequence[int], k: int | None) -> float:
    return _dcg(_top(grades, k)) / _dcg(_top(ideal, k))


def _ap(grades: Sequence[int], ideal: Sequence[int], k: int | None) -> float:
    found, total = 0, 0.0
    for rank, grade in enumerate(_top(grades, k), start=1):
        if grade >= 1:
            found += 1
            total += found / rank
    return total / len(ideal)


MEASURES: dict[str, MeasureFn] = {
    "hit": _hit,
    "R": _recall,
    "P": _precision,
    "MRR": _rr,
    "nDCG": _ndcg,
    "AP": _ap,
}


def check_run(run: Run) -> None:
    """Raise EvaluationError when a query's list holds the same id twice."""
    for qid, docs in run.items():
        if len(set(docs)) != len(docs):
            dup = next(d for i, d in enumerate(docs) if d in docs[:i])
            raise EvaluationError(f"run lists {dup!r} twice for query {qid!r}")


def query_scores(
    judged: Mapping[str, int], docs: Sequence[str], measures: Sequence[Measure]
) -> dict[str, float]:
    """Every measure for one query with at least one relevant document.

    Raises:
        EvaluationError: no relevant document in ``judged``, or a duplicate id in ``docs``.
    """
    ideal = sorted((g for g in judged.values() if g >= 1), reverse=True)
    if not ideal:
        raise EvaluationError("a query with no relevant document has no score")
    if len(set(docs)) != len(docs):
        raise EvaluationError("a ranked list holds the same id twice")
    grades = [judged.get(doc, 0) for doc in docs]
    return {m.name: MEASURES[m.family](grades, ideal, m.k) for m in measures}


@dataclass(frozen=True)
class RunEvaluation:
    """Scores of one run: ``per_query`` (evaluated queries only) and their ``means``
    (NaN when no query was evaluated)."""

    measures: tuple[str, ...]
    per_query: Mapping[str, Mapping[str, float]]
    means: Mapping[str, float]
    evaluated: int
    no_relevant_queries: int
    no_relevant_with_results: int

    def to_dict(self) -> dict[str, object]:
        """A JSON-able dict (NaN written as None)."""

        def clean(x: float) -> float | None:
            return None if math.isnan(x) else x

        return {
            "measures": list(self.measures),
            "means": {m: clean(v) for m, v in self.means.items()},
            "evaluated": self.evaluated,
            "no_relevant_queries": self.no_relevant_queries,
            "no_relevant_with_results": self.no_relevant_with_results,
            "per_query": {q: dict(s) for q, s in self.per_query.items()},
        }


def evaluate_run(
    qrels: Qrels,
    run: Run,
    measures: Sequence[str | Measure],
    queries: Iterable[str] | None = None,
) -> RunEvaluation:
    """Score ``run`` against ``qrels`` on ``queries`` (default: every qid in either).

    Queries with relevant documents are scored (0 when absent from the run); the others are
    counted in ``no_relevant_queries`` / ``no_relevant_with_results``.

    Raises:
        EvaluationError: a duplicate id in a ranked list, an unknown measure.
    """
    parsed = [m if isinstance(m, Measure) else parse_measure(m) for m in measures]
    check_run(run)
    qids = list(dict.fromkeys(queries if queries is not None else [*qrels, *run]))
    per_query: dict[str, dict[str, float]] = {}
    no_rel = no_rel_results = 0
    for qid in qids:
        judged = qrels.get(qid, {})
        docs = run.get(qid, ())
        if not any(g >= 1 for g in judged.values()):
            no_rel += 1
            no_rel_results += 1 if docs else 0
            continue
        per_query[qid] = query_scores(judged, docs, parsed)
    names = tuple(m.name for m in parsed)
    means = {
        name: (math.fsum(s[name] for s in per_query.values()) / len(per_query))
        if per_query
        else math.nan
        for name in names
    }
    return RunEvaluation(names, per_query, means, len(per_query), no_rel, no_rel_results)
