"""Exact dense (cosine) top-k over stored passage vectors, filters applied before the top k.

Vectors are L2-normalised, so cosine similarity is the dot product. The matrix and the filter
columns (as numeric arrays) live in memory between queries of a process and are reloaded only
after a write (the store's generation counter changes); the masks of recent filters are cached.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..filters import FilterColumns, Filters
from ..store import Store, VectorTable
from .topk import top_k

PARALLEL_ROWS = 50_000


def scan_threads() -> int:
    """``$KBSEARCH_THREADS`` (a positive integer), else 2."""
    value = os.environ.get("KBSEARCH_THREADS", "2")
    return int(value) if value.isdigit() and int(value) > 0 else 2


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

        Each score is a function of its own row and the query only, bit for bit: numpy's
        ``einsum`` loop sums each row alike, wherever the row sits and however many rows the
        matrix has, whereas a BLAS product's float32 rounding moves with both (a public
        score changed in the last bits when a staff document was added). A small matrix is
        scanned on one thread; from ``PARALLEL_ROWS`` rows on, the scan (memory-bound) is
        cut into ``$KBSEARCH_THREADS`` (default 2) slices scanned at once (``einsum``
        releases the GIL), which halves it here; the embedder is idle by then.
        """
        vectors, q = self.table.vectors, np.asarray(query, dtype=np.float32)
        threads = 1 if len(vectors) < PARALLEL_ROWS else scan_threads()
        if threads == 1:
            return _row_dots(vectors, q)
        out = np.empty(len(vectors), dtype=np.float32)
        cuts = np.linspace(0, len(vectors), threads + 1).astype(int)
        slices = [slice(a, b) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda part: _row_dots(vectors[part], q, out[part]), slices))
        return out

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
        row = self.table.vectors[at[0] : at[0] + 1]
        return float(_row_dots(row, np.asarray(query, dtype=np.float32))[0])  # as scores()


def _row_dots(rows: np.ndarray, q: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``rows @ q`` (shapes ``(n, dim)``, ``(dim,)``), each row summed alike (no BLAS)."""
    return np.einsum("ij,j->i", rows, q, out=out)
