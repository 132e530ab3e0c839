"""Documents and passages: writing a document version atomically, reading passages back.

Every document version is written in one transaction (passages, FTS5 rows and vectors
together), so a crash leaves it fully old or fully new and the lexical and dense indexes never
disagree. The first document of an index records the index settings in that same transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date

import numpy as np

from ..errors import SettingsConflictError
from ..filters import Filters, to_sql
from ..records import Document, Passage, PassageRow
from . import row_log
from .columns import COLUMNS, PassageColumns, column_arrays
from .counts import COUNTS_TABLE, CountedDocument, SqlCounts
from .database import IN_CHUNK, StoreBase, in_chunks
from .fts import FTS_TABLES
from .settings import IndexSettings

NEXT_ROW_META = "next_row"  # meta key: the lowest passage row id never used in this file


@dataclass(frozen=True)
class StoredDocument:
    """A stored document version with its row id and passage count."""

    row_id: int
    document: Document
    passages: int


class DocumentStore(StoreBase):
    """Documents and passages (see the module docstring)."""

    def document_hashes(self) -> dict[tuple[str, str], str]:
        """``{(doc_id, version): content_hash}`` of every stored document."""
        rows = self.connection.execute("SELECT doc_id, version, content_hash FROM documents")
        return {(r["doc_id"], r["version"]): r["content_hash"] for r in rows}

    def document_sources(self) -> dict[tuple[str, str], str]:
        """``{(doc_id, version): source path}`` of every stored document."""
        rows = self.connection.execute("SELECT doc_id, version, source FROM documents")
        return {(r["doc_id"], r["version"]): r["source"] for r in rows}

    def document_state(self, doc_id: str, version: str) -> tuple[str, str] | None:
        """``(content_hash, source)`` of one stored version; ``None`` when it is not stored."""
        row = self.connection.execute(
            "SELECT content_hash, source FROM documents WHERE doc_id = ? AND version = ?",
            (doc_id, version),
        ).fetchone()
        return (row["content_hash"], row["source"]) if row else None

    def documents(self) -> list[StoredDocument]:
        rows = self.connection.execute(
            "SELECT d.*, (SELECT count(*) FROM passages p WHERE p.document = d.id) AS n "
            "FROM documents d ORDER BY d.doc_id, d.version"
        )
        return [StoredDocument(r["id"], _document(r), r["n"]) for r in rows]

    def documents_about(
        self, doc_ids: Iterable[str], sources: Iterable[str]
    ) -> dict[tuple[str, str], StoredDocument]:
        """``{(doc_id, version): stored}`` of every stored version of the given document ids
        and of every document read from the given sources (by index: O(the rows found), not
        O(documents); a file made before the source index scans the documents' sources in
        SQLite)."""
        out: dict[tuple[str, str], StoredDocument] = {}
        count = "(SELECT count(*) FROM passages p WHERE p.document = d.id) AS n"
        for column, values in (("doc_id", doc_ids), ("source", sources)):
            for chunk, marks in in_chunks(values):
                sql = f"SELECT d.*, {count} FROM documents d WHERE d.{column} IN ({marks})"
                for r in self.connection.execute(sql, chunk):
                    out[(r["doc_id"], r["version"])] = StoredDocument(r["id"], _document(r), r["n"])
        return out

    def documents_of(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Document]:
        """``{(doc_id, version): document}`` of the stored documents among ``keys`` (by the
        unique key: no scan of the documents)."""
        out: dict[tuple[str, str], Document] = {}
        for chunk, _ in in_chunks(keys, IN_CHUNK // 2):
            where = " OR ".join("(doc_id = ? AND version = ?)" for _ in chunk)
            params = [x for key in chunk for x in key]
            for r in self.connection.execute(f"SELECT * FROM documents WHERE {where}", params):
                out[(r["doc_id"], r["version"])] = _document(r)
        return out

    def public_folders(self) -> list[str]:
        """The folders of the public documents read from files (URLs left out), sorted, once
        each. O(those folders): read from the counts kept by each write
        (:mod:`kbsearch.store.counts`)."""
        return list(self.counts("public", "folder"))

    def write_document(
        self,
        document: Document,
        passages: Sequence[Passage],
        bodies: Sequence[str],
        vectors: np.ndarray | None,
        settings: IndexSettings | None = None,
    ) -> None:
        """Replace a document version (all its passages, FTS5 rows and vectors) in one
        transaction. ``bodies`` are the analysed FTS5 texts, aligned with ``passages``;
        ``vectors`` has shape ``(len(passages), dim)`` or is ``None`` for a lexical-only index.

        ``settings``, when given, are the settings the caller built this document with: the
        same transaction records them if the index has none yet, and refuses the document if
        the index holds other settings (another run got there first).

        Raises:
            SettingsConflictError: the index records other settings than ``settings``.
            StorageError: the file cannot be written (locked, read-only, full); nothing of
                this document is kept.
        """
        with self.transaction() as con:
            if settings is not None:
                recorded = self.read_settings()
                if recorded is None:
                    self.write_settings(settings)
                elif replace(recorded, default_access=None) != replace(
                    settings, default_access=None
                ):
                    raise SettingsConflictError(_conflict(str(self.path), recorded, settings))
            row_id = self._next_row_id()  # read before the delete: ids are never reused
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
            counted = CountedDocument(
                document.doc_id,
                document.title,
                document.access,
                document.language,
                document.source,
                len(passages),
            )
            SqlCounts(con).add(counted.deltas(1))
            for i, (passage, body) in enumerate(zip(passages, bodies, strict=True)):
                con.execute(
                    "INSERT INTO passages(id, passage_id, document, doc_id, version, section,"
                    " kind, text, ordinal, page, char_start, char_end, token_count, access,"
                    " language, effective_from, effective_to)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        row_id + i,
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
                row = row_id + i
                con.execute("INSERT INTO passages_fts(rowid, body) VALUES (?, ?)", (row, body))
                if document.access == "public":
                    con.execute("INSERT INTO public_fts(rowid, body) VALUES (?, ?)", (row, body))
                if vectors is not None:
                    con.execute(
                        "INSERT INTO vectors(id, vector) VALUES (?, ?)",
                        (row, np.ascontiguousarray(vectors[i], dtype=np.float32).tobytes()),
                    )
            self.set_meta(NEXT_ROW_META, str(row_id + len(passages)))
            self.bump_generation()

    def _next_row_id(self) -> int:
        """The row id of the next passage written: past every id this file has held (the
        ``next_row`` meta key) and past every stored one, so a row id names one passage for
        the life of the file and in-memory row caches stay right across writes
        (:class:`kbsearch.retrieve.lexical.postings.RowTable`). O(log N)."""
        (top,) = self.connection.execute("SELECT coalesce(max(id), 0) FROM passages").fetchone()
        return max(int(self.get_meta(NEXT_ROW_META) or 0), int(top) + 1)

    def _delete_document(self, doc_id: str, version: str) -> None:
        con = self.connection
        deleted = con.execute(
            "SELECT p.id FROM passages p JOIN documents d ON p.document = d.id"
            " WHERE d.doc_id = ? AND d.version = ?",
            (doc_id, version),
        ).fetchall()
        row_log.record_deleted(con, row_log.ranges([r[0] for r in deleted]))
        counts = SqlCounts(con)
        stored = counts.stored(doc_id, version)
        if stored is None:
            return
        counts.add(stored.deltas(-1))
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
            self.bump_generation()

    def clear(self) -> None:
        """Remove every document and the recorded settings (the embedding cache stays)."""
        with self.transaction() as con:
            row_log.record_deleted(con, [row_log.EVERY_ROW])
            for table in FTS_TABLES.values():
                con.execute(f"DELETE FROM {table}")
            con.execute("DELETE FROM documents")
            con.execute(f"DELETE FROM {COUNTS_TABLE}")
            self.write_settings(None)
            self.bump_generation()

    # -- passages -----------------------------------------------------------------------------

    def count_passages(self, filters: Filters | None = None) -> int:
        if filters is None:
            return int(self.connection.execute("SELECT count(*) FROM passages").fetchone()[0])
        where, params = to_sql(filters)
        sql = f"SELECT count(*) FROM passages p WHERE {where}"
        return int(self.connection.execute(sql, params).fetchone()[0])

    def passage_rows(
        self, passage_ids: Iterable[str], filters: Filters | None = None
    ) -> dict[str, PassageRow]:
        """The passages among ``passage_ids`` that pass ``filters`` (all when ``None``)."""
        out: dict[str, PassageRow] = {}
        where, params = ("1", []) if filters is None else to_sql(filters)
        for chunk, marks in in_chunks(passage_ids):
            sql = f"SELECT p.* FROM passages p WHERE p.passage_id IN ({marks}) AND {where}"
            for r in self.connection.execute(sql, [*chunk, *params]):
                out[r["passage_id"]] = PassageRow(r["id"], _passage(r), r["access"], r["language"])
        return out

    def passage_languages(self, passage_ids: Sequence[str], audience: str) -> dict[str, str]:
        """``{passage_id: language}`` of the given passages ``audience`` may see."""
        visible = "" if audience == "staff" else " AND access = 'public'"
        out: dict[str, str] = {}
        for chunk, marks in in_chunks(passage_ids):
            sql = f"SELECT passage_id, language FROM passages WHERE passage_id IN ({marks})"
            out.update({r[0]: r[1] for r in self.connection.execute(sql + visible, chunk)})
        return out

    def heading_fields(self, passage_ids: Sequence[str]) -> dict[str, tuple[str, str, str]]:
        """``{passage_id: (document title, section, doc_id)}`` of the given passages."""
        out: dict[str, tuple[str, str, str]] = {}
        for chunk, marks in in_chunks(passage_ids):
            rows = self.connection.execute(
                "SELECT p.passage_id, d.title, p.section, p.doc_id FROM passages p"
                f" JOIN documents d ON d.id = p.document WHERE p.passage_id IN ({marks})",
                chunk,
            )
            out.update({r[0]: (r[1], r[2], r[3]) for r in rows})
        return out

    def audience_languages(self, audience: str) -> list[str]:
        """The languages of the passages ``audience`` may see, sorted (from the kept counts:
        O(languages))."""
        return list(self.counts(audience, "language"))

    def languages(self, audience: str = "staff") -> list[str]:
        """The languages of the documents ``audience`` may see, sorted (from the kept
        counts: O(languages))."""
        return list(self.counts(audience, "doc_language"))

    def title_totals(self, audience: str) -> tuple[int, int, int, int]:
        """``(passages, titled, unique_titled, titles)`` of the passages ``audience`` may
        see (:data:`kbsearch.store.counts.TOTALS`; kept by each write: O(1))."""
        totals = self.counts(audience, "total")
        return (
            totals.get("passages", 0),
            totals.get("titled", 0),
            totals.get("unique_titled", 0),
            totals.get("titles", 0),
        )

    def passages_of(self, document_row: int) -> list[Passage]:
        rows = self.connection.execute(
            "SELECT * FROM passages WHERE document = ? ORDER BY ordinal", (document_row,)
        )
        return [_passage(r) for r in rows]

    def document_passages(
        self, doc_id: str, version: str | None, audience: str = "public"
    ) -> list[Passage]:
        """The passages of document ``doc_id`` (one ``version``, or every version) that
        ``audience`` may see, by version then reading order."""
        sql = "SELECT * FROM passages WHERE doc_id = ?"
        params = [doc_id]
        if version is not None:
            sql += " AND version = ?"
            params.append(version)
        if audience != "staff":
            sql += " AND access = 'public'"
        rows = self.connection.execute(sql + " ORDER BY version, ordinal", params)
        return [_passage(r) for r in rows]

    def heading_rows(self) -> list[tuple[int, str, str, str, str, str]]:
        """``(row id, passage id, access, document title, section, doc id)`` of every passage,
        ordered by row id (what heading vectors and title counts are made of)."""
        rows = self.connection.execute(
            "SELECT p.id, p.passage_id, p.access, d.title, p.section, p.doc_id FROM passages p"
            " JOIN documents d ON d.id = p.document ORDER BY p.id"
        ).fetchall()
        return [tuple(r) for r in rows]

    def filter_columns(self) -> PassageColumns:
        """Every passage's row id, passage id and filter columns, ordered by row id."""
        cursor = self.connection.cursor()
        cursor.row_factory = None
        rows = cursor.execute(f"SELECT {COLUMNS} FROM passages p ORDER BY p.id").fetchall()
        return PassageColumns(**column_arrays(rows))


def _conflict(path: str, recorded: IndexSettings, wanted: IndexSettings) -> str:
    differ = [
        f"{name} {getattr(recorded, name)!r} (this run: {getattr(wanted, name)!r})"
        for name in recorded.__dataclass_fields__
        if getattr(recorded, name) != getattr(wanted, name) and name != "default_access"
    ]
    return (
        f"{path} was built meanwhile by another run with other settings: {'; '.join(differ)};"
        " nothing of this run's document was written; re-run to index with the recorded"
        " settings, or --reembed to change them"
    )


def _iso(day: date | None) -> str | None:
    return day.isoformat() if day else None


def _day(text: str | None) -> date | None:
    return date.fromisoformat(text) if text else None


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
