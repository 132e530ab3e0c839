"""Stages run after fusion (or after the one route), before the top k is cut: a reranker, an
abstention rule. None by default; :class:`kbsearch.pipeline.run.Pipeline` takes a list.

Two kinds:

- :class:`Stage` turns the ranked list into another (rerank: reorder, rescore, drop); a
  :class:`ReportingStage` (the reranker) also returns a report of what it did, which goes into
  the trace as its verdict.
- :class:`JudgingStage` reads the run (each route's list and the ranked one) and returns a
  verdict (the abstention stage's answer-or-abstain decision); the pipeline hands the list on
  unchanged, so such a stage can never reorder the hits. Its verdict goes into the trace
  (:attr:`kbsearch.ranking.trace.StageTrace.verdict`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..filters import Filters
from ..records import PassageRow
from ..retrieve.query import Query
from .trace import Ranking


def _no_rows(passage_ids: Sequence[str]) -> Mapping[str, PassageRow]:
    return {}


class Stage(Protocol):
    """One step over a ranked list ``[(passage_id, score), ...]`` (best first).

    A stage may reorder, rescore or drop passages (it must never add one the routes did not
    return under ``filters``); its input and output go into the trace.
    """

    name: str

    def apply(
        self, query: str, ranked: Sequence[tuple[str, float]], filters: Filters
    ) -> list[tuple[str, float]]: ...


@runtime_checkable
class ReportingStage(Protocol):
    """A :class:`Stage` that also says what it did (the reranker: how many passages it scored,
    whether its time budget ran out); the pipeline calls ``apply_reported`` and records the
    report as the stage's verdict."""

    name: str

    def apply_reported(
        self, query: str, ranked: Sequence[tuple[str, float]], filters: Filters
    ) -> tuple[list[tuple[str, float]], object]: ...


@dataclass(frozen=True)
class Run:
    """What a judging stage reads: the request's analysed query (its vector read once per
    request: :class:`~kbsearch.retrieve.query.Query`), filters, ``k`` and minimum confidence
    (``None``: the stage's default), each route's ranked list (``{route: ((passage_id,
    score), ...)}``, best first, as the routes scored them), the ranked list so far, and
    ``rows``: the run's reader of stored passages by id (unfiltered; the pipeline reads them
    with the hits' rows, so a search reads its passages once)."""

    query: Query
    filters: Filters
    k: int
    routes: Mapping[str, Ranking]
    ranked: Ranking
    min_confidence: float | None = None
    rows: Callable[[Sequence[str]], Mapping[str, PassageRow]] = _no_rows


@runtime_checkable
class JudgingStage(Protocol):
    """A stage that returns a verdict on a run and leaves its list as it is (module
    docstring). ``judge`` returns ``None`` when it has nothing to say (for example the
    abstention stage on an index without vectors)."""

    name: str

    def judge(self, run: Run) -> object | None: ...
