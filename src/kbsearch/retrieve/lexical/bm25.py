"""BM25 as SQLite FTS5 computes it, written once, and the per-term explanation of a score.

FTS5's ``bm25()`` (SQLite FTS5 documentation, section 5.1.1; Robertson & Zaragoza, "The
Probabilistic Relevance Framework: BM25 and Beyond", 2009) with k1 = 1.2 and b = 0.75:

    score(D, Q) = sum over query terms t of  IDF(t) * f(t, D) * (k1 + 1)
                                             / (f(t, D) + k1 * (1 - b + b * |D| / avgdl))
    IDF(t) = ln((N - n(t) + 0.5) / (n(t) + 0.5)), replaced by 1e-6 when <= 0

N = passages in the index, n(t) = passages containing t, |D| = tokens in D, avgdl = mean |D|.
FTS5 returns the negated sum; kbsearch reports it with higher = better. The statistics are
those of the audience's own FTS5 table (a public search counts only public passages).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...store import Store
    from .query_terms import QueryTerms

K1 = 1.2
B = 0.75
CLAMPED_IDF = 1e-6


def fts5_idf(passages: int, document_frequency: int) -> float:
    """FTS5's IDF of a term held by ``document_frequency`` of ``passages`` rows (clamped)."""
    idf = math.log((passages - document_frequency + 0.5) / (document_frequency + 0.5))
    return idf if idf > 0 else CLAMPED_IDF


def bm25_term(idf: float, tf: int, length: int, avgdl: float) -> tuple[float, float]:
    """``(length_norm, contribution)`` of one term, FTS5's formula (module docstring)."""
    norm = 1 - B + B * length / avgdl if avgdl else 1.0
    return norm, idf * tf * (K1 + 1) / (tf + K1 * norm)


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
    """A passage's BM25 score term by term: ``terms`` are the terms that scored it in the
    route (the kept terms; the clamped ones when it holds no kept term), ``ignored`` the
    query terms left out of its score."""

    passages: int
    avgdl: float
    length: int
    terms: tuple[TermContribution, ...]
    ignored: tuple[str, ...] = ()

    @property
    def score(self) -> float:
        return math.fsum(t.contribution for t in self.terms)


def explain_bm25(
    store: Store, terms: QueryTerms, row_id: int, audience: str = "public"
) -> BM25Explanation:
    """Recompute one passage's BM25 score term by term from FTS5's own statistics.

    The contributions add up to the route's score for that row (tested to 1e-9): the kept
    terms' ``-bm25()``, or for a passage holding only clamped terms (returned because the kept
    terms matched fewer than k passages), the clamped terms' ``-bm25()``. Terms absent from
    the passage are listed with tf 0 and contribute 0.
    """
    passages, total_tokens = store.fts.statistics(audience)
    avgdl = total_tokens / passages if passages else 0.0
    length = store.fts.document_length(row_id, audience)

    def parts(names: tuple[str, ...]) -> list[TermContribution]:
        out = []
        for term in names:
            df = store.fts.document_frequency(term, audience)
            tf = store.fts.term_frequency(term, row_id, audience)
            idf = fts5_idf(passages, df) if df else 0.0
            norm, value = bm25_term(idf, tf, length, avgdl)
            out.append(TermContribution(term, idf, tf, df, norm, value if tf else 0.0))
        return out

    kept = parts(terms.kept)
    if terms.clamped and not any(t.tf for t in kept):
        clamped = parts(terms.clamped)
        if any(t.tf for t in clamped):
            return BM25Explanation(passages, avgdl, length, tuple(clamped), terms.kept)
    return BM25Explanation(passages, avgdl, length, tuple(kept), terms.clamped)
