"""FTS5: the lexical reference search, BM25 statistics, and the postings of one table.

Two FTS5 tables hold the analysed passage bodies (rowid = passage row id): ``passages_fts``
(every passage: staff searches) and ``public_fts`` (public passages only, so a public search's
BM25 statistics count only what the public may see).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import StorageError
from ..filters import Filters, to_sql
from .columns import COLUMNS
from .database import Database, in_chunks
from .schema import FTS_TOKENIZE, NEXT_ROW_META

# audience -> the FTS5 table its lexical searches read (and take their BM25 statistics from)
FTS_TABLES = {"public": "public_fts", "staff": "passages_fts"}
_CHUNK = 1 << 20  # token instances per read of the postings (fts_postings)


def fts_table(audience: str) -> str:
    """The FTS5 table an audience searches: ``public_fts`` unless the audience is staff."""
    return FTS_TABLES["staff" if audience == "staff" else "public"]


@dataclass(frozen=True)
class FtsPostings:
    """An FTS5 table's postings: ``terms`` (index order), per term its
    ``document_frequency`` and ``instances`` (shape ``(terms,)``), and ``docs`` (shape
    ``(instances.sum(),)``): the rowid of every token instance, term by term, rowids ascending
    within a term."""

    terms: list[str]
    document_frequency: np.ndarray
    instances: np.ndarray
    docs: np.ndarray


class Fts:
    """Reads of the FTS5 tables (``store.fts``; writes are part of
    :meth:`kbsearch.store.documents.Documents.write`)."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self._df: tuple[int, dict[tuple[str, str], int]] = (-1, {})  # document frequencies

    def _lexical_sql(self, filters: Filters) -> tuple[str, list[object]]:
        table = fts_table(filters.audience)
        where, params = to_sql(filters)
        sql = (
            f"SELECT p.passage_id, -bm25({table}) AS score"
            f" FROM {table} CROSS JOIN passages p ON p.id = {table}.rowid"
            f" WHERE {table} MATCH ? AND {where}"
            " ORDER BY score DESC, p.passage_id LIMIT ?"
        )
        return sql, params

    def search(self, match: str, filters: Filters, limit: int) -> list[tuple[str, float]]:
        """Top ``limit`` ``(passage_id, bm25)`` for an FTS5 match expression, filters applied
        inside the query (FTS5 drives the join, so the full-text index is always used).
        A public audience searches the public passages' own FTS5 table, so its BM25
        statistics ignore staff-only text. Higher is better: FTS5's ``bm25()`` is negated.
        Ties broken by passage id."""
        sql, params = self._lexical_sql(filters)
        rows = self.database.connection.execute(sql, [match, *params, limit])
        return [(r[0], float(r[1])) for r in rows]

    def plan(self, match: str, filters: Filters, limit: int) -> list[str]:
        """SQLite's query plan for :meth:`search` (to prove FTS5 drives it)."""
        sql, params = self._lexical_sql(filters)
        rows = self.database.connection.execute(
            f"EXPLAIN QUERY PLAN {sql}", [match, *params, limit]
        )
        return [r["detail"] for r in rows]

    def statistics(self, audience: str) -> tuple[int, int]:
        """``(rows, total tokens)`` of the audience's FTS5 table, from FTS5's averages record
        (``%_data`` id 1)."""
        table = fts_table(audience)
        row = self.database.connection.execute(
            f"SELECT block FROM {table}_data WHERE id = 1"
        ).fetchone()
        if row is None or not row[0]:
            return 0, 0
        values = varints(bytes(row[0]))
        return values[0], values[1] if len(values) > 1 else 0

    def document_length(self, row_id: int, audience: str) -> int:
        """Tokens FTS5 counted in one row (``%_docsize``)."""
        table = fts_table(audience)
        row = self.database.connection.execute(
            f"SELECT sz FROM {table}_docsize WHERE id = ?", (row_id,)
        ).fetchone()
        return varints(bytes(row[0]))[0] if row else 0

    def document_frequency(self, term: str, audience: str) -> int:
        """Rows of the audience's FTS5 table containing ``term``, cached until the next write."""
        table = fts_table(audience)
        generation = self.database.generation()
        # one (generation, cache) pair, read once: a thread reading another generation (a
        # served snapshot's pinned reader, the builder) never writes into this one's cache
        cached_generation, cache = self._df
        if cached_generation != generation:
            cache = {}
            self._df = (generation, cache)
        key = (table, term)
        if key not in cache:
            row = self.database.connection.execute(
                f"SELECT doc FROM {table}_vocab WHERE term = ?", (term,)
            ).fetchone()
            if len(cache) > 100_000:
                cache.clear()
            cache[key] = int(row[0]) if row else 0
        return cache[key]

    def term_frequency(self, term: str, row_id: int, audience: str) -> int:
        table = fts_table(audience)
        row = self.database.connection.execute(
            f"SELECT count(*) FROM {table}_instance WHERE term = ? AND doc = ?",
            (term, row_id),
        ).fetchone()
        return int(row[0])

    def term_postings(self, term: str, audience: str) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, tf)`` of one term in the audience's FTS5 table: the row ids holding it
        (int64, ascending) and its frequency in each (float64). Reads that term's doclist only
        (``{table}_instance`` with a term constraint, joined to text in C): O(its instances).

        Raises:
            StorageError: the doclist is not sorted by row.
        """
        table = fts_table(audience)
        cursor = self.database.connection.cursor()
        cursor.row_factory = None
        (text,) = cursor.execute(
            f"SELECT group_concat(doc) FROM {table}_instance WHERE term = ?", (term,)
        ).fetchone()
        return runs(np.fromstring(text or "", dtype=np.int64, sep=","))

    def next_row(self) -> int:
        """One past the largest passage row id: every row a later write adds has an id at
        least this (ids are never reused, :meth:`kbsearch.store.documents.Documents.write`).
        O(log N)."""
        recorded = self.database.get_meta(NEXT_ROW_META)  # kept by every write
        if recorded is not None:
            return int(recorded)
        (top,) = self.database.connection.execute(
            "SELECT coalesce(max(id), 0) FROM passages"
        ).fetchone()
        return int(top) + 1

    def postings_since(
        self, audience: str, first_row: int
    ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """``{term: (rows, tf)}`` of the audience's FTS5 rows with ids from ``first_row`` on
        (rows int64 ascending, tf float64), as :meth:`term_postings` reads them: their stored
        bodies tokenized again by FTS5 itself (the same tokenizer, in a private in-memory
        database), so the terms and counts are the table's. O(tokens of those rows).
        """
        table = fts_table(audience)
        cursor = self.database.connection.cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            f"SELECT rowid, body FROM {table} WHERE rowid >= ? ORDER BY rowid", (first_row,)
        ).fetchall()
        if not rows:
            return {}
        scratch = sqlite3.connect(":memory:")
        try:
            scratch.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{FTS_TOKENIZE}')")
            scratch.execute("CREATE VIRTUAL TABLE t_instance USING fts5vocab(t, 'instance')")
            scratch.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", rows)
            instances = scratch.execute("SELECT term, doc FROM t_instance").fetchall()
        finally:
            scratch.close()
        counts: dict[str, dict[int, int]] = {}
        for term, doc in instances:
            per_row = counts.setdefault(str(term), {})
            per_row[int(doc)] = per_row.get(int(doc), 0) + 1
        out = {}
        for term, per_row in counts.items():
            ids = sorted(per_row)
            tf = np.array([per_row[r] for r in ids], dtype=np.float64)
            out[term] = (np.array(ids, dtype=np.int64), tf)
        return out

    def row_columns(self, row_ids: Sequence[int]) -> list[tuple[object, ...]]:
        """The filter columns (``COLUMNS``) of the given passage rows, then each row's token
        count in FTS5 (``passages_fts_docsize``: every passage's body, so the same count in
        the public table); rows that are not passages are left out. O(rows asked)."""
        cursor = self.database.connection.cursor()
        cursor.row_factory = None
        sql = (
            f"SELECT {COLUMNS}, s.sz FROM json_each(?) j CROSS JOIN passages p ON p.id = j.value"
            " JOIN passages_fts_docsize s ON s.id = p.id"
        )
        ids = json.dumps([int(r) for r in row_ids])
        return [(*r[:-1], varints(bytes(r[-1]))[0]) for r in cursor.execute(sql, (ids,))]

    def passage_row_ids(self, passage_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        """``{passage_id: (row id, access)}`` of the stored passages among ``passage_ids``."""
        out: dict[str, tuple[int, str]] = {}
        for chunk, marks in in_chunks(passage_ids):
            sql = f"SELECT passage_id, id, access FROM passages WHERE passage_id IN ({marks})"
            out.update(
                {r[0]: (int(r[1]), str(r[2])) for r in self.database.connection.execute(sql, chunk)}
            )
        return out

    def postings(self, audience: str) -> FtsPostings:
        """Every posting of the audience's FTS5 table, read through its fts5vocab tables.

        ``{table}_vocab`` (row) gives the terms in index order with their row and instance
        counts; ``{table}_instance`` lists one row per token instance in that same order
        (term, then rowid, then offset), so the instance docs are split by term with the
        counts. Reads the whole index: O(tokens) time and memory. Call it inside a read
        transaction (:meth:`Database.read_transaction`): two reads outside one may see two states.

        Raises:
            StorageError: the two fts5vocab tables disagree.
        """
        table = fts_table(audience)
        cursor = self.database.connection.cursor()
        cursor.row_factory = None  # plain tuples: several times faster than sqlite3.Row
        vocab = cursor.execute(f"SELECT term, doc, cnt FROM {table}_vocab").fetchall()
        instances = np.array([r[2] for r in vocab], dtype=np.int64)
        ends = np.cumsum(instances)
        docs = np.empty(int(ends[-1]) if len(ends) else 0, dtype=np.int64)
        # Read in term ranges of about _CHUNK instances, each as one comma-joined string that
        # SQLite builds in C: a row-by-row read hands the GIL over once per token instance
        # (a server's searches wait on each hand-over while its snapshot builder reads), and
        # a bounded range never holds the whole index as text.
        first, filled = 0, 0
        while first < len(vocab):
            last = max(first, int(np.searchsorted(ends, filled + _CHUNK, side="right")) - 1)
            (text,) = cursor.execute(
                f"SELECT group_concat(doc) FROM {table}_instance WHERE term >= ? AND term <= ?",
                (vocab[first][0], vocab[last][0]),
            ).fetchone()
            part = np.fromstring(text or "", dtype=np.int64, sep=",")
            if len(part) != int(ends[last]) - filled:
                raise StorageError(
                    f"{table}_vocab and {table}_instance disagree; rebuild the index"
                )
            docs[filled : int(ends[last])] = part
            first, filled = last + 1, int(ends[last])
        return FtsPostings(
            terms=[str(r[0]) for r in vocab],
            document_frequency=np.array([r[1] for r in vocab], dtype=np.int64),
            instances=instances,
            docs=docs,
        )


def runs(docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, counts)`` of a sorted array of row ids (one entry per token instance): each
    distinct row once, ascending, with how many instances it has (float64, BM25's tf).

    Raises:
        StorageError: ``docs`` is not sorted (an FTS5 doclist always is).
    """
    if len(docs) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    step = np.diff(docs)
    if step.min(initial=0) < 0:
        raise StorageError("an FTS5 doclist is not sorted by row; rebuild the index")
    starts = np.flatnonzero(np.concatenate([[True], step != 0]))
    counts = np.diff(np.append(starts, len(docs))).astype(np.float64)
    return docs[starts], counts


def varints(blob: bytes) -> list[int]:
    """Decode SQLite's big-endian varints (used by FTS5's ``%_data``/``%_docsize`` records)."""
    values: list[int] = []
    i = 0
    while i < len(blob):
        value = 0
        for n in range(9):
            byte = blob[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return values
