"""Query-term preparation for the lexical route, written once for every lexical path.

A query is analysed (:meth:`kbsearch.text.analysis.Analyzer.query_terms`: words, stemmed with
the languages of the passages the audience may see, or the language filter's), accents are
folded, and the terms are split in two:

- **kept**: terms whose FTS5 IDF is not clamped;
- **clamped**: terms found in at least half of the audience's passages, whose IDF FTS5 clamps
  to 1e-6 (:func:`kbsearch.retrieve.lexical.bm25.fts5_idf`). Such a term adds at most 2.2e-6 to any
  score, yet makes FTS5 visit and score nearly every row ("the", "of"), so the route matches
  the kept terms first and turns to the clamped ones only while it has fewer than k hits
  (a passage holding a query term is never dropped while the route returns fewer than k).
  When every term is clamped, all are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...errors import InvalidArgumentError
from ...filters import Filters
from ...store import fts_table
from ...text.analysis import Analyzer, fold_diacritics
from .bm25 import CLAMPED_IDF, fts5_idf
from .query_terms import LexicalStatistics, QueryTerms


def query_languages(filters: Filters, visible: Sequence[str]) -> list[str]:
    """Languages whose stemmers analyse a query: the filter's, else those of the passages the
    audience may see (``visible``)."""
    return [filters.language] if filters.language else list(visible)


def prepare_terms(
    analyzer: Analyzer,
    query: str,
    languages: Sequence[str],
    passages: int,
    frequency: Callable[[str], int],
) -> QueryTerms:
    """The query's terms for an FTS5 table of ``passages`` rows where ``frequency(term)`` rows
    hold ``term``.

    Raises:
        QueryError: empty / punctuation-only / over-long query.
    """
    analysed = analyzer.query_terms(query, languages)
    folded = [fold_diacritics(t) for t in analysed]
    clamped = [t for t in folded if fts5_idf(passages, frequency(t)) <= CLAMPED_IDF]
    if len(clamped) == len(folded):
        return QueryTerms(tuple(analysed), tuple(folded), ())
    kept = tuple(t for t in folded if t not in clamped)
    return QueryTerms(tuple(analysed), kept, tuple(clamped))


def searched_terms(table: str, terms: QueryTerms | Sequence[str], filters: Filters) -> QueryTerms:
    """``terms`` for an index of the FTS5 table ``table`` (a plain list: all kept).

    Raises:
        InvalidArgumentError: ``filters.audience`` searches another FTS5 table.
    """
    if fts_table(str(filters.audience)) != table:
        raise InvalidArgumentError(
            f"audience {filters.audience!r} does not search {table}; load its own index"
        )
    return terms if isinstance(terms, QueryTerms) else QueryTerms(tuple(terms), tuple(terms), ())


def statistics_terms(
    statistics: LexicalStatistics, analyzer: Analyzer, query: str, filters: Filters
) -> QueryTerms:
    """The query's terms with an index's statistics (its N, languages and frequencies).

    Raises:
        QueryError: empty / punctuation-only / over-long query.
    """
    languages = query_languages(filters, statistics.languages)
    return prepare_terms(analyzer, query, languages, statistics.passages, statistics.frequency)
