"""A query's prepared lexical terms (:func:`kbsearch.retrieve.lexical.terms.prepare_terms`
makes them; the routes, the BM25 explanation and the backends read them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QueryTerms:
    """``analysed``: the analyser's terms (shown to users); ``kept`` / ``clamped``: the
    folded terms as matched, in query order (:mod:`kbsearch.retrieve.lexical.terms`)."""

    analysed: tuple[str, ...]
    kept: tuple[str, ...]
    clamped: tuple[str, ...]
