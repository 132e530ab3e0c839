"""The lexical route: BM25 over SQLite FTS5, and the per-term explanation of a score.

FTS5's ``bm25()`` (SQLite FTS5 documentation, section 5.1.1; Robertson & Zaragoza, "The
Probabilistic Relevance Framework: BM25 and Beyond", 2009) with k1 = 1.2 and b = 0.75:

    score(D, Q) = sum over query terms t of  IDF(t) * f(t, D) * (k1 + 1)
                                             / (f(t, D) + k1 * (1 - b + b * |D| / avgdl))
    IDF(t) = ln((N - n(t) + 0.5) / (n(t) + 0.5)), replaced by 1e-6 when <= 0

N = passages in the index, n(t) = passages containing t, |D| = tokens in D, avgdl = mean |D|.
FTS5 returns the negated sum; kbsearch reports it with higher = better.

A term found in at least half of the passages has its IDF clamped to 1e-6, so it adds at most
2.2e-6 to any score, yet it makes FTS5 visit and score nearly every row ("the", "of"). Such
terms are left out of the match (unless every term is one), which makes SciFact queries about
three times faster; the explanation lists them as ignored.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .analysis import Analyzer, fold_diacritics, match_expression
from .records import Filters
from .store import Store

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class TermContribution:
    """One query term's share of a passage's BM25 score."""

    term: str
    idf: float
    tf: int
    document_frequency: int
    length_norm: float  # 1 - b + b * |D| / avgdl
    contribution: float


@dataclass(frozen=True)
class BM25Explanation:
    passages: int
    avgdl: float
    length: int
    terms: tuple[TermContribution, ...]
    ignored: tuple[str, ...] = ()

    @property
    def score(self) -> float:
        return math.fsum(t.contribution for t in self.terms)


def query_languages(store: Store, filters: Filters) -> list[str]:
    """Languages whose stemmers analyse a query: the filter's, else the index's."""
    return [filters.language] if filters.language else store.languages()


def split_terms(store: Store, terms: Sequence[str], audience: str) -> tuple[list[str], list[str]]:
    """``(kept, ignored)``: ignored terms are those whose FTS5 IDF is clamped (document
    frequency >= N / 2 among the passages the audience's index holds), unless that is every
    term."""
    passages, _ = store.fts_statistics(audience)
    clamped = [
        t for t in terms if fts5_idf(passages, store.fts_document_frequency(t, audience)) <= 1e-6
    ]
    if len(clamped) == len(terms):
        return list(terms), []
    return [t for t in terms if t not in clamped], clamped


def lexical_search(
    store: Store, analyzer: Analyzer, query: str, filters: Filters, k: int
) -> list[tuple[str, float]]:
    """Top ``k`` ``(passage_id, bm25)`` for ``query``, best first, ties by passage id.

    Raises:
        QueryError: empty / punctuation-only / over-long query.
    """
    terms = analyzer.query_terms(query, query_languages(store, filters))
    kept, _ = split_terms(store, [fold_diacritics(t) for t in terms], filters.audience)
    return store.lexical_search(match_expression(kept), filters, k)


def bm25_term(idf: float, tf: int, length: int, avgdl: float) -> tuple[float, float]:
    """``(length_norm, contribution)`` of one term, FTS5's formula (module docstring)."""
    norm = 1 - B + B * length / avgdl if avgdl else 1.0
    return norm, idf * tf * (K1 + 1) / (tf + K1 * norm)


def fts5_idf(passages: int, document_frequency: int) -> float:
    idf = math.log((passages - document_frequency + 0.5) / (document_frequency + 0.5))
    return idf if idf > 0 else 1e-6


def explain_bm25(
    store: Store, terms: Sequence[str], row_id: int, audience: str = "public"
) -> BM25Explanation:
    """Recompute one passage's BM25 score term by term from FTS5's own statistics.

    The statistics are those of the audience's FTS5 table (a public explanation counts only
    public passages). The contributions add up to ``-bm25()`` for that row (tested to 1e-9).
    Terms absent from the passage are listed with tf 0 and contribute 0; clamped terms are
    listed as ignored.
    """
    passages, total_tokens = store.fts_statistics(audience)
    avgdl = total_tokens / passages if passages else 0.0
    length = store.fts_document_length(row_id, audience)
    kept, ignored = split_terms(store, terms, audience)
    parts = []
    for term in kept:
        df = store.fts_document_frequency(term, audience)
        tf = store.fts_term_frequency(term, row_id, audience)
        idf = fts5_idf(passages, df) if df else 0.0
        norm, value = bm25_term(idf, tf, length, avgdl)
        parts.append(TermContribution(term, idf, tf, df, norm, value if tf else 0.0))
    return BM25Explanation(passages, avgdl, length, tuple(parts), tuple(ignored))
