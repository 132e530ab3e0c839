"""Exact dense (cosine) top-k over stored passage vectors, filters applied before the top k.

Vectors are L2-normalised, so cosine similarity is the dot product. The matrix and the filter
columns (as numeric arrays) live in memory between queries of a process and are reloaded only
after a write (the store's generation counter changes); the masks of recent filters are cached.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from threadpoolctl import ThreadpoolController

from ..filters import FilterColumns, Filters
from ..store import Store, VectorTable
from .topk import top_k

_CONTROLLER: ThreadpoolController | None = None
PARALLEL_ROWS = 50_000


def scan_threads() -> int:
    """``$KBSEARCH_THREADS`` (a positive integer), else 2."""
    value = os.environ.get("KBSEARCH_THREADS", "2")
    return int(value) if value.isdigit() and int(value) > 0 else 2


def _blas_controller() -> ThreadpoolController:
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


@dataclass
class DenseIndex:
    """The vectors of one store with numeric filter columns, cached by store generation."""

    table: VectorTable
    generation: int
    columns: FilterColumns = field(init=False)

    def __post_init__(self) -> None:
        t = self.table
        self.columns = FilterColumns(
            t.access, t.language, t.doc_id, t.effective_from, t.effective_to
        )

    @classmethod
    def load(cls, store: Store, dim: int) -> DenseIndex:
        """The store's vectors, the generation read first: call it inside one read
        transaction so that the vectors are those of that generation."""
        generation = store.generation()
        return cls(store.vector_table(dim), generation)

    @cached_property
    def position(self) -> dict[str, int]:
        """``{passage_id: row position}``, built on first use (a race builds it twice, alike)."""
        return {str(pid): i for i, pid in enumerate(self.table.passage_ids)}

    def mask(self, filters: Filters) -> np.ndarray:
        """Boolean mask of rows passing ``filters`` (the same rules as the SQL filter)."""
        return self.columns.mask(filters)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine of ``query`` (shape ``(dim,)``, normalised) with every row, shape ``(n,)``.

        The thread count is set on purpose: BLAS's own default pool fights the embedder's
        threads over the cores. A small matrix is scanned on one thread; from
        ``PARALLEL_ROWS`` rows on, the scan (memory-bound) uses ``$KBSEARCH_THREADS``
        (default 2) threads, which halves it here; the embedder is idle by then.
        """
        threads = 1 if len(self.table.row_ids) < PARALLEL_ROWS else scan_threads()
        with _blas_controller().limit(limits=threads, user_api="blas"):
            return self.table.vectors @ np.asarray(query, dtype=np.float32)

    def search(self, query: np.ndarray, filters: Filters, k: int) -> list[tuple[str, float]]:
        """Top ``k`` ``(passage_id, cosine)`` among rows passing ``filters``, best first,
        ties broken by passage id."""
        if k <= 0 or len(self.table.row_ids) == 0:
            return []
        scores = self.scores(query)
        candidates = np.flatnonzero(self.mask(filters))
        if len(candidates) == 0:
            return []
        return top_k(candidates, scores[candidates], self.table.passage_ids, k)

    def similarity(self, query: np.ndarray, row_id: int) -> float | None:
        """Cosine of ``query`` with the vector of passage row ``row_id`` (``None``: none)."""
        at = np.flatnonzero(self.table.row_ids == row_id)
        if not len(at):
            return None
        return float(self.table.vectors[at[0]] @ np.asarray(query, dtype=np.float32))
