"""Filters as numeric masks over in-memory passage columns (the in-memory routes' filter).

The same rules as :func:`kbsearch.store.filter_sql`: the public audience sees only public
passages; ``as_of`` (default today) must lie in ``[effective_from, effective_to]`` (an open
bound always passes); ``language`` and ``doc_ids`` must match. The masks of the most recent
filters are cached.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date

import numpy as np

from .records import Filters

_OPEN_FROM = np.iinfo(np.int32).min
_OPEN_TO = np.iinfo(np.int32).max
_MASK_CACHE_SIZE = 16


def day_ordinals(values: np.ndarray, open_value: int) -> np.ndarray:
    """ISO dates (``""`` = open) as day ordinals, int32, ``open_value`` for open bounds."""
    out = np.full(len(values), open_value, dtype=np.int32)
    for i, text in enumerate(values):
        if text:
            out[i] = date.fromisoformat(str(text)).toordinal()
    return out


@dataclass
class FilterColumns:
    """Per-row filter columns, aligned with some row order (shape ``(n,)`` each).

    ``access``, ``language``, ``doc_id``: object arrays of strings; ``effective_from`` /
    ``effective_to``: ISO date strings, ``""`` for an open bound.
    """

    access: np.ndarray
    language: np.ndarray
    doc_id: np.ndarray
    effective_from: np.ndarray
    effective_to: np.ndarray
    public: np.ndarray = field(init=False)
    from_day: np.ndarray = field(init=False)
    to_day: np.ndarray = field(init=False)
    _masks: dict[Filters, np.ndarray] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.public = np.asarray(self.access == "public", dtype=bool)
        self.from_day = day_ordinals(self.effective_from, _OPEN_FROM)
        self.to_day = day_ordinals(self.effective_to, _OPEN_TO)

    def mask(self, filters: Filters) -> np.ndarray:
        """Boolean mask, shape ``(n,)``, of the rows passing ``filters`` (module docstring).

        Cached; a filter without ``as_of`` is cached under today's date, so midnight is
        respected.
        """
        day = filters.as_of or date.today()
        filters = replace(filters, as_of=day)
        if filters not in self._masks:
            if len(self._masks) >= _MASK_CACHE_SIZE:
                self._masks.clear()
            self._masks[filters] = self._mask(filters, day)
        return self._masks[filters]

    def _mask(self, filters: Filters, day: date) -> np.ndarray:
        ordinal = day.toordinal()
        keep = (self.from_day <= ordinal) & (ordinal <= self.to_day)
        if filters.audience != "staff":
            keep &= self.public
        if filters.language:
            keep &= self.language == filters.language
        if filters.doc_ids is not None:
            keep &= np.isin(self.doc_id, list(filters.doc_ids))
        return keep


def top_k(
    candidates: np.ndarray, scores: np.ndarray, passage_ids: np.ndarray, k: int
) -> list[tuple[str, float]]:
    """Top ``k`` ``(passage_id, score)`` of ``candidates`` (row positions) with their
    ``scores`` (aligned with ``candidates``), best first, ties broken by passage id.

    Everything scoring at least the k-th best is kept before sorting, so ties at the cut are
    decided by id.
    """
    if k <= 0 or len(candidates) == 0:
        return []
    if len(candidates) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        chosen = scores >= kth
        candidates, scores = candidates[chosen], scores[chosen]
    ids = passage_ids[candidates]
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], ids[i]))[:k]
    return [(str(ids[i]), float(scores[i])) for i in order]
