"""Exact dense (cosine) top-k over stored passage vectors, filters applied before the top k.

Vectors are L2-normalised, so cosine similarity is the dot product. The matrix and the filter
columns (as numeric arrays) live in memory between queries of a process and are reloaded only
after a write (the store's generation counter changes); the masks of recent filters are cached.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from datetime import date

import numpy as np
from threadpoolctl import ThreadpoolController

from .records import Filters
from .store import Store, VectorTable

_CONTROLLER: ThreadpoolController | None = None
_OPEN_FROM = np.iinfo(np.int32).min
_OPEN_TO = np.iinfo(np.int32).max
_MASK_CACHE_SIZE = 16
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


def _days(values: np.ndarray, open_value: int) -> np.ndarray:
    """ISO dates (``""`` = open) as day ordinals, int32."""
    out = np.full(len(values), open_value, dtype=np.int32)
    for i, text in enumerate(values):
        if text:
            out[i] = date.fromisoformat(str(text)).toordinal()
    return out


@dataclass
class DenseIndex:
    """The vectors of one store with numeric filter columns, cached by store generation."""

    table: VectorTable
    generation: int
    public: np.ndarray = field(init=False)
    effective_from: np.ndarray = field(init=False)
    effective_to: np.ndarray = field(init=False)
    _masks: dict[Filters, np.ndarray] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        t = self.table
        self.public = np.asarray(t.access == "public", dtype=bool)
        self.effective_from = _days(t.effective_from, _OPEN_FROM)
        self.effective_to = _days(t.effective_to, _OPEN_TO)

    @classmethod
    def load(cls, store: Store, dim: int) -> DenseIndex:
        return cls(store.vector_table(dim), store.generation())

    def mask(self, filters: Filters) -> np.ndarray:
        """Boolean mask of rows passing ``filters`` (the same rules as the SQL filter)."""
        if filters.as_of is None:  # cached under today's date, so midnight is respected
            filters = replace(filters, as_of=date.today())
        assert filters.as_of is not None
        if filters not in self._masks:
            if len(self._masks) >= _MASK_CACHE_SIZE:
                self._masks.clear()
            self._masks[filters] = self._mask(filters, filters.as_of)
        return self._masks[filters]

    def _mask(self, filters: Filters, day: date) -> np.ndarray:
        t = self.table
        ordinal = day.toordinal()
        keep = (self.effective_from <= ordinal) & (ordinal <= self.effective_to)
        if filters.audience != "staff":
            keep &= self.public
        if filters.language:
            keep &= t.language == filters.language
        if filters.doc_ids is not None:
            keep &= np.isin(t.doc_id, list(filters.doc_ids))
        return keep

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
        cand_scores = scores[candidates]
        if len(candidates) > k:
            # everything scoring at least the k-th best, so ties at the cut are decided by id
            kth = np.partition(cand_scores, len(cand_scores) - k)[len(cand_scores) - k]
            chosen = cand_scores >= kth
            candidates, cand_scores = candidates[chosen], cand_scores[chosen]
        ids = self.table.passage_ids[candidates]
        order = sorted(range(len(candidates)), key=lambda i: (-cand_scores[i], ids[i]))[:k]
        return [(str(ids[i]), float(cand_scores[i])) for i in order]
