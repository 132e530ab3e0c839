"""One request's query, analysed once: its words checked when it is made, its vector and its
lexical terms computed on first use and kept for the rest of the request.

A search asks for the query's vector in the dense route, the title scorer, the abstention
stage, an explanation and a page's snippets, and for its lexical terms in the lexical route's
candidates, its scores of other routes' candidates and the explanation's BM25 terms; each
asks the :class:`Query` of its request, so the encoder and the analyser run once per request.
A :class:`Query` lives for one run of the pipeline (one read transaction): the terms it keeps
hold the statistics of the generation that run reads.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Protocol

import numpy as np

from ..text.analysis import query_words
from .lexical.query_terms import QueryTerms


class QueryVectors(Protocol):
    """Turns a query into the vector the dense route searches with
    (:class:`kbsearch.retrieve.encoder.QueryEncoder` is the one a knowledge base uses)."""

    def available(self) -> bool:
        """True when the index has an embedder (vectors)."""
        ...

    def indexed(self) -> bool:
        """False for a knowledge base never indexed (every route is empty there)."""
        ...

    def vector(self, query: str) -> np.ndarray:
        """The query's vector, shape ``(dim,)``, L2-normalised.

        Raises:
            InvalidArgumentError: no vectors in this index. QueryError: too long a query.
        """
        ...


class Query:
    """``text`` as given and its ``words`` (:func:`kbsearch.text.analysis.query_words`).

    Raises:
        QueryError: an empty, punctuation-only or over-long query (when made).
    """

    __slots__ = ("text", "words", "_vector", "_terms")

    def __init__(self, text: str) -> None:
        self.words = tuple(query_words(text))
        self.text = text
        self._vector: np.ndarray | None = None
        self._terms: dict[Hashable, QueryTerms] = {}

    @classmethod
    def of(cls, query: str | Query) -> Query:
        """``query`` itself when it is a :class:`Query`, else a new one of its text."""
        return query if isinstance(query, Query) else cls(query)

    def vector(self, encoder: QueryVectors) -> np.ndarray:
        """The query's vector from ``encoder`` (the request's one), read once.

        Raises:
            as :meth:`QueryVectors.vector`.
        """
        if self._vector is None:
            self._vector = encoder.vector(self.text)
        return self._vector

    def terms(self, key: Hashable, prepare: Callable[[], QueryTerms]) -> QueryTerms:
        """The lexical terms ``prepare()`` makes, once per ``key`` (what they depend on
        besides the text: the analyser, the audience, the languages).

        Raises:
            as ``prepare``.
        """
        found = self._terms.get(key)
        if found is None:
            found = self._terms[key] = prepare()
        return found

    def __repr__(self) -> str:
        return f"Query({self.text!r})"
