"""The passages' filter columns: one SQL condition for filters, and the column arrays that
the in-memory indexes filter with (the same rules, see :mod:`kbsearch.filtering`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np

from ..records import Filters


@dataclass(frozen=True)
class PassageColumns:
    """Every passage's filter columns, aligned by row id (ascending); ``effective_from`` and
    ``effective_to`` are ISO date strings, ``""`` for an open bound."""

    row_ids: np.ndarray
    passage_ids: np.ndarray
    access: np.ndarray
    language: np.ndarray
    doc_id: np.ndarray
    effective_from: np.ndarray
    effective_to: np.ndarray


def filter_sql(filters: Filters, alias: str = "p") -> tuple[str, list[object]]:
    """Compile filters into a SQL condition on the passages table (with its parameters).

    The caller validates the audience; ``as_of`` defaults to today.
    """
    clauses: list[str] = []
    params: list[object] = []
    if filters.audience != "staff":
        clauses.append(f"{alias}.access = 'public'")
    day = (filters.as_of or date.today()).isoformat()
    clauses.append(f"({alias}.effective_from IS NULL OR {alias}.effective_from <= ?)")
    clauses.append(f"({alias}.effective_to IS NULL OR ? <= {alias}.effective_to)")
    params += [day, day]
    if filters.language:
        clauses.append(f"{alias}.language = ?")
        params.append(filters.language)
    if filters.doc_ids is not None:
        marks = ",".join("?" * len(filters.doc_ids)) or "NULL"
        clauses.append(f"{alias}.doc_id IN ({marks})")
        params += list(filters.doc_ids)
    return " AND ".join(clauses), params


# the filter columns of a passage row, in the order column_arrays reads them
COLUMNS = (
    "p.id, p.passage_id, p.access, p.language, p.doc_id,"
    " coalesce(p.effective_from, ''), coalesce(p.effective_to, '')"
)


def column_arrays(rows: Sequence[Sequence[Any]]) -> dict[str, np.ndarray]:
    """The arrays of :class:`PassageColumns` from rows starting with ``COLUMNS``."""
    return {
        "row_ids": np.array([r[0] for r in rows], dtype=np.int64),
        "passage_ids": np.array([r[1] for r in rows], dtype=object),
        "access": np.array([r[2] for r in rows], dtype=object),
        "language": np.array([r[3] for r in rows], dtype=object),
        "doc_id": np.array([r[4] for r in rows], dtype=object),
        "effective_from": np.array([r[5] for r in rows], dtype="U10"),
        "effective_to": np.array([r[6] for r in rows], dtype="U10"),
    }
