"""A reranking stage: rescore the head of the ranked list with a pair scorer, within a time budget.

:class:`RerankStage` implements :class:`kbsearch.ranking.stages.ReportingStage`. It takes the
first ``top_n`` passages of the list it is given (the fused list, or one route's), scores
``(query, passage text)`` pairs in batches with a :class:`PairScorer` (for example a
sentence-transformers ``CrossEncoder`` loaded from a local folder,
:mod:`kbsearch.rerank.rerankers`), and orders the scored passages by that score (ties: their
previous order), each carrying the reranker's score. Passages below ``top_n`` follow unchanged,
with their previous scores.

The budget (milliseconds of wall time, counted from the start of the stage, reading the texts
included) sizes the batches: the first holds ``first_batch`` pairs (a probe of the scorer's
speed); each next one holds as many pairs as the time left allows at the slowest rate per pair
seen so far, at most ``batch``; when not one more pair fits, the stage stops. The passages not
scored then keep their previous order after the scored ones, so a slow scorer degrades to the
fused order, never to an error or a timeout; only the first batch can overrun the budget (a
cross-encoder of MiniLM-L6's size on 2 CPU cores takes ~100-200 ms a pair, see
``docs/benchmarks.md``). The stage never adds or loses a passage:
it reorders the ones it was given, whose texts it reads under the same filters (a passage the
audience may not see never reaches the scorer, since the list holds none). A passage whose text
cannot be read keeps its place below the scored ones.

What the stage did is its :class:`RerankReport` (the stage's verdict in the trace): how many it
scored, whether the budget ran out, the time it took and each scored passage's score.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..errors import InvalidArgumentError, shown_value
from ..filters import Filters

DEFAULT_TOP_N = 30  # passages of the ranked list a reranker rescores
DEFAULT_BUDGET_MS = 500.0  # wall time the stage may spend per search (see the module docstring)
DEFAULT_BATCH = 8  # pairs per scorer call, at most
FIRST_BATCH = 2  # pairs of the first call, which measures the scorer's speed


class PairScorer(Protocol):
    """Scores ``(query, passage text)`` pairs; higher is more relevant. Returns one finite
    float per pair, in order."""

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> Sequence[float]: ...


TextsOf = Callable[[Sequence[str], Filters], dict[str, str]]


@dataclass(frozen=True)
class RerankReport:
    """What one rerank did. ``reranker``: its spec; ``candidates``: passages of the head whose
    text was read; ``scored``: how many of them the scorer scored; ``stopped``: the budget
    ran out before the whole head was scored; ``elapsed_ms``: the stage's wall time;
    ``scores``: ``(passage_id, reranker score)`` of the scored passages, in their new order."""

    reranker: str
    top_n: int
    budget_ms: float
    candidates: int
    scored: int
    stopped: bool
    elapsed_ms: float
    scores: tuple[tuple[str, float], ...] = ()

    def score_of(self, passage_id: str) -> float | None:
        """The reranker's score of ``passage_id`` (``None`` when it was not scored)."""
        return next((s for pid, s in self.scores if pid == passage_id), None)


def check_settings(top_n: object, budget_ms: object, **batches: object) -> None:
    """Raises InvalidArgumentError: ``top_n`` or a batch size (``batches``, by name) not a
    whole number >= 1, or a budget that is not a finite number > 0 (milliseconds)."""
    for name, value in {"top_n": top_n, **batches}.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InvalidArgumentError(
                f"rerank {name} must be a whole number >= 1, got {shown_value(value)}"
            )
    if (
        not isinstance(budget_ms, int | float)
        or isinstance(budget_ms, bool)
        or not math.isfinite(budget_ms)
        or budget_ms <= 0
    ):
        raise InvalidArgumentError(
            f"rerank budget must be a number of ms > 0, got {shown_value(budget_ms)}"
        )


@dataclass
class RerankStage:
    """See the module docstring. ``texts(passage_ids, filters) -> {passage_id: text}``;
    ``name`` is the stage's name in the trace, ``reranker`` the spec its report names.

    Raises (at construction):
        InvalidArgumentError: see :func:`check_settings`.
    """

    scorer: PairScorer
    texts: TextsOf
    reranker: str = "rerank"
    top_n: int = DEFAULT_TOP_N
    batch: int = DEFAULT_BATCH
    budget_ms: float = DEFAULT_BUDGET_MS
    first_batch: int = FIRST_BATCH
    name: str = "rerank"
    clock: Callable[[], float] = field(default=time.perf_counter, repr=False)

    def __post_init__(self) -> None:
        check_settings(self.top_n, self.budget_ms, batch=self.batch, first_batch=self.first_batch)

    def apply(
        self, query: str, ranked: Sequence[tuple[str, float]], filters: Filters
    ) -> list[tuple[str, float]]:
        """The reordered list (see :meth:`apply_reported`)."""
        return self.apply_reported(query, ranked, filters)[0]

    def apply_reported(
        self, query: str, ranked: Sequence[tuple[str, float]], filters: Filters
    ) -> tuple[list[tuple[str, float]], RerankReport]:
        """The reordered list and what was done (module docstring).

        Raises:
            ValueError: the scorer returned another number of scores than pairs, or a score
                that is not finite (a broken scorer is an error, not a silent order).
        """
        start = self.clock()
        head = list(ranked[: self.top_n])
        texts = self.texts([pid for pid, _ in head], filters)
        head = [(pid, s) for pid, s in head if pid in texts]
        scored: list[tuple[int, str, float]] = []
        per_pair = 0.0  # the slowest seconds per pair so far
        stopped = False
        while len(scored) < len(head):
            began = self.clock()
            left = self.budget_ms / 1000.0 - (began - start)
            size = min(self.batch, self.first_batch if not scored else int(left / per_pair))
            if left <= 0 or size < 1:
                stopped = True
                break
            first = len(scored)
            chunk = head[first : first + size]
            values = [float(v) for v in self.scorer([(query, texts[pid]) for pid, _ in chunk])]
            if len(values) != len(chunk) or not all(math.isfinite(v) for v in values):
                raise ValueError(
                    f"reranker {self.reranker!r} gave {len(values)} scores for {len(chunk)}"
                    " pairs, or a score that is not finite"
                )
            pairs = enumerate(zip(chunk, values, strict=True))
            scored += [(first + i, pid, v) for i, ((pid, _), v) in pairs]
            per_pair = max(per_pair, (self.clock() - began) / len(chunk), 1e-9)
        scored.sort(key=lambda item: (-item[2], item[0]))
        done = {pid for _, pid, _ in scored}
        out = [(pid, score) for _, pid, score in scored]
        out += [item for item in ranked if item[0] not in done]
        report = RerankReport(
            reranker=self.reranker,
            top_n=self.top_n,
            budget_ms=float(self.budget_ms),
            candidates=len(head),
            scored=len(scored),
            stopped=stopped,
            elapsed_ms=(self.clock() - start) * 1000.0,
            scores=tuple(out[: len(scored)]),
        )
        return out, report
