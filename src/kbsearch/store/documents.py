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
from ..records import Document, Passage
from . import row_log
from .counts import CountedDocument, Counts, SqlCounts
from .database import IN_CHUNK, Database, in_chunks
from .fts import FTS_TABLES
from .moments import MomentChanges, SqlMoments, removed_vectors
from .schema import COUNTS_TABLE, MOMENTS_TABLE, NEXT_ROW_META
from .settings import IndexSettings


@dataclass(frozen=True)
class StoredDocument:
    """A stored document version with its row id and passage count."""

    row_id: int
    document: Document
    passages: int


class Documents:
    """Documents and passages (``store.documents``; see the module docstring). Their
    per-audience counts are read from ``counts``."""

    def __init__(self, database: Database, counts: Counts) -> None:
        self.database = database
        self.counts = counts

    def hashes(self) -> dict[tuple[str, str], str]:
        """``{(doc_id, version): content_hash}`` of every stored document."""
        rows = self.database.connection.execute(
            "SELECT doc_id, version, content_hash FROM documents"
        )
        return {(r["doc_id"], r["version"]): r["content_hash"] for r in rows}

    def sources(self) -> dict[tuple[str, str], str]:
        """``{(doc_id, version): source path}`` of every stored document."""
        rows = self.database.connection.execute("SELECT doc_id, version, source FROM documents")
        return {(r["doc_id"], r["version"]): r["source"] for r in rows}

    def state(self, doc_id: str, version: str) -> tuple[str, str] | None:
        """``(content_hash, source)`` of one stored version; ``None`` when it is not stored."""
        row = self.database.connection.execute(
            "SELECT content_hash, source FROM documents WHERE doc_id = ? AND version = ?",
            (doc_id, version),
        ).fetchone()
        return (row["content_hash"], row["source"]) if row else None

    def page(self, audience: str, offset: int, limit: int) -> list[StoredDocument]:
        """The document versions ``audience`` may see (every one for ``staff``, else the
        public ones), by doc id then version, from the ``offset``-th (0-based), at most
        ``limit`` of them; O(offset + limit) rows read."""
        rows = self.database.connection.execute(
            "SELECT d.*, (SELECT count(*) FROM passages p WHERE p.document = d.id) AS n "
            "FROM documents d WHERE ? = 'staff' OR d.access = 'public'"
            " ORDER BY d.doc_id, d.version LIMIT ? OFFSET ?",
            (audience, limit, offset),
        )
        return [StoredDocument(r["id"], _document(r), r["n"]) for r in rows]

    def all(self) -> list[StoredDocument]:
        rows = self.database.connection.execute(
            "SELECT d.*, (SELECT count(*) FROM passages p WHERE p.document = d.id) AS n "
            "FROM documents d ORDER BY d.doc_id, d.version"
        )
        return [StoredDocument(r["id"], _document(r), r["n"]) for r in rows]

    def about(
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
                for r in self.database.connection.execute(sql, chunk):
                    out[(r["doc_id"], r["version"])] = StoredDocument(r["id"], _document(r), r["n"])
        return out

    def of(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Document]:
        """``{(doc_id, version): document}`` of the stored documents among ``keys`` (by the
        unique key: no scan of the documents)."""
        out: dict[tuple[str, str], Document] = {}
        for chunk, _ in in_chunks(keys, IN_CHUNK // 2):
            where = " OR ".join("(doc_id = ? AND version = ?)" for _ in chunk)
            params = [x for key in chunk for x in key]
            for r in self.database.connection.execute(
                f"SELECT * FROM documents WHERE {where}", params
            ):
                out[(r["doc_id"], r["version"])] = _document(r)
        return out

    def languages(self, audience: str = "staff") -> list[str]:
        """The languages of the documents ``audience`` may see, sorted (from the kept
        counts: O(languages))."""
        return list(self.counts.keys(audience, "doc_language"))

    def public_folders(self) -> list[str]:
        """The folders of the public documents read from files (URLs left out), sorted, once
        each. O(those folders): read from the counts kept by each write
        (:mod:`kbsearch.store.counts`)."""
        return list(self.counts.keys("public", "folder"))

    def write(
        self,
        document: Document,
        passages: Sequence[Passage],
        bodies: Sequence[str],
        vectors: np.ndarray | None,
        settings: IndexSettings | None = None,
    ) -> None:
        """Replace a document version (all its passages, FTS5 rows and vectors, and the
        audiences' vector moments, :mod:`kbsearch.store.moments`) in one transaction.
        ``bodies`` are the analysed FTS5 texts, aligned with ``passages``; ``vectors`` has
        shape ``(len(passages), dim)`` or is ``None`` for a lexical-only index.

        ``settings``, when given, are the settings the caller built this document with: the
        same transaction records them if the index has none yet, and refuses the document if
        the index holds other settings (another run got there first).

        Raises:
            SettingsConflictError: the index records other settings than ``settings``.
            StorageError: the file cannot be written (locked, read-only, full); nothing of
                this document is kept.
        """
        with self.database.transaction() as con:
            first = False  # the settings recorded by this write
            if settings is not None:
                recorded = self.database.read_settings()
                first = recorded is None
                if recorded is None:
                    self.database.write_settings(settings)
                elif replace(recorded, default_access=None) != replace(
                    settings, default_access=None
                ):
                    raise SettingsConflictError(
                        _conflict(str(self.database.path), recorded, settings)
                    )
            row_id = self._next_row_id()  # read before the delete: ids are never reused
            moments = MomentChanges()
            replaced = self._delete_document(document.doc_id, document.version, moments)
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
            if vectors is not None:
                moments.add(document.access, np.asarray(vectors, dtype=np.float32), 1)
            SqlMoments(con).apply(moments)
            self.database.set_meta(NEXT_ROW_META, str(row_id + len(passages)))
            # a staff version written over a staff version or none, with the settings as
            # they were, changes nothing the public sees
            seen = first or "public" in (document.access, replaced)
            self.database.bump_generation(public=seen)

    def _next_row_id(self) -> int:
        """The row id of the next passage written: past every id this file has held (the
        ``next_row`` meta key) and past every stored one, so a row id names one passage for
        the life of the file and in-memory row caches stay right across writes
        (:class:`kbsearch.retrieve.lexical.rows.RowTable`). O(log N)."""
        (top,) = self.database.connection.execute(
            "SELECT coalesce(max(id), 0) FROM passages"
        ).fetchone()
        return max(int(self.database.get_meta(NEXT_ROW_META) or 0), int(top) + 1)

    def _delete_document(self, doc_id: str, version: str, moments: MomentChanges) -> str | None:
        """Delete a stored version's rows; the moments of its vectors are subtracted in
        ``moments`` (the caller applies them). Returns the access label of the version
        deleted (``None``: none was stored)."""
        con = self.database.connection
        deleted = con.execute(
            "SELECT p.id FROM passages p JOIN documents d ON p.document = d.id"
            " WHERE d.doc_id = ? AND d.version = ?",
            (doc_id, version),
        ).fetchall()
        row_log.record_deleted(con, row_log.ranges([r[0] for r in deleted]))
        counts = SqlCounts(con)
        stored = counts.stored(doc_id, version)
        if stored is None:
            return None
        counts.add(stored.deltas(-1))
        removed = removed_vectors(con, doc_id, version)
        if removed is not None:
            moments.add(removed[0], removed[1], -1)
        for table in FTS_TABLES.values():
            con.execute(
                f"DELETE FROM {table} WHERE rowid IN (SELECT p.id FROM passages p"
                " JOIN documents d ON p.document = d.id WHERE d.doc_id = ? AND d.version = ?)",
                (doc_id, version),
            )
        # passages and vectors follow by ON DELETE CASCADE
        con.execute("DELETE FROM documents WHERE doc_id = ? AND version = ?", (doc_id, version))
        return stored.access

    def delete(self, doc_id: str, version: str) -> None:
        """Remove a document version, its passages, FTS5 rows and vectors, in one transaction."""
        with self.database.transaction() as con:
            moments = MomentChanges()
            removed = self._delete_document(doc_id, version, moments)
            SqlMoments(con).apply(moments)
            self.database.bump_generation(public=removed == "public")

    def clear(self) -> None:
        """Remove every document and the recorded settings (the embedding cache stays)."""
        with self.database.transaction() as con:
            row_log.record_deleted(con, [row_log.EVERY_ROW])
            for table in FTS_TABLES.values():
                con.execute(f"DELETE FROM {table}")
            con.execute("DELETE FROM documents")
            con.execute(f"DELETE FROM {COUNTS_TABLE}")
            con.execute(f"DELETE FROM {MOMENTS_TABLE}")
            self.database.write_settings(None)
            self.database.bump_generation()


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
