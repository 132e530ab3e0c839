"""The abstention stage: after fusion, decide whether the hits answer the question.

It reads the lexical and dense lists the search produced (never searching again, never
reordering them) and returns a :class:`~kbsearch.search.abstain.Decision` with the calibrated
confidence (:mod:`kbsearch.search.abstain`). An index without vectors has no dense list: the
stage then gives no decision (``None``), since its model reads both routes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..filters import Filters
from ..records import Hit
from .abstain import ConfidenceModel, Decision
from .evidence import BackgroundCache, Searcher, collect


@dataclass(frozen=True)
class Assessment:
    """A search's hits (best first, as the route ranked them) and the stage's decision
    (``None`` when the index cannot support one)."""

    hits: list[Hit]
    decision: Decision | None
    routes: Mapping[str, tuple[tuple[str, float], ...]]


class AbstentionStage:
    """Answer-or-abstain over a search's route lists (module docstring)."""

    name = "abstain"

    def __init__(self, model: ConfidenceModel | None = None) -> None:
        self._model = model
        self._cache = BackgroundCache()

    @property
    def model(self) -> ConfidenceModel:
        """The model (the shipped one unless given), read on first use."""
        if self._model is None:
            self._model = ConfidenceModel.load()
        return self._model

    def decide(
        self,
        kb: Searcher,
        query: str,
        filters: Filters,
        routes: Mapping[str, Sequence[tuple[str, float]]],
        threshold: float | None = None,
    ) -> Decision | None:
        """The decision from ``routes`` (``{"lexical": [...], "dense": [...]}``, best first);
        ``None`` without a dense list.

        Raises:
            InvalidArgumentError: ``threshold`` outside [0, 1].
        """
        if "lexical" not in routes or "dense" not in routes:
            return None
        evidence = collect(kb, query, filters, routes["lexical"], routes["dense"], self._cache)
        return self.model.decide(evidence, threshold)
