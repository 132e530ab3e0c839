"""Passages: reads of the stored passages (written with their document,
:meth:`kbsearch.store.documents.Documents.write`) and of their per-audience counts."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from ..filters import Filters, to_sql
from ..records import Passage, PassageRow
from .columns import COLUMNS, PassageColumns, column_arrays
from .counts import Counts
from .database import Database, in_chunks


class Passages:
    """Reads of the passages (``store.passages``); their counts are read from ``counts``."""

    def __init__(self, database: Database, counts: Counts) -> None:
        self.database = database
        self.counts = counts

    def count(self, filters: Filters | None = None) -> int:
        if filters is None:
            return int(
                self.database.connection.execute("SELECT count(*) FROM passages").fetchone()[0]
            )
        where, params = to_sql(filters)
        sql = f"SELECT count(*) FROM passages p WHERE {where}"
        return int(self.database.connection.execute(sql, params).fetchone()[0])

    def in_force_bounds(self, passage_id: str) -> tuple[str | None, str | None] | None:
        """The bounds ``(effective_from, effective_to)`` (ISO text, ``None`` = open) of the
        version ``passage_id`` belongs to, ``None`` when no such passage is stored. Callers
        decide who may be told (:meth:`kbsearch.facade.contents.Contents.excluded`)."""
        sql = "SELECT effective_from, effective_to FROM passages WHERE passage_id = ?"
        row = self.database.connection.execute(sql, [passage_id]).fetchone()
        return None if row is None else (row[0], row[1])

    def rows(
        self, passage_ids: Iterable[str], filters: Filters | None = None
    ) -> dict[str, PassageRow]:
        """The passages among ``passage_ids`` that pass ``filters`` (all when ``None``)."""
        out: dict[str, PassageRow] = {}
        where, params = ("1", []) if filters is None else to_sql(filters)
        for chunk, marks in in_chunks(passage_ids):
            sql = f"SELECT p.* FROM passages p WHERE p.passage_id IN ({marks}) AND {where}"
            for r in self.database.connection.execute(sql, [*chunk, *params]):
                out[r["passage_id"]] = PassageRow(
                    r["id"], passage_of(r), r["access"], r["language"]
                )
        return out

    def languages_of(self, passage_ids: Sequence[str], audience: str) -> dict[str, str]:
        """``{passage_id: language}`` of the given passages ``audience`` may see."""
        visible = "" if audience == "staff" else " AND access = 'public'"
        out: dict[str, str] = {}
        for chunk, marks in in_chunks(passage_ids):
            sql = f"SELECT passage_id, language FROM passages WHERE passage_id IN ({marks})"
            out.update({r[0]: r[1] for r in self.database.connection.execute(sql + visible, chunk)})
        return out

    def heading_fields(self, passage_ids: Sequence[str]) -> dict[str, tuple[str, str, str]]:
        """``{passage_id: (document title, section, doc_id)}`` of the given passages."""
        out: dict[str, tuple[str, str, str]] = {}
        for chunk, marks in in_chunks(passage_ids):
            rows = self.database.connection.execute(
                "SELECT p.passage_id, d.title, p.section, p.doc_id FROM passages p"
                f" JOIN documents d ON d.id = p.document WHERE p.passage_id IN ({marks})",
                chunk,
            )
            out.update({r[0]: (r[1], r[2], r[3]) for r in rows})
        return out

    def languages(self, audience: str) -> list[str]:
        """The languages of the passages ``audience`` may see, sorted (from the kept counts:
        O(languages))."""
        return list(self.counts.keys(audience, "language"))

    def title_totals(self, audience: str) -> tuple[int, int, int, int]:
        """``(passages, titled, unique_titled, titles)`` of the passages ``audience`` may
        see (:data:`kbsearch.store.counts.TOTALS`; kept by each write: O(1))."""
        totals = self.counts.keys(audience, "total")
        return (
            totals.get("passages", 0),
            totals.get("titled", 0),
            totals.get("unique_titled", 0),
            totals.get("titles", 0),
        )

    def in_document(self, document_row: int) -> list[Passage]:
        rows = self.database.connection.execute(
            "SELECT * FROM passages WHERE document = ? ORDER BY ordinal", (document_row,)
        )
        return [passage_of(r) for r in rows]

    def of_document(
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
        rows = self.database.connection.execute(sql + " ORDER BY version, ordinal", params)
        return [passage_of(r) for r in rows]

    def heading_rows(self) -> list[tuple[int, str, str, str, str, str]]:
        """``(row id, passage id, access, document title, section, doc id)`` of every passage,
        ordered by row id (what heading vectors and title counts are made of)."""
        rows = self.database.connection.execute(
            "SELECT p.id, p.passage_id, p.access, d.title, p.section, p.doc_id FROM passages p"
            " JOIN documents d ON d.id = p.document ORDER BY p.id"
        ).fetchall()
        return [tuple(r) for r in rows]

    def filter_columns(self) -> PassageColumns:
        """Every passage's row id, passage id and filter columns, ordered by row id."""
        cursor = self.database.connection.cursor()
        cursor.row_factory = None
        rows = cursor.execute(f"SELECT {COLUMNS} FROM passages p ORDER BY p.id").fetchall()
        return PassageColumns(**column_arrays(rows))


# the columns of ``passages`` named as the fields of :class:`~kbsearch.records.Passage`
SAME_NAMED = ("passage_id", "doc_id", "version", "section", "kind", "text", "ordinal", "page")


def passage_of(r: sqlite3.Row) -> Passage:
    """The passage of one ``passages`` row."""
    fields = {name: r[name] for name in SAME_NAMED}
    return Passage(**fields, start=r["char_start"], end=r["char_end"], token_count=r["token_count"])
