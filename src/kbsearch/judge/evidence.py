"""Collecting the abstention stage's :class:`~kbsearch.judge.confidence.Evidence` through the
backend protocol.

The route lists come from the search itself; this module adds what they do not carry: the query
terms' IDF and presence in each route's top passage (the audience's lexical statistics and
:meth:`~kbsearch.retrieve.backend.Backend.term_presence`, so the statistics are those of the
audience's FTS5 table) and the query's cosine background over the collection
(:meth:`~kbsearch.retrieve.backend.Backend.background`: the passage vectors' mean and covariance,
from the moments each write keeps, :mod:`kbsearch.store.moments`). It asks the backend only,
never for a whole table: each backend answers in its own way (the embedded one from its
in-memory indexes, Qdrant's from collection statistics and the rows of the passages named).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..filters import Filters
from ..records import PassageRow
from ..retrieve.backend import Backend, Background, LexicalStatistics
from ..retrieve.crosslang import is_cross_language, query_language, query_language_among
from ..retrieve.lexical.bm25 import fts5_idf
from ..retrieve.lexical.impact import ImpactIndex
from ..text.analysis import Analyzer, fold_diacritics, stem_words, words
from ..text.matching import sentence_spans
from .confidence_features import HUB_DEPTH, SENTENCE_DEPTH, Evidence
from .span import WordBits, share

__all__ = ["Background", "TermStatistics", "centralities", "collect", "gather", "term_statistics"]


@dataclass(frozen=True)
class TermStatistics:
    """Each distinct content word of the query (stop words dropped as the lexical route drops
    them) with its search terms, its FTS5 IDF and whether the index holds it.

    A word is counted once however many stems it has: in an index of two languages each word
    is stemmed both ways and the stem of the other language is usually absent, so counting
    stems would make a bilingual collection look as if it lacked a third of every query.
    A word's IDF is that of its most frequent term in the index (the stem the collection
    uses), or ``ln((N + 0.5) / 0.5)`` when the index holds none of its terms.
    """

    words: tuple[tuple[str, ...], ...]
    idf: tuple[float, ...]
    known: tuple[bool, ...]

    @property
    def terms(self) -> tuple[str, ...]:
        """Every term of every word, in order, without repeats (what the lexical route
        searches)."""
        return tuple(dict.fromkeys(t for group in self.words for t in group))


def term_statistics(
    index: LexicalStatistics, analyzer: Analyzer, query: str, languages: Sequence[str]
) -> TermStatistics:
    """The query's content words (:meth:`kbsearch.text.analysis.Analyzer.word_terms`, accents
    folded as the lexical route folds them) with their IDF in ``index`` (class docstring).

    Raises:
        QueryError: empty / punctuation-only / over-long query.
    """
    groups = [
        tuple(dict.fromkeys(fold_diacritics(t) for t in group))
        for group in analyzer.word_terms(query, languages)
    ]
    words_ = tuple(dict.fromkeys(groups))
    frequency = [max(index.frequency(t) for t in group) for group in words_]
    return TermStatistics(
        words_,
        tuple(fts5_idf(index.passages, df) for df in frequency),
        tuple(df > 0 for df in frequency),
    )


def terms_in_row(
    index: ImpactIndex, words_: Sequence[Sequence[str]], position: int
) -> tuple[bool, ...]:
    """Whether the passage at row ``position`` of ``index`` holds each word (any of its
    terms; binary search in each term's postings, which are sorted by row)."""
    out = []
    for group in words_:
        found = False
        for term in group:
            i = index.vocabulary.get(term)
            if i is None:
                continue
            start, end = int(index.indptr[i]), int(index.indptr[i + 1])
            postings = index.positions[start:end]
            j = int(np.searchsorted(postings, position))
            if j < len(postings) and int(postings[j]) == position:
                found = True
                break
        out.append(found)
    return tuple(out)


def row_of(index: ImpactIndex, passage_id: str) -> int | None:
    """Row position of ``passage_id`` in ``index`` (``None`` when absent; the index's
    ``position`` map, so no scan of every passage id per search)."""
    return index.position.get(passage_id)


def text_terms(text: str, analyzer: Analyzer, languages: Sequence[str]) -> frozenset[str]:
    """The terms of ``text`` as the query's are made (stemmed in ``languages`` with the
    ``stem`` analyzer, accents folded); cached per process (the same passages' sentences come
    back search after search: ~3.5 ms of stemming per search on the demo, measured)."""
    return _text_terms(text, analyzer.name, tuple(languages))


@lru_cache(maxsize=16384)
def _text_terms(text: str, analyzer: str, languages: tuple[str, ...]) -> frozenset[str]:
    found = words(text)
    if analyzer == "plain":
        return frozenset(fold_diacritics(w) for w in found)
    return frozenset(t for lang in languages or ("en",) for t in stem_words(found, lang))


def sentence_coverage(
    texts: Sequence[str], statistics: TermStatistics, analyzer: Analyzer, languages: Sequence[str]
) -> float:
    """The highest IDF-weighted share of the query terms found in one sentence of ``texts``
    (sentences as :func:`kbsearch.text.matching.sentence_spans` cuts them); 0 without terms."""
    total = sum(statistics.idf)
    if total <= 0:
        return 0.0
    best = 0.0
    shares: dict[int, float] = {}  # by the words a sentence holds: many hold the same
    held = WordBits(statistics.words)
    for text in texts:
        for start, end in sentence_spans(text):
            bits = held(text_terms(text[start:end], analyzer, languages))
            if bits not in shares:
                shares[bits] = share(bits, statistics.idf, total)
            best = max(best, shares[bits])
    return best


def first_passages(
    lexical: Sequence[tuple[str, float]], dense: Sequence[tuple[str, float]]
) -> list[str]:
    """The first :data:`SENTENCE_DEPTH` passages of each route, lexical first, without repeats
    (the passages whose text the evidence reads)."""
    return list(dict.fromkeys(p for p, _ in [*lexical[:SENTENCE_DEPTH], *dense[:SENTENCE_DEPTH]]))


def gather(
    index: LexicalStatistics,
    statistics: TermStatistics,
    lexical: Sequence[tuple[str, float]],
    dense: Sequence[tuple[str, float]],
    background: tuple[float, float],
    query_language: str,
    texts: Callable[[Sequence[str]], Mapping[str, str]],
    analyzer: Analyzer,
    languages: Sequence[str],
    lexical_missing: bool = False,
    presence: Callable[[str], tuple[bool, ...] | None] | None = None,
    centrality: Sequence[float] = (),
) -> Evidence:
    """The evidence of one search from its two route lists (best first); ``texts`` gives the
    text of passages by id (those of :func:`first_passages` are read); ``presence`` whether a
    passage holds each word of ``statistics`` (``None``: the passage is not in the audience's
    index; default, for an :class:`ImpactIndex` ``index``: its postings); ``lexical_missing``:
    whether the search's lexical side says nothing (``Evidence.lexical_missing``);
    ``centrality``: the first dense candidates' ``p . m`` (:func:`centralities`)."""
    firsts = first_passages(lexical, dense)
    found = texts(firsts)
    coverage = sentence_coverage(
        [found[p] for p in firsts if p in found], statistics, analyzer, languages
    )
    if presence is None:
        impact = index
        if not isinstance(impact, ImpactIndex):
            raise TypeError("gather: give presence, or an ImpactIndex to read it from")

        def presence(passage_id: str) -> tuple[bool, ...] | None:
            row = row_of(impact, passage_id)
            return None if row is None else terms_in_row(impact, statistics.words, row)

    def top(ranking: Sequence[tuple[str, float]]) -> tuple[bool, ...]:
        held = presence(ranking[0][0]) if ranking else None
        return (False,) * len(statistics.words) if held is None else held

    return Evidence(
        lexical=tuple((str(p), float(s)) for p, s in lexical),
        dense=tuple((str(p), float(s)) for p, s in dense),
        term_idf=statistics.idf,
        term_known=statistics.known,
        term_in_top=top(lexical),
        term_in_dense_top=top(dense),
        passages=index.passages,
        sentence_coverage=coverage,
        background_mean=background[0],
        background_std=background[1],
        query_language=query_language,
        lexical_missing=lexical_missing,
        dense_centrality=tuple(float(c) for c in centrality[:HUB_DEPTH]),
    )


def centralities(
    backend: Backend, background: Background, dense: Sequence[tuple[str, float]]
) -> tuple[float, ...]:
    """The first :data:`HUB_DEPTH` dense candidates' mean cosine over the collection, ``p . m``
    (``m``: ``background.mean``), in the list's order: the backend's cosine of each with
    ``m / |m|``, times ``|m|`` (one read of those passages' vectors). Empty when ``m`` is 0 or
    a candidate has no vector."""
    ids = [p for p, _ in dense[:HUB_DEPTH]]
    norm = float(np.linalg.norm(background.mean))
    if not ids or norm == 0.0:
        return ()
    found = backend.dense_scores((background.mean / norm).astype(np.float32), ids)
    if len(found) < len(ids):
        return ()
    return tuple(found[p] * norm for p in ids)


def collect(
    backend: Backend,
    analyzer: Analyzer,
    query: str,
    filters: Filters,
    lexical: Sequence[tuple[str, float]],
    dense: Sequence[tuple[str, float]],
    vector: np.ndarray,
    rows: Callable[[Sequence[str]], Mapping[str, PassageRow]],
) -> Evidence:
    """The evidence of one search from its two route lists (best first), ``vector`` (the
    query's, shape ``(dim,)``) and ``rows`` (the run's reader of passages by id), with the
    audience's lexical statistics, the query's cosine background over the audience's
    passages, and whether its lexical side says nothing: the dense top passage is
    cross-language (:func:`kbsearch.retrieve.crosslang.is_cross_language`, the query's language
    known among the two or more languages searched), so the question's words cannot be
    expected in its answer.

    Raises:
        QueryError: the query cannot be analysed.
    """
    audience = str(filters.audience)
    index = backend.lexical_statistics(audience)
    languages = [filters.language] if filters.language else index.languages
    statistics = term_statistics(index, analyzer, query, languages)
    background = backend.background(audience)
    spread = background.of_query(vector)
    found = rows(first_passages(lexical, dense))
    top = found.get(dense[0][0]) if dense else None
    cross = top is not None and is_cross_language(
        query_language_among(query, languages), top.language
    )

    def presence(passage_id: str) -> tuple[bool, ...] | None:
        row = found.get(passage_id)
        return None if row is None else backend.term_presence(statistics.words, row, audience)

    return gather(
        index,
        statistics,
        lexical,
        dense,
        spread,
        query_language(query),
        lambda ids: {p: found[p].passage.text for p in ids if p in found},
        analyzer,
        languages,
        cross,
        presence,
        centralities(backend, background, dense),
    )
