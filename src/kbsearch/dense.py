"""Exact dense (cosine) top-k over stored passage vectors, filters applied before the top k.

Vectors are L2-normalised, so cosine similarity is the dot product. The whole matrix lives in
memory between queries of a process and is reloaded only after a write (the store's generation
counter changes).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np
from threadpoolctl import ThreadpoolController

from .records import Filters
from .store import Store, VectorTable

_CONTROLLER: ThreadpoolController | None = None


def _blas_controller() -> ThreadpoolController:
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


@dataclass
class DenseIndex:
    """The vectors of one store, cached by store generation."""

    table: VectorTable
    generation: int

    @classmethod
    def load(cls, store: Store, dim: int) -> DenseIndex:
        return cls(store.vector_table(dim), store.generation())

    def mask(self, filters: Filters) -> np.ndarray:
        """Boolean mask of rows passing ``filters`` (same rules as the SQL filter)."""
        t = self.table
        keep = np.ones(len(t.row_ids), dtype=bool)
        if filters.audience != "staff":
            keep &= t.access == "public"
        day = (filters.as_of or date.today()).isoformat()
        keep &= (t.effective_from == "") | (t.effective_from <= day)
        keep &= (t.effective_to == "") | (t.effective_to >= day)
        if filters.language:
            keep &= t.language == filters.language
        if filters.doc_ids is not None:
            keep &= np.isin(t.doc_id, list(filters.doc_ids))
        return keep

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine of ``query`` (shape ``(dim,)``, normalised) with every row; BLAS on one
        thread so it does not fight the embedder's threads."""
        with _blas_controller().limit(limits=1, user_api="blas"):
            return self.table.vectors @ np.asarray(query, dtype=np.float32)

    def search(self, query: np.ndarray, filters: Filters, k: int) -> list[tuple[str, float]]:
        """Top ``k`` ``(passage_id, cosine)`` among rows passing ``filters``, best first,
        ties broken by passage id."""
        if k <= 0 or len(self.table.row_ids) == 0:
            return []
        scores = self.scores(query)
        keep = self.mask(filters)
        candidates = np.flatnonzero(keep)
        if len(candidates) == 0:
            return []
        cand_scores = scores[candidates]
        if len(candidates) > k:
            # everything scoring at least the k-th best, so ties at the cut are decided by id
            kth = np.partition(cand_scores, len(cand_scores) - k)[len(cand_scores) - k]
            chosen = cand_scores >= kth
            candidates, cand_scores = candidates[chosen], cand_scores[chosen]
        ids = self.table.passage_ids[candidates]
        order = sorted(range(len(candidates)), key=lambda i: (-cand_scores[i], ids[i]))[:k]
        return [(str(ids[i]), float(cand_scores[i])) for i in order]
