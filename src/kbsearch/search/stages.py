"""Stages run after fusion (or after the one route), before the top k is cut: a reranker, an
abstention rule. None by default; :class:`kbsearch.search.pipeline.Pipeline` takes a list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..filters import Filters


class Stage(Protocol):
    """One step over a ranked list ``[(passage_id, score), ...]`` (best first).

    A stage may reorder, rescore or drop passages (it must never add one the routes did not
    return under ``filters``); its input and output go into the trace.
    """

    name: str

    def apply(
        self, query: str, ranked: Sequence[tuple[str, float]], filters: Filters
    ) -> list[tuple[str, float]]: ...
