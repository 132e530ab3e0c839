"""The lexical route through FTS5's own SQL (``MATCH`` and ``bm25()``): the reference the
in-memory impact index (:mod:`kbsearch.retrieve.lexical.impact`) is held to, bit for bit.

Kept terms are matched first; while that finds fewer than ``k`` passages, the passages holding
only clamped terms follow, by their own BM25 (:mod:`kbsearch.retrieve.lexical.terms`).
"""

from __future__ import annotations

from ...filters import Filters
from ...store import Store
from ...text.analysis import Analyzer, match_expression
from .query_terms import QueryTerms
from .terms import prepare_terms, query_languages


def sql_terms(store: Store, analyzer: Analyzer, query: str, filters: Filters) -> QueryTerms:
    """The query's terms with the statistics of the audience's FTS5 table.

    Raises:
        QueryError: empty / punctuation-only / over-long query.
    """
    audience = str(filters.audience)
    passages, _ = store.fts.statistics(audience)
    languages = query_languages(filters, store.documents.languages(audience))
    return prepare_terms(
        analyzer,
        query,
        languages,
        passages,
        lambda term: store.fts.document_frequency(term, audience),
    )


def search_sql(
    store: Store, terms: QueryTerms, filters: Filters, k: int
) -> list[tuple[str, float]]:
    """Top ``k`` ``(passage_id, bm25)`` for prepared ``terms``, best first, ties by id."""
    if k <= 0 or not terms.kept:
        return []
    hits = store.fts.search(match_expression(terms.kept), filters, k)
    if len(hits) < k and terms.clamped:
        # every passage holding a kept term is in hits, so the others hold only clamped terms
        seen = {pid for pid, _ in hits}
        more = store.fts.search(match_expression(terms.clamped), filters, k + len(hits))
        hits += [(pid, score) for pid, score in more if pid not in seen][: k - len(hits)]
    return hits


def lexical_search(
    store: Store, analyzer: Analyzer, query: str, filters: Filters, k: int
) -> list[tuple[str, float]]:
    """Top ``k`` ``(passage_id, bm25)`` for ``query``, best first, ties by passage id.

    Raises:
        QueryError: empty / punctuation-only / over-long query.
    """
    return search_sql(store, sql_terms(store, analyzer, query, filters), filters, k)
