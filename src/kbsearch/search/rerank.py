"""A reranking stage: rescore the head of the fused list with a pair scorer, within a time budget.

:class:`RerankStage` implements :class:`kbsearch.search.stages.Stage`. It takes the first
``top_n`` passages of the list it is given, scores ``(query, passage text)`` pairs in batches of
``batch`` with a :class:`PairScorer` (for example a sentence-transformers ``CrossEncoder`` loaded
from a local path, :func:`cross_encoder_scorer`), and orders the scored passages by that score
(ties: their previous order). When the budget (milliseconds, wall time) runs out between two
batches, the passages not yet scored keep their previous order after the scored ones, so a slow
scorer degrades to the fused order rather than to a timeout. Passages below ``top_n`` follow
unchanged. The stage never adds a passage: it reorders the ones it was given (their texts are
read under the same filters).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..errors import InvalidArgumentError
from ..filters import Filters

DEFAULT_TOP_N = 20
DEFAULT_BUDGET_MS = 200.0


class PairScorer(Protocol):
    """Scores ``(query, passage text)`` pairs; higher is more relevant. Returns one float per
    pair, in order."""

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> Sequence[float]: ...


TextsOf = Callable[[Sequence[str], Filters], dict[str, str]]


@dataclass
class RerankStage:
    """See the module docstring. ``texts(passage_ids, filters) -> {passage_id: text}``.

    Raises (at construction):
        InvalidArgumentError: ``top_n`` or ``batch`` < 1, or a budget that is not > 0.
    """

    scorer: PairScorer
    texts: TextsOf
    name: str = "rerank"
    top_n: int = DEFAULT_TOP_N
    batch: int = 8
    budget_ms: float = DEFAULT_BUDGET_MS
    clock: Callable[[], float] = field(default=time.perf_counter, repr=False)
    last_scored: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.top_n < 1 or self.batch < 1:
            raise InvalidArgumentError("rerank top_n and batch must be >= 1")
        if not self.budget_ms > 0:
            raise InvalidArgumentError(f"rerank budget must be > 0 ms, got {self.budget_ms}")

    def apply(
        self, query: str, ranked: Sequence[tuple[str, float]], filters: Filters
    ) -> list[tuple[str, float]]:
        head = list(ranked[: self.top_n])
        texts = self.texts([pid for pid, _ in head], filters)
        head = [(pid, s) for pid, s in head if pid in texts]
        start = self.clock()
        scored: list[tuple[int, str, float]] = []
        for first in range(0, len(head), self.batch):
            if scored and (self.clock() - start) * 1000.0 > self.budget_ms:
                break
            chunk = head[first : first + self.batch]
            values = self.scorer([(query, texts[pid]) for pid, _ in chunk])
            pairs = zip(chunk, values, strict=True)  # one score per pair, or ValueError
            scored += [(first + i, pid, float(v)) for i, ((pid, _), v) in enumerate(pairs)]
        self.last_scored = len(scored)
        scored.sort(key=lambda item: (-item[2], item[0]))
        done = {pid for _, pid, _ in scored}
        rest = [item for item in ranked if item[0] not in done]
        return [(pid, score) for _, pid, score in scored] + rest


def cross_encoder_scorer(path: str | Path) -> PairScorer:
    """A sentence-transformers ``CrossEncoder`` from a local folder (never downloaded).

    Raises:
        InvalidArgumentError: the folder does not exist or sentence-transformers is missing.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise InvalidArgumentError(f"no cross-encoder model folder at {folder}")
    try:
        from sentence_transformers import CrossEncoder
    except ImportError:
        raise InvalidArgumentError(
            "the cross-encoder reranker needs sentence-transformers (pip install 'kbsearch[st]')"
        ) from None
    model = CrossEncoder(str(folder), local_files_only=True)

    def score(pairs: Sequence[tuple[str, str]]) -> Sequence[float]:
        return [float(x) for x in model.predict(list(pairs))]

    return score
