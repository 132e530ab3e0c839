"""The one object that owns the SQLite connection and writes SQL.

One file in WAL mode holds documents, passages, the FTS5 index (``passages_fts``, rowid =
passage row id), the passage vectors, an embedding cache and a ``meta`` table with the schema
version and the settings the index was built with. Every document version is written in one
transaction (passages, FTS5 rows and vectors together), so a crash leaves it fully old or fully
new and the lexical and dense indexes never disagree.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from .errors import KnowledgeBaseNotFoundError, SchemaError, StorageError
from .filters import Filters, to_sql
from .records import Document, Passage

SCHEMA_VERSION = 2  # 2: public_fts, the public passages' own FTS5 index
FTS_TOKENIZE = "unicode61 remove_diacritics 2"
# audience -> the FTS5 table its lexical searches read (and take their BM25 statistics from)
FTS_TABLES = {"public": "public_fts", "staff": "passages_fts"}


def fts_table(audience: str) -> str:
    """The FTS5 table an audience searches: ``public_fts`` unless the audience is staff."""
    return FTS_TABLES["staff" if audience == "staff" else "public"]


_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    doc_id TEXT NOT NULL, version TEXT NOT NULL, title TEXT NOT NULL,
    language TEXT NOT NULL, access TEXT NOT NULL,
    effective_from TEXT, effective_to TEXT,
    owner TEXT NOT NULL DEFAULT '', doc_type TEXT NOT NULL DEFAULT '',
    format TEXT NOT NULL DEFAULT '', source TEXT NOT NULL DEFAULT '',
    content_hash TEXT NOT NULL,
    UNIQUE (doc_id, version)
);
CREATE TABLE IF NOT EXISTS passages (
    id INTEGER PRIMARY KEY,
    passage_id TEXT NOT NULL UNIQUE,
    document INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    doc_id TEXT NOT NULL, version TEXT NOT NULL, section TEXT NOT NULL,
    kind TEXT NOT NULL, text TEXT NOT NULL, ordinal INTEGER NOT NULL,
    page INTEGER, char_start INTEGER, char_end INTEGER, token_count INTEGER NOT NULL,
    -- filter columns copied from the document so a filtered search needs no join
    access TEXT NOT NULL, language TEXT NOT NULL,
    effective_from TEXT, effective_to TEXT
);
CREATE INDEX IF NOT EXISTS passages_document ON passages(document);
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(body, tokenize='{FTS_TOKENIZE}');
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts_vocab USING fts5vocab(passages_fts, 'row');
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts_instance
    USING fts5vocab(passages_fts, 'instance');
-- the public passages again, so a public search's BM25 statistics (N, avgdl, df) count only
-- what the public may see: staff-only text cannot move a public score or explanation
CREATE VIRTUAL TABLE IF NOT EXISTS public_fts USING fts5(body, tokenize='{FTS_TOKENIZE}');
CREATE VIRTUAL TABLE IF NOT EXISTS public_fts_vocab USING fts5vocab(public_fts, 'row');
CREATE VIRTUAL TABLE IF NOT EXISTS public_fts_instance USING fts5vocab(public_fts, 'instance');
CREATE TABLE IF NOT EXISTS vectors (
    id INTEGER PRIMARY KEY REFERENCES passages(id) ON DELETE CASCADE,
    vector BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS embedding_cache (
    embedder TEXT NOT NULL, role TEXT NOT NULL, text_hash TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (embedder, role, text_hash)
) WITHOUT ROWID;
"""


@dataclass(frozen=True)
class StoredDocument:
    """A stored document version with its row id and passage count."""

    row_id: int
    document: Document
    passages: int


@dataclass(frozen=True)
class PassageRow:
    """A passage with the document fields needed to filter and display it."""

    row_id: int
    passage: Passage
    access: str
    language: str


@dataclass(frozen=True)
class VectorTable:
    """Every stored vector with the columns dense filtering needs, aligned by row.

    ``vectors`` has shape ``(n, dim)`` (float32); ``effective_from``/``effective_to`` are
    ISO date strings, ``""`` for an open bound.
    """

    row_ids: np.ndarray
    passage_ids: np.ndarray
    vectors: np.ndarray
    access: np.ndarray
    language: np.ndarray
    doc_id: np.ndarray
    effective_from: np.ndarray
    effective_to: np.ndarray


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


@dataclass(frozen=True)
class PassageColumns:
    """Every passage's filter columns, aligned by row id (ascending), as in
    :class:`VectorTable` without the vectors."""

    row_ids: np.ndarray
    passage_ids: np.ndarray
    access: np.ndarray
    language: np.ndarray
    doc_id: np.ndarray
    effective_from: np.ndarray
    effective_to: np.ndarray


def filter_sql(filters: Filters, alias: str = "p") -> tuple[str, list[object]]:
    """The filters as a SQL condition on the passages table (:func:`kbsearch.filters.to_sql`)."""
    return to_sql(filters, alias)


def _iso(day: date | None) -> str | None:
    return day.isoformat() if day else None


def _day(text: str | None) -> date | None:
    return date.fromisoformat(text) if text else None


class Store:
    """Owns the SQLite connection of one knowledge base file.

    Raises:
        KnowledgeBaseNotFoundError: the file is missing and ``create`` is false.
        SchemaError: the file is not a kbsearch index of this schema version.
    """

    def __init__(self, path: str | Path, *, create: bool = False) -> None:
        self.path = Path(path)
        if not create and not self.path.exists():
            raise KnowledgeBaseNotFoundError(
                f"no knowledge base at {self.path}; create it with `kbsearch index PATH "
                f"--db {self.path}`"
            )
        if self.path.is_dir():
            raise StorageError(f"{self.path} is a folder, not a database file")
        self._df_cache: dict[tuple[str, str], int] = {}
        self._df_generation = -1
        try:
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self.connection = sqlite3.connect(self.path, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(f"cannot open a database at {self.path}: {exc}") from exc
        self.connection.row_factory = sqlite3.Row
        try:
            self._check_schema(create)  # before any PRAGMA writes to someone else's file
            self.connection.execute("PRAGMA journal_mode=WAL")
            self.connection.execute("PRAGMA synchronous=NORMAL")
            self.connection.execute("PRAGMA foreign_keys=ON")
        except sqlite3.DatabaseError as exc:
            self.connection.close()
            raise SchemaError(f"{self.path} is not a kbsearch index: {exc}") from exc
        except SchemaError:
            self.connection.close()
            raise

    def _check_schema(self, create: bool) -> None:
        tables = {
            row[0]
            for row in self.connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if "meta" in tables:
            found = self.get_meta("schema_version")
            if found != str(SCHEMA_VERSION):
                raise SchemaError(
                    f"{self.path} has schema version {found}, this kbsearch reads "
                    f"{SCHEMA_VERSION}; move it aside and rebuild it with `kbsearch index`"
                )
            return
        if tables:
            raise SchemaError(f"{self.path} is not a kbsearch index (it holds other tables)")
        if not create:
            raise SchemaError(
                f"{self.path} is not a kbsearch index (it is empty); create it with "
                f"`kbsearch index PATH --db {self.path}`"
            )
        with self.transaction():
            for statement in _SCHEMA.split(";\n"):
                if statement.strip():
                    self.connection.execute(statement)
            self.set_meta("schema_version", str(SCHEMA_VERSION))
            self.set_meta("generation", "0")

    # -- plumbing ---------------------------------------------------------------------------

    def close(self) -> None:
        self.connection.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolled back on any exception."""
        self.connection.execute("BEGIN IMMEDIATE")
        try:
            yield self.connection
        except BaseException:
            self.connection.execute("ROLLBACK")
            raise
        self.connection.execute("COMMIT")

    def get_meta(self, key: str) -> str | None:
        row = self.connection.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.connection.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def settings(self) -> dict[str, object]:
        raw = self.get_meta("settings")
        return json.loads(raw) if raw else {}

    def set_settings(self, settings: Mapping[str, object]) -> None:
        self.set_meta("settings", json.dumps(dict(settings), sort_keys=True))

    def generation(self) -> int:
        """A counter bumped by every write; readers cache by it."""
        return int(self.get_meta("generation") or 0)

    def _bump_generation(self) -> None:
        self.connection.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
        )

    def backup(self, destination: str | Path) -> None:
        """Write a consistent copy with SQLite's online backup API (readers continue).

        Raises:
            StorageError: the destination cannot be written (missing folder, not a database).
        """
        try:
            target = sqlite3.connect(destination)
            try:
                self.connection.backup(target)
            finally:
                target.close()
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(f"cannot write a backup to {destination}: {exc}") from exc

    # -- documents ----------------------------------------------------------------------------

    def document_hashes(self) -> dict[tuple[str, str], str]:
        """``{(doc_id, version): content_hash}`` of every stored document."""
        rows = self.connection.execute("SELECT doc_id, version, content_hash FROM documents")
        return {(r["doc_id"], r["version"]): r["content_hash"] for r in rows}

    def document_sources(self) -> dict[tuple[str, str], str]:
        """``{(doc_id, version): source path}`` of every stored document."""
        rows = self.connection.execute("SELECT doc_id, version, source FROM documents")
        return {(r["doc_id"], r["version"]): r["source"] for r in rows}

    def documents(self) -> list[StoredDocument]:
        rows = self.connection.execute(
            "SELECT d.*, (SELECT count(*) FROM passages p WHERE p.document = d.id) AS n "
            "FROM documents d ORDER BY d.doc_id, d.version"
        )
        return [StoredDocument(r["id"], _document(r), r["n"]) for r in rows]

    def write_document(
        self,
        document: Document,
        passages: Sequence[Passage],
        bodies: Sequence[str],
        vectors: np.ndarray | None,
    ) -> None:
        """Replace a document version (all its passages, FTS5 rows and vectors) in one
        transaction. ``bodies`` are the analysed FTS5 texts, aligned with ``passages``;
        ``vectors`` has shape ``(len(passages), dim)`` or is ``None`` for a lexical-only index.
        """
        with self.transaction() as con:
            self._delete_document(document.doc_id, document.version)
            cur = con.execute(
                "INSERT INTO documents(doc_id, version, title, language, access, effective_from,"
                " effective_to, owner, doc_type, format, source, content_hash)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    document.doc_id,
                    document.version,
                    document.title,
                    document.language,
                    document.access,
                    _iso(document.effective_from),
                    _iso(document.effective_to),
                    document.owner,
                    document.doc_type,
                    document.format,
                    document.source,
                    document.content_hash,
                ),
            )
            doc_row = cur.lastrowid
            for i, (passage, body) in enumerate(zip(passages, bodies, strict=True)):
                cur = con.execute(
                    "INSERT INTO passages(passage_id, document, doc_id, version, section, kind,"
                    " text, ordinal, page, char_start, char_end, token_count, access, language,"
                    " effective_from, effective_to) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        passage.passage_id,
                        doc_row,
                        passage.doc_id,
                        passage.version,
                        passage.section,
                        passage.kind,
                        passage.text,
                        passage.ordinal,
                        passage.page,
                        passage.start,
                        passage.end,
                        passage.token_count,
                        document.access,
                        document.language,
                        _iso(document.effective_from),
                        _iso(document.effective_to),
                    ),
                )
                row_id = cur.lastrowid
                con.execute("INSERT INTO passages_fts(rowid, body) VALUES (?, ?)", (row_id, body))
                if document.access == "public":
                    con.execute("INSERT INTO public_fts(rowid, body) VALUES (?, ?)", (row_id, body))
                if vectors is not None:
                    con.execute(
                        "INSERT INTO vectors(id, vector) VALUES (?, ?)",
                        (row_id, np.ascontiguousarray(vectors[i], dtype=np.float32).tobytes()),
                    )
            self._bump_generation()

    def _delete_document(self, doc_id: str, version: str) -> None:
        con = self.connection
        for table in FTS_TABLES.values():
            con.execute(
                f"DELETE FROM {table} WHERE rowid IN (SELECT p.id FROM passages p"
                " JOIN documents d ON p.document = d.id WHERE d.doc_id = ? AND d.version = ?)",
                (doc_id, version),
            )
        # passages and vectors follow by ON DELETE CASCADE
        con.execute("DELETE FROM documents WHERE doc_id = ? AND version = ?", (doc_id, version))

    def delete_document(self, doc_id: str, version: str) -> None:
        """Remove a document version, its passages, FTS5 rows and vectors, in one transaction."""
        with self.transaction():
            self._delete_document(doc_id, version)
            self._bump_generation()

    def clear(self) -> None:
        """Remove every document (used before re-embedding with another embedder)."""
        with self.transaction() as con:
            for table in FTS_TABLES.values():
                con.execute(f"DELETE FROM {table}")
            con.execute("DELETE FROM documents")
            self._bump_generation()

    # -- passages -----------------------------------------------------------------------------

    def count_passages(self, filters: Filters | None = None) -> int:
        if filters is None:
            return int(self.connection.execute("SELECT count(*) FROM passages").fetchone()[0])
        where, params = filter_sql(filters)
        sql = f"SELECT count(*) FROM passages p WHERE {where}"
        return int(self.connection.execute(sql, params).fetchone()[0])

    def passage_rows(
        self, passage_ids: Iterable[str], filters: Filters | None = None
    ) -> dict[str, PassageRow]:
        """The passages among ``passage_ids`` that pass ``filters`` (all when ``None``)."""
        ids = list(dict.fromkeys(passage_ids))
        if not ids:
            return {}
        out: dict[str, PassageRow] = {}
        where, params = ("1", []) if filters is None else filter_sql(filters)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT p.* FROM passages p WHERE p.passage_id IN ({marks}) AND {where}"
            for r in self.connection.execute(sql, [*chunk, *params]):
                out[r["passage_id"]] = PassageRow(r["id"], _passage(r), r["access"], r["language"])
        return out

    def languages(self, audience: str = "staff") -> list[str]:
        """The languages of the documents ``audience`` may see, sorted."""
        where = "" if audience == "staff" else " WHERE access = 'public'"
        rows = self.connection.execute(f"SELECT DISTINCT language FROM documents{where} ORDER BY 1")
        return [r[0] for r in rows]

    def passages_of(self, document_row: int) -> list[Passage]:
        rows = self.connection.execute(
            "SELECT * FROM passages WHERE document = ? ORDER BY ordinal", (document_row,)
        )
        return [_passage(r) for r in rows]

    # -- lexical ------------------------------------------------------------------------------

    def _lexical_sql(self, filters: Filters) -> tuple[str, list[object]]:
        table = fts_table(filters.audience)
        where, params = filter_sql(filters)
        sql = (
            f"SELECT p.passage_id, -bm25({table}) AS score"
            f" FROM {table} CROSS JOIN passages p ON p.id = {table}.rowid"
            f" WHERE {table} MATCH ? AND {where}"
            " ORDER BY score DESC, p.passage_id LIMIT ?"
        )
        return sql, params

    def lexical_search(self, match: str, filters: Filters, limit: int) -> list[tuple[str, float]]:
        """Top ``limit`` ``(passage_id, bm25)`` for an FTS5 match expression, filters applied
        inside the query (FTS5 drives the join, so the full-text index is always used).
        A public audience searches the public passages' own FTS5 table, so its BM25
        statistics ignore staff-only text. Higher is better: FTS5's ``bm25()`` is negated.
        Ties broken by passage id."""
        sql, params = self._lexical_sql(filters)
        rows = self.connection.execute(sql, [match, *params, limit])
        return [(r[0], float(r[1])) for r in rows]

    def lexical_plan(self, match: str, filters: Filters, limit: int) -> list[str]:
        """SQLite's query plan for :meth:`lexical_search` (to prove FTS5 drives it)."""
        sql, params = self._lexical_sql(filters)
        rows = self.connection.execute(f"EXPLAIN QUERY PLAN {sql}", [match, *params, limit])
        return [r["detail"] for r in rows]

    def fts_statistics(self, audience: str) -> tuple[int, int]:
        """``(rows, total tokens)`` of the audience's FTS5 table, from FTS5's averages record
        (``%_data`` id 1)."""
        table = fts_table(audience)
        row = self.connection.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
        if row is None or not row[0]:
            return 0, 0
        values = _varints(bytes(row[0]))
        return values[0], values[1] if len(values) > 1 else 0

    def fts_document_length(self, row_id: int, audience: str) -> int:
        """Tokens FTS5 counted in one row (``%_docsize``)."""
        table = fts_table(audience)
        row = self.connection.execute(
            f"SELECT sz FROM {table}_docsize WHERE id = ?", (row_id,)
        ).fetchone()
        return _varints(bytes(row[0]))[0] if row else 0

    def fts_document_frequency(self, term: str, audience: str) -> int:
        """Rows of the audience's FTS5 table containing ``term``, cached until the next write."""
        table = fts_table(audience)
        generation = self.generation()
        if self._df_generation != generation:
            self._df_cache.clear()
            self._df_generation = generation
        key = (table, term)
        if key not in self._df_cache:
            row = self.connection.execute(
                f"SELECT doc FROM {table}_vocab WHERE term = ?", (term,)
            ).fetchone()
            if len(self._df_cache) > 100_000:
                self._df_cache.clear()
            self._df_cache[key] = int(row[0]) if row else 0
        return self._df_cache[key]

    def fts_term_frequency(self, term: str, row_id: int, audience: str) -> int:
        table = fts_table(audience)
        row = self.connection.execute(
            f"SELECT count(*) FROM {table}_instance WHERE term = ? AND doc = ?",
            (term, row_id),
        ).fetchone()
        return int(row[0])

    def fts_postings(self, audience: str) -> FtsPostings:
        """Every posting of the audience's FTS5 table, read through its fts5vocab tables.

        ``{table}_vocab`` (row) gives the terms in index order with their row and instance
        counts; ``{table}_instance`` lists one row per token instance in that same order
        (term, then rowid, then offset), so the instance docs are split by term with the
        counts. Reads the whole index: O(tokens) time and memory.

        Raises:
            StorageError: the two fts5vocab tables disagree (an FTS5 change of order).
        """
        table = fts_table(audience)
        cursor = self.connection.cursor()
        cursor.row_factory = None  # plain tuples: several times faster than sqlite3.Row
        vocab = cursor.execute(f"SELECT term, doc, cnt FROM {table}_vocab").fetchall()
        instances = np.array([r[2] for r in vocab], dtype=np.int64)
        total = int(instances.sum())
        try:  # streamed, so no list of millions of tuples is ever held
            docs = np.fromiter(
                (r[0] for r in cursor.execute(f"SELECT doc FROM {table}_instance")),
                dtype=np.int64,
                count=total,
            )
            extra = cursor.fetchone()
        except ValueError as exc:  # fewer instances than the counts say
            raise StorageError(f"{table}_vocab and {table}_instance disagree: {exc}") from exc
        if extra is not None:
            raise StorageError(f"{table}_vocab and {table}_instance disagree; rebuild the index")
        return FtsPostings(
            terms=[str(r[0]) for r in vocab],
            document_frequency=np.array([r[1] for r in vocab], dtype=np.int64),
            instances=instances,
            docs=docs,
        )

    def filter_columns(self) -> PassageColumns:
        """Every passage's row id, passage id and filter columns, ordered by row id."""
        cursor = self.connection.cursor()
        cursor.row_factory = None
        rows = cursor.execute(f"SELECT {_COLUMNS} FROM passages p ORDER BY p.id").fetchall()
        return PassageColumns(**_column_arrays(rows))

    # -- vectors ------------------------------------------------------------------------------

    def vector_table(self, dim: int) -> VectorTable:
        """Every stored vector with its passage's filter columns, ordered by row id."""
        cursor = self.connection.cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            f"SELECT {_COLUMNS}, v.vector FROM vectors v JOIN passages p ON p.id = v.id"
            " ORDER BY p.id"
        ).fetchall()
        vectors = np.frombuffer(b"".join(r[7] for r in rows), dtype=np.float32)
        return VectorTable(vectors=vectors.reshape(len(rows), dim), **_column_arrays(rows))

    def count_vectors(self) -> int:
        return int(self.connection.execute("SELECT count(*) FROM vectors").fetchone()[0])

    def cached_vectors(self, embedder: str, role: str, hashes: Sequence[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        unique = list(dict.fromkeys(hashes))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self.connection.execute(
                "SELECT text_hash, vector FROM embedding_cache WHERE embedder = ? AND role = ?"
                f" AND text_hash IN ({marks})",
                [embedder, role, *chunk],
            )
            out.update({r[0]: bytes(r[1]) for r in rows})
        return out

    def cache_vectors(self, embedder: str, role: str, items: Mapping[str, np.ndarray]) -> None:
        """Store vectors by text hash; committed at once so finished work survives a crash."""
        with self.transaction() as con:
            con.executemany(
                "INSERT OR REPLACE INTO embedding_cache(embedder, role, text_hash, vector)"
                " VALUES (?, ?, ?, ?)",
                [
                    (embedder, role, h, np.ascontiguousarray(v, dtype=np.float32).tobytes())
                    for h, v in items.items()
                ],
            )


# the filter columns of a passage row, in the order _column_arrays reads them
_COLUMNS = (
    "p.id, p.passage_id, p.access, p.language, p.doc_id,"
    " coalesce(p.effective_from, ''), coalesce(p.effective_to, '')"
)


def _column_arrays(rows: Sequence[Sequence[Any]]) -> dict[str, np.ndarray]:
    """The arrays of :class:`PassageColumns` from rows starting with ``_COLUMNS``."""
    return {
        "row_ids": np.array([r[0] for r in rows], dtype=np.int64),
        "passage_ids": np.array([r[1] for r in rows], dtype=object),
        "access": np.array([r[2] for r in rows], dtype=object),
        "language": np.array([r[3] for r in rows], dtype=object),
        "doc_id": np.array([r[4] for r in rows], dtype=object),
        "effective_from": np.array([r[5] for r in rows], dtype="U10"),
        "effective_to": np.array([r[6] for r in rows], dtype="U10"),
    }


def _varints(blob: bytes) -> list[int]:
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


def _document(r: sqlite3.Row) -> Document:
    return Document(
        doc_id=r["doc_id"],
        version=r["version"],
        title=r["title"],
        language=r["language"],
        access=r["access"],
        effective_from=_day(r["effective_from"]),
        effective_to=_day(r["effective_to"]),
        owner=r["owner"],
        doc_type=r["doc_type"],
        format=r["format"],
        source=r["source"],
        content_hash=r["content_hash"],
    )


def _passage(r: sqlite3.Row) -> Passage:
    return Passage(
        passage_id=r["passage_id"],
        doc_id=r["doc_id"],
        version=r["version"],
        section=r["section"],
        kind=r["kind"],
        text=r["text"],
        ordinal=r["ordinal"],
        page=r["page"],
        start=r["char_start"],
        end=r["char_end"],
        token_count=r["token_count"],
    )
