"""int8 codes of passage vectors: the compact matrix the dense scan reads, with an error bound.

Each row ``x`` (float32, shape ``(dim,)``) is stored as ``c = rint(x / s)`` in int8 with its
own scale ``s = max_j |x_j| / 127`` (symmetric scalar quantisation per row, so a row's code
depends on that row only: the same vector gets the same code whatever else is stored, and
rows can be added without re-coding the others). Memory: ``dim + 8`` bytes per row instead
of ``4 * dim``.

The approximate score of a query ``q`` is ``a = s * (c . q)`` (float32, computed a block of
rows at a time by BLAS). Its distance to the exact float32 score ``x . q`` (as
:func:`kbsearch.retrieve.dense.row_dots` computes it) is bounded, per row, by

    |x . q - a| <= min(s/2 * ||q||_1, ||x - s c||_2 * ||q||_2) + e

with ``e = 2.1 * dim * 2^-24 * 127 * s * ||q||_1`` covering the float32 rounding of both
sums (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., eq. 3.5:
``|fl(x . y) - x . y| <= gamma_n |x| . |y|``, for any order of the additions), so a row whose
``a + bound`` is below the k-th best exact score cannot be in the top k
(:meth:`kbsearch.retrieve.dense.DenseIndex.search`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LEVELS = 127  # codes in [-127, 127]
_BLOCK = 2048  # rows cast to float32 at a time (a block is 3 MiB at 384 dimensions)
_ROUNDING = 2.1 * 2.0**-24 * LEVELS  # times dim: float32 rounding of the two dot products


@dataclass(frozen=True)
class Codes:
    """int8 codes of ``n`` rows: ``codes`` ``(n, dim)`` int8, ``scales`` ``(n,)`` float32
    (``s``), ``residuals`` ``(n,)`` float32 (``||x - s c||_2``, rounded up)."""

    codes: np.ndarray
    scales: np.ndarray
    residuals: np.ndarray

    @classmethod
    def of(cls, vectors: np.ndarray) -> Codes:
        """The codes of a ``(n, dim)`` float matrix (a zero row gets scale 0 and code 0)."""
        x = np.asarray(vectors, dtype=np.float32)
        if x.ndim != 2:
            raise ValueError(f"vectors must be a matrix, got shape {x.shape}")
        peak = np.abs(x).max(axis=1) if x.shape[1] else np.zeros(len(x), dtype=np.float32)
        scales = (peak / np.float32(LEVELS)).astype(np.float32)
        safe = np.where(scales > 0, scales, np.float32(1))
        codes = np.clip(np.rint(x / safe[:, None]), -LEVELS, LEVELS).astype(np.int8)
        decoded = codes.astype(np.float64) * scales.astype(np.float64)[:, None]
        residuals = np.linalg.norm(x.astype(np.float64) - decoded, axis=1) * (1 + 1e-6)
        return cls(codes, scales, np.nextafter(residuals.astype(np.float32), np.inf))

    @classmethod
    def empty(cls, dim: int) -> Codes:
        return cls(
            np.zeros((0, dim), dtype=np.int8),
            np.zeros(0, dtype=np.float32),
            np.zeros(0, dtype=np.float32),
        )

    def __len__(self) -> int:
        return len(self.scales)

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes + self.scales.nbytes + self.residuals.nbytes)

    def join(self, other: Codes) -> Codes:
        """These rows, then ``other``'s (a copy of both)."""
        return Codes(
            np.concatenate([self.codes, other.codes]),
            np.concatenate([self.scales, other.scales]),
            np.concatenate([self.residuals, other.residuals]),
        )

    def take(self, keep: np.ndarray) -> Codes:
        """The rows of boolean mask ``keep`` (a copy)."""
        return Codes(self.codes[keep], self.scales[keep], self.residuals[keep])

    def approximate(self, query: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``s * (c . q)`` for every row, shape ``(n,)`` float32 (into ``out`` if given)."""
        q = np.asarray(query, dtype=np.float32)
        n = len(self)
        result = np.empty(n, dtype=np.float32) if out is None else out
        buffer = np.empty((min(_BLOCK, n), self.codes.shape[1]), dtype=np.float32)
        for start in range(0, n, _BLOCK):
            stop = min(start + _BLOCK, n)
            block = buffer[: stop - start]
            np.copyto(block, self.codes[start:stop], casting="unsafe")
            np.dot(block, q, out=result[start:stop])
        np.multiply(result, self.scales, out=result)
        return result

    def bounds(self, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The bound on ``|x . q - a|`` (module docstring) of the rows at positions ``rows``,
        shape ``(len(rows),)`` float64."""
        q = np.asarray(query, dtype=np.float64)
        l1, l2 = float(np.abs(q).sum()), float(np.sqrt(q @ q))
        s = self.scales[rows].astype(np.float64)
        dim = self.codes.shape[1]
        quantised = np.minimum(s * (l1 / 2), self.residuals[rows].astype(np.float64) * l2)
        return quantised + s * (l1 * dim * _ROUNDING) + 1e-12
