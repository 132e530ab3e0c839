"""The lexical route in memory: FTS5's BM25 precomputed per (term, passage), summed per query.

An :class:`ImpactIndex` reads one audience's FTS5 table once (its postings through the
fts5vocab tables, its ``N`` and total tokens from FTS5's own averages record) and stores, for
every term and every passage holding it, that term's BM25 contribution ("impact", Anh & Moffat,
"Pruned query evaluation using pre-computed impacts", SIGIR 2006) with FTS5's ``bm25()``
formula, k1 = 1.2, b = 0.75 (SQLite FTS5 documentation, section 5.1.1; see
:mod:`kbsearch.retrieve.lexical.bm25`), evaluated in the same operation order as SQLite's
``fts5_aux.c``:

    impact(t, D) = IDF(t) * ((f(t, D) * (k1 + 1)) / (f(t, D) + k1 * (1 - b + b * |D| / avgdl)))

A query adds its kept terms' impacts in query-term order, as ``bm25()`` adds its phrases, so
the scores equal FTS5's bit for bit and the ranking (ties by passage id) is the same as
:mod:`kbsearch.retrieve.lexical.sql`, which stays the reference (tests).

Building reads the whole table (O(tokens) time; about 12 bytes per posting kept); it happens
on the first lexical query after a write, never at open. A query term that is not ASCII and not
in the vocabulary may tokenize differently in FTS5 (case folding, separators), so such a query
falls back to the SQL route, keeping the results identical.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...errors import StorageError
from ...filters import FilterColumns, Filters
from ...store import Store, fts_table
from ...text.analysis import Analyzer
from ..topk import top_k
from .bm25 import K1, B, fts5_idf
from .query_terms import QueryTerms
from .sql import search_sql
from .terms import searched_terms, statistics_terms


@dataclass
class ImpactIndex:
    """One audience's FTS5 table as a term x passage impact matrix (CSR), with filter columns.

    ``indptr`` (shape ``(terms + 1,)``) splits ``positions`` (int32, row positions in
    ``passage_ids``/``columns``) and ``impacts`` (float64, BM25 contributions) by term.
    Cached by the caller under ``generation`` (the store's write counter).
    """

    table: str
    generation: int
    passages: int  # N: rows of the FTS5 table
    avgdl: float
    vocabulary: dict[str, int]
    document_frequency: np.ndarray
    indptr: np.ndarray
    positions: np.ndarray
    impacts: np.ndarray
    passage_ids: np.ndarray
    columns: FilterColumns
    languages: list[str]  # of the passages this table holds (its audience's)

    @classmethod
    def load(cls, store: Store, audience: str) -> ImpactIndex:
        """Build the index of ``fts_table(audience)`` from ``store`` (reads every posting).

        Call it inside one read transaction (with the generation read in it too) so that
        every part comes from the same state of the file.

        Raises:
            StorageError: the FTS5 postings and the passages table disagree.
        """
        generation = store.database.generation()
        table = fts_table(audience)
        passages, total_tokens = store.fts.statistics(audience)
        avgdl = total_tokens / passages if passages else 0.0
        post = store.fts.postings(audience)
        rows = store.passages.filter_columns()
        n_terms, n_rows = len(post.terms), len(rows.row_ids)
        term = np.repeat(np.arange(n_terms, dtype=np.int64), post.instances)
        position = np.searchsorted(rows.row_ids, post.docs)
        if len(position) and (
            position.max() >= n_rows or not np.array_equal(rows.row_ids[position], post.docs)
        ):
            raise StorageError(f"{table} holds rows that are not passages; rebuild the index")
        # instances come term by term, rowids ascending: one run per (term, row) posting
        change = np.ones(len(term), dtype=bool)
        change[1:] = (term[1:] != term[:-1]) | (position[1:] != position[:-1])
        starts = np.flatnonzero(change)
        tf = np.diff(np.append(starts, len(term))).astype(np.float64)
        p_term, p_position = term[starts], position[starts]
        per_term = np.bincount(p_term, minlength=n_terms)
        if not np.array_equal(per_term, post.document_frequency):
            raise StorageError(f"{table}'s postings are not grouped by term; rebuild the index")
        length = np.bincount(position, minlength=n_rows).astype(np.float64)
        # math.log per term, as SQLite's log(): numpy's vectorised log may differ in the last bit
        idf = np.array(
            [fts5_idf(passages, int(df)) for df in post.document_frequency], dtype=np.float64
        )
        norm = (1 - B) + B * length / avgdl if avgdl else np.ones(n_rows)
        impacts = idf[p_term] * ((tf * (K1 + 1.0)) / (tf + K1 * norm[p_position]))
        columns = FilterColumns(
            rows.access, rows.language, rows.doc_id, rows.effective_from, rows.effective_to
        )
        return cls(
            table=table,
            generation=generation,
            passages=passages,
            avgdl=avgdl,
            vocabulary={t: i for i, t in enumerate(post.terms)},
            document_frequency=post.document_frequency,
            indptr=np.concatenate([[0], np.cumsum(per_term)]).astype(np.int64),
            positions=p_position.astype(np.int32),
            impacts=impacts,
            passage_ids=rows.passage_ids,
            columns=columns,
            languages=columns.languages(audience),
        )

    @cached_property
    def position(self) -> dict[str, int]:
        """``{passage_id: row position}``, built on first use (a race builds it twice, alike)."""
        return {str(pid): i for i, pid in enumerate(self.passage_ids)}

    def nbytes(self) -> int:
        """Bytes held by the numeric arrays (the vocabulary and ids not counted)."""
        arrays = [self.indptr, self.positions, self.impacts, self.document_frequency]
        return sum(a.nbytes for a in arrays)

    def frequency(self, term: str) -> int:
        """Rows holding ``term`` (0 when absent)."""
        i = self.vocabulary.get(term)
        return 0 if i is None else int(self.document_frequency[i])

    def scores(self, terms: Sequence[str]) -> np.ndarray:
        """BM25 of every row for ``terms`` (shape ``(rows,)``, float64; 0 where none matches),
        the terms' impacts added in the order given (repeats count again, as in FTS5)."""
        out = np.zeros(len(self.passage_ids), dtype=np.float64)
        for term in terms:
            i = self.vocabulary.get(term)
            if i is not None:
                start, end = self.indptr[i], self.indptr[i + 1]
                out[self.positions[start:end]] += self.impacts[start:end]
        return out

    def terms(self, analyzer: Analyzer, query: str, filters: Filters) -> QueryTerms:
        """The query's terms with this table's statistics (as :func:`sql_terms` gives them).

        Raises:
            QueryError: empty / punctuation-only / over-long query.
        """
        return statistics_terms(self, analyzer, query, filters)

    def _top(self, scores: np.ndarray, filters: Filters, k: int) -> list[tuple[str, float]]:
        candidates = np.flatnonzero(scores > 0)
        candidates = candidates[self.columns.mask(filters)[candidates]]
        return top_k(candidates, scores[candidates], self.passage_ids, k)

    def search_terms(
        self, terms: QueryTerms | Sequence[str], filters: Filters, k: int
    ) -> list[tuple[str, float]]:
        """Top ``k`` ``(passage_id, bm25)`` of the rows matching the kept terms that pass
        ``filters``, then (while fewer than ``k``) of those holding only clamped terms; best
        first, ties by passage id, as :func:`kbsearch.retrieve.lexical.sql.search_sql`. A plain
        list of terms is searched as kept terms.

        Raises:
            InvalidArgumentError: ``filters.audience`` searches another FTS5 table.
        """
        terms = searched_terms(self.table, terms, filters)
        if k <= 0 or self.passages == 0 or not terms.kept:
            return []
        scores = self.scores(terms.kept)
        hits = self._top(scores, filters, k)
        if len(hits) < k and terms.clamped:
            extra = self.scores(terms.clamped)
            extra[scores > 0] = 0.0  # those hold a kept term: already in hits
            hits += self._top(extra, filters, k - len(hits))
        return hits

    def exact(self, terms: QueryTerms) -> bool:
        """False when a term is not ASCII and not in the vocabulary: FTS5 may tokenize it
        differently (case folding, separators), so the SQL path must answer."""
        return all(t.isascii() or t in self.vocabulary for t in (*terms.kept, *terms.clamped))

    def search(
        self, store: Store, analyzer: Analyzer, query: str, filters: Filters, k: int
    ) -> list[tuple[str, float]]:
        """The lexical route: :func:`kbsearch.retrieve.lexical.sql.lexical_search`'s results,
        from memory. ``store`` must be the one the index was loaded from (at the same
        generation); it is used only for the SQL fallback (:meth:`exact`).

        Raises:
            QueryError: empty / punctuation-only / over-long query.
        """
        terms = self.terms(analyzer, query, filters)
        if not self.exact(terms):
            return search_sql(store, terms, filters, k)
        return self.search_terms(terms, filters, k)
