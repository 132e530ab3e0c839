"""The route registry: each route turns a query into its ranked candidates under filters.

``hybrid`` is not a route: it is fusion over every registered route
(:mod:`kbsearch.pipeline.run`). A new route is a class with a ``name``, ``available()``
and ``candidates(query, filters, depth)``, added to :data:`REGISTRY` with a factory that builds
it from a :class:`RouteContext`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..filters import Filters
from ..text.analysis import Analyzer
from .backend import Backend
from .lexical.query_terms import QueryTerms
from .lexical.terms import prepare_terms, query_languages
from .query import Query, QueryVectors

HYBRID = "hybrid"


class Route(Protocol):
    """One way of finding passages."""

    name: str

    def available(self) -> bool:
        """False when this index cannot serve the route (no vectors)."""
        ...

    def candidates(
        self, query: str | Query, filters: Filters, depth: int
    ) -> list[tuple[str, float]]:
        """Top ``depth`` ``(passage_id, score)`` under ``filters``, best first, ties by id.

        Raises:
            QueryError: the query cannot be searched. InvalidArgumentError: not available.
        """
        ...

    def scores(
        self, query: str | Query, filters: Filters, passage_ids: Sequence[str]
    ) -> dict[str, float]:
        """``{passage_id: score}`` of given passages (candidates of another route), scored as
        :meth:`candidates` scores its own; those the route cannot score are left out.

        Raises:
            as :meth:`candidates`; InvalidArgumentError: the backend cannot score given
            passages.
        """
        ...


@dataclass(frozen=True)
class RouteContext:
    """What a route factory may use: the backend, the index's analyzer, the query encoder."""

    backend: Backend
    analyzer: Callable[[], Analyzer]
    encoder: QueryVectors


class LexicalRoute:
    """BM25 over the audience's lexical index (:mod:`kbsearch.retrieve.lexical`)."""

    name = "lexical"

    def __init__(self, context: RouteContext) -> None:
        self.backend = context.backend
        self.analyzer = context.analyzer

    def available(self) -> bool:
        return True

    def terms(self, query: str | Query, filters: Filters) -> QueryTerms:
        """The query's terms with the audience's statistics (the public's: public only),
        prepared once per :class:`~kbsearch.retrieve.query.Query`, audience and languages.

        Raises:
            QueryError: empty / punctuation-only / over-long query.
        """
        query = Query.of(query)
        audience = str(filters.audience)
        stats = self.backend.lexical_statistics(audience)
        languages = query_languages(filters, stats.languages)
        analyzer = self.analyzer()
        return query.terms(
            (analyzer.name, audience, tuple(languages)),
            lambda: prepare_terms(analyzer, query.text, languages, stats.passages, stats.frequency),
        )

    def candidates(
        self, query: str | Query, filters: Filters, depth: int
    ) -> list[tuple[str, float]]:
        return self.backend.lexical_candidates(self.terms(query, filters), filters, depth)

    def scores(
        self, query: str | Query, filters: Filters, passage_ids: Sequence[str]
    ) -> dict[str, float]:
        terms = self.terms(query, filters)
        return self.backend.lexical_scores(terms, str(filters.audience), passage_ids)


class DenseRoute:
    """Exact cosine over the passage vectors (:mod:`kbsearch.retrieve.dense`)."""

    name = "dense"

    def __init__(self, context: RouteContext) -> None:
        self.backend = context.backend
        self.encoder = context.encoder

    def available(self) -> bool:
        return self.encoder.available()

    def candidates(
        self, query: str | Query, filters: Filters, depth: int
    ) -> list[tuple[str, float]]:
        if not self.encoder.indexed():
            return []
        vector = Query.of(query).vector(self.encoder)
        return self.backend.dense_candidates(vector, filters, depth)

    def scores(
        self, query: str | Query, filters: Filters, passage_ids: Sequence[str]
    ) -> dict[str, float]:
        if not self.encoder.indexed():
            return {}
        return self.backend.dense_scores(Query.of(query).vector(self.encoder), passage_ids)


class TitleScorer:
    """The cosine of the query with given passages' heading vectors
    (:mod:`kbsearch.index.headings`): the ``title`` score a score fusion reads. Not a route (it
    finds no candidates of its own);
    empty for an index without vectors or built before heading vectors."""

    name = "title"

    def __init__(self, context: RouteContext) -> None:
        self.backend = context.backend
        self.encoder = context.encoder

    def scores(
        self, query: str | Query, filters: Filters, passage_ids: Sequence[str]
    ) -> dict[str, float]:
        if not self.encoder.available() or not self.encoder.indexed():
            return {}
        return self.backend.heading_scores(Query.of(query).vector(self.encoder), passage_ids)


REGISTRY: dict[str, Callable[[RouteContext], Route]] = {
    LexicalRoute.name: LexicalRoute,
    DenseRoute.name: DenseRoute,
}


def route_names() -> tuple[str, ...]:
    """Every name a search accepts: the registered routes, then ``hybrid``."""
    return (*REGISTRY, HYBRID)


def make_routes(context: RouteContext) -> dict[str, Route]:
    """One instance of every registered route, in registry order."""
    return {name: factory(context) for name, factory in REGISTRY.items()}


class Scorer(Protocol):
    """Scores given passages (a route, or an extra score such as :class:`TitleScorer`)."""

    def scores(
        self, query: str | Query, filters: Filters, passage_ids: Sequence[str]
    ) -> dict[str, float]: ...


def make_scorers(context: RouteContext) -> dict[str, Scorer]:
    """The extra scores a score fusion reads beside the routes' (today: ``title``)."""
    return {TitleScorer.name: TitleScorer(context)}
