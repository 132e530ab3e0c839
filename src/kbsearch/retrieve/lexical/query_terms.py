"""A query's prepared lexical terms (:func:`kbsearch.retrieve.lexical.terms.prepare_terms`
makes them; the routes, the BM25 explanation and the backends read them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class QueryTerms:
    """``analysed``: the analyser's terms (shown to users); ``kept`` / ``clamped``: the
    folded terms as matched, in query order (:mod:`kbsearch.retrieve.lexical.terms`)."""

    analysed: tuple[str, ...]
    kept: tuple[str, ...]
    clamped: tuple[str, ...]


class LexicalStatistics(Protocol):
    """The statistics of one audience's lexical index that query terms are prepared with."""

    @property
    def passages(self) -> int:
        """N: passages the audience's index holds."""
        ...

    @property
    def languages(self) -> list[str]:
        """Languages of those passages, sorted (they choose the query's stemmers)."""
        ...

    def frequency(self, term: str) -> int:
        """Passages holding ``term`` (0 when absent)."""
        ...
