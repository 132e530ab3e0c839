"""The passages' filter columns: one SQL condition for filters, and the column arrays that
the in-memory indexes filter with (the same rules, see :mod:`kbsearch.filtering`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


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
