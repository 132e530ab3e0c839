"""The lexical route read per term: a query costs the postings of its terms, not the collection.

A :class:`TermIndex` belongs to one generation of one audience's FTS5 table. It holds only
FTS5's own collection statistics, which FTS5 keeps up to date on every write, per table, so a
public search's N, average length and document frequencies count public passages only:

- ``N`` and the total token count: FTS5's averages record (``%_data`` id 1), O(1);
- ``n(t)``: the length of the term's held doclist (below), else ``{table}_vocab`` with a
  term constraint (FTS5 walks the term's doclist to count it), cached per term;
- a term's postings: its doclist through ``{table}_instance`` with a term constraint,
  O(its instances), the first time; the doclist is then kept across generations and brought
  forward by what each write changed (:mod:`kbsearch.retrieve.lexical.doclists`), and its
  impacts are kept per generation (up to ``POSTINGS_CACHE`` postings, least recently used
  dropped first).

Nothing is read at open or after a write but these, so a new generation costs nothing until
a query reads its own terms, and then only the rows written since. The rows a query touches
get their filter columns and token counts from a
:class:`~kbsearch.retrieve.lexical.rows.RowTable` shared by every generation (a passage row
never changes once written, and the store never reuses a row id:
:meth:`kbsearch.store.documents.Documents.write`).

Scores are FTS5's ``bm25()`` (:mod:`kbsearch.retrieve.lexical.bm25`), each posting's
contribution computed with the operations, in the order, of
:class:`kbsearch.retrieve.lexical.impact.ImpactIndex` (itself FTS5's bit for bit):

    impact(t, D) = IDF(t) * ((f(t, D) * (k1 + 1)) / (f(t, D) + k1 * (1 - b + b * |D| / avgdl)))

and a query's impacts are added per row in query-term order starting from 0.0, so the scores,
ranking and ties (by passage id) are the same as the whole-table index's. The top k is taken
by MaxScore (:mod:`kbsearch.retrieve.lexical.maxscore`): among the rows of the query's terms
that can still reach the k-th best score, never all of them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from ...errors import StaleSnapshot
from ...filters import Filters
from ...store import Store, fts_table
from ...text.analysis import Analyzer
from ..topk import top_k
from .bm25 import K1, B, fts5_idf
from .doclists import CHANGE_ROWS, Change, Doclists
from .maxscore import Postings, top_candidates
from .query_terms import QueryTerms
from .rows import Rows, RowTable
from .sql import search_sql
from .terms import searched_terms, statistics_terms

T = TypeVar("T")
POSTINGS_CACHE = 1 << 23  # postings with impacts a generation keeps (~128 MiB), LRU
ROW_ID_CACHE = 1 << 18  # passage ids -> row ids a generation keeps (fusion's scoring of given ids)


class TermIndex:
    """One audience's FTS5 table at one generation, read per term (module docstring).

    ``read`` runs a read at ``generation`` (raising :class:`kbsearch.errors.StaleSnapshot`
    when the file has moved on); ``table`` the shared :class:`RowTable`; ``doclists`` the
    shared :class:`~kbsearch.retrieve.lexical.doclists.Doclists`.
    """

    def __init__(
        self,
        store: Store,
        audience: str,
        generation: int,
        read: Callable[[Callable[[], Any]], Any],
        table: RowTable,
        languages: list[str],
        doclists: Doclists,
    ) -> None:
        self.store, self.audience, self.generation = store, audience, generation
        self.table = fts_table(audience)
        self.read = read
        self._rows = table
        self.languages = languages
        self.passages, total = read(lambda: store.fts.statistics(audience))
        self.avgdl = total / self.passages if self.passages else 0.0
        self._frequency: dict[str, int] = {}
        self._doclists = doclists
        self._postings: OrderedDict[str, Postings] = OrderedDict()
        self._cached = 0
        self._lock = threading.Lock()
        self._row_ids: dict[str, tuple[int, str]] = {}

    # -- statistics ---------------------------------------------------------------------

    def frequency(self, term: str) -> int:
        """Rows holding ``term`` (0 when absent): the length of its held doclist
        (:meth:`Doclists.size`), else FTS5's vocabulary, one lookup per term (which walks
        the term's doclist). Once the file has moved on (a write since), the newest count,
        not cached: what the query's terms are prepared with, before the backend searches the
        newer generation."""
        found = self._frequency.get(term)
        if found is None:
            store, audience = self.store, self.audience
            try:
                found = self._doclists.size(self.table, term, self.generation, self._follow)
                if found is None:
                    found = int(self.read(lambda: store.fts.document_frequency(term, audience)))
            except StaleSnapshot:
                return store.fts.document_frequency(term, audience)
            self._frequency[term] = found
        return found

    def terms(self, analyzer: Analyzer, query: str, filters: Filters) -> QueryTerms:
        """The query's terms with this table's statistics.

        Raises:
            QueryError: empty / punctuation-only / over-long query.
        """
        return statistics_terms(self, analyzer, query, filters)

    def exact(self, terms: QueryTerms) -> bool:
        """False when a term is not ASCII and not in the vocabulary: FTS5 may tokenize it
        differently (case folding, separators), so the SQL path must answer."""
        return all(t.isascii() or self.frequency(t) > 0 for t in (*terms.kept, *terms.clamped))

    def row_ids_of(self, passage_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        """``{passage_id: (row id, access)}`` of the stored passages among ``passage_ids`` at
        this generation; only ids not asked before at this generation are read (one statement),
        up to ``ROW_ID_CACHE`` ids, then the cache starts over."""
        missing = [p for p in passage_ids if p not in self._row_ids]
        if missing:
            store = self.store
            found: dict[str, tuple[int, str]] = self.read(
                lambda: store.fts.passage_row_ids(missing)
            )
            if len(self._row_ids) + len(found) > ROW_ID_CACHE:
                self._row_ids = {}
            self._row_ids.update(found)
            return {
                p: found[p] if p in found else self._row_ids[p]
                for p in passage_ids
                if p in found or p in self._row_ids
            }
        return {p: self._row_ids[p] for p in passage_ids if p in self._row_ids}

    # -- postings -----------------------------------------------------------------------

    def _read_rows(self, row_ids: list[int]) -> Rows:
        store = self.store
        return self.read(lambda: Rows.of(store.fts.row_columns(row_ids)))

    def positions(self, row_ids: np.ndarray) -> tuple[np.ndarray, Rows]:
        """Where existing passage rows (int64 ids) are in the shared :class:`RowTable`."""
        return self._rows.positions(row_ids, self._read_rows)

    def _follow(self, old: int, old_next: int) -> Change | None:
        """What the writes since generation ``old`` did to this table (:class:`Change`), or
        ``None`` when the row log does not reach back or they added too many rows."""
        store, audience, generation = self.store, self.audience, self.generation

        def load() -> Change | None:
            deleted = store.vectors.deleted_rows_between(old, generation)
            next_row = max(store.fts.next_row(), old_next)
            if deleted is None or next_row - old_next > CHANGE_ROWS:
                return None
            added = store.fts.postings_since(audience, old_next)
            return Change(old, generation, old_next, next_row, deleted, added)

        found: Change | None = self.read(load)
        return found

    def _doclist(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        store, audience = self.store, self.audience

        def read() -> tuple[np.ndarray, np.ndarray, int]:
            rows, tf = store.fts.term_postings(term, audience)
            return rows, tf, store.fts.next_row()

        return self._doclists.get(
            self.table, term, self.generation, self._follow, lambda: self.read(read)
        )

    def postings(self, term: str) -> Postings:
        """The term's rows and BM25 impacts (empty when absent), kept per generation (up to
        ``POSTINGS_CACHE`` postings, least recently used dropped first), made from the
        doclist kept across generations (:mod:`kbsearch.retrieve.lexical.doclists`)."""
        with self._lock:
            found = self._postings.get(term)
            if found is not None:
                self._postings.move_to_end(term)
                return found
        rows, tf = self._doclist(term)
        at, table = self.positions(rows)
        length = table.length[at]
        # the operations of ImpactIndex.load, in its order (module docstring); n(t) = the rows
        # read, as the vocabulary counts them
        norm = (1 - B) + B * length / self.avgdl if self.avgdl else np.ones(len(rows))
        idf = fts5_idf(self.passages, len(rows)) if len(rows) else 0.0
        found = Postings(rows, idf * ((tf * (K1 + 1.0)) / (tf + K1 * norm)), at)
        with self._lock:
            if term not in self._postings:
                self._postings[term] = found
                self._cached += len(found.rows)
            while self._cached > POSTINGS_CACHE and len(self._postings) > 1:
                _, dropped = self._postings.popitem(last=False)
                self._cached -= len(dropped.rows)
        return found

    def scores_of(self, terms: Sequence[str], row_ids: np.ndarray) -> np.ndarray:
        """BM25 of the given rows (shape ``(len(row_ids),)``; 0 where no term matches)."""
        out = np.zeros(len(row_ids), dtype=np.float64)
        for term in terms:
            p = self.postings(term)
            if len(p.rows) == 0:
                continue
            at = np.minimum(np.searchsorted(p.rows, row_ids), len(p.rows) - 1)
            hit = p.rows[at] == row_ids
            out[hit] += p.impacts[at[hit]]
        return out

    def holds(self, term: str, row_id: int) -> bool:
        """Whether the row holds ``term`` (binary search in its postings)."""
        rows = self.postings(term).rows
        j = int(np.searchsorted(rows, row_id))
        return j < len(rows) and int(rows[j]) == row_id

    # -- search -------------------------------------------------------------------------

    def _best(self, terms: Sequence[str], filters: Filters, k: int) -> list[tuple[str, float]]:
        """Top ``k`` of the rows holding any of ``terms`` that pass ``filters``
        (:func:`kbsearch.retrieve.lexical.maxscore.top_candidates`: the exhaustive top k)."""
        postings = [self.postings(t) for t in terms]
        _, table = self.positions(np.zeros(0, dtype=np.int64))  # holds every row of those
        mask = self._rows.mask(filters, table)

        def passes(at: np.ndarray) -> np.ndarray:
            return mask[at]

        scratch = self._rows.scratch
        at, scores = top_candidates(postings, passes, table.row_ids, k, scratch)
        return top_k(at, scores, table.passage_ids, k)

    def search_terms(
        self, terms: QueryTerms | Sequence[str], filters: Filters, k: int
    ) -> list[tuple[str, float]]:
        """Top ``k`` ``(passage_id, bm25)`` of the rows matching the kept terms that pass
        ``filters``, then (while fewer than ``k``) of those holding only clamped terms; best
        first, ties by passage id, as :func:`kbsearch.retrieve.lexical.sql.search_sql`.

        Raises:
            InvalidArgumentError: ``filters.audience`` searches another FTS5 table.
        """
        terms = searched_terms(self.table, terms, filters)
        if k <= 0 or self.passages == 0 or not terms.kept:
            return []
        hits = self._best(terms.kept, filters, k)
        if len(hits) < k and terms.clamped:
            # fewer than k: every passing row holding a kept term is in hits, so the passing
            # rows holding only clamped terms are the others of the clamped terms' top k
            seen = {pid for pid, _ in hits}
            more = self._best(terms.clamped, filters, k)
            hits += [(pid, score) for pid, score in more if pid not in seen][: k - len(hits)]
        return hits

    def search(
        self, analyzer: Analyzer, query: str, filters: Filters, k: int
    ) -> list[tuple[str, float]]:
        """The lexical route: :func:`kbsearch.retrieve.lexical.sql.lexical_search`'s results.

        Raises:
            QueryError: empty / punctuation-only / over-long query.
        """
        terms = self.terms(analyzer, query, filters)
        if not self.exact(terms):
            return search_sql(self.store, terms, filters, k)
        return self.search_terms(terms, filters, k)
