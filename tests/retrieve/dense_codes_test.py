"""int8 codes: the error bound holds against float32 dot products, codes are per row."""

from __future__ import annotations

import numpy as np

from kbsearch.retrieve.dense import row_dots
from kbsearch.retrieve.dense_codes import Codes


def unit(a: np.ndarray) -> np.ndarray:
    return (a / np.linalg.norm(a, axis=-1, keepdims=True)).astype(np.float32)


def test_codes_by_hand() -> None:
    codes = Codes.of(np.array([[0.5, -0.25, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]], np.float32))
    assert codes.scales[0] == np.float32(1.0 / 127)
    assert codes.codes[0].tolist() == [64, -32, 0, 127]  # rint(63.5) = 64 (to even)
    assert codes.scales[1] == 0 and codes.codes[1].tolist() == [0, 0, 0, 0]
    assert codes.codes.dtype == np.int8 and codes.nbytes == 2 * 4 + 2 * 4 + 2 * 4


def test_bound_holds_for_random_and_worst_case_queries() -> None:
    rng = np.random.default_rng(5)
    vectors = unit(rng.normal(size=(500, 384)))
    vectors[:50] = unit(rng.normal(size=(50, 384)) ** 3)  # a few large coordinates
    codes = Codes.of(vectors)
    rows = np.arange(len(vectors))
    residual = vectors - codes.codes * codes.scales[:, None]
    queries = [*unit(rng.normal(size=(20, 384))), *unit(np.sign(residual[:20]) + 1e-3)]
    for q in queries:
        gap = np.abs(row_dots(vectors, q).astype(np.float64) - codes.approximate(q))
        bound = codes.bounds(q, rows)
        assert (gap <= bound).all()
        assert bound[50:].max() < 0.02  # and a useful one for gaussian rows


def test_a_rows_code_depends_on_that_row_only() -> None:
    rng = np.random.default_rng(2)
    vectors = unit(rng.normal(size=(30, 16)))
    alone, together = Codes.of(vectors[:1]), Codes.of(vectors)
    assert np.array_equal(alone.codes[0], together.codes[0])
    assert alone.scales[0] == together.scales[0]
    joined = Codes.of(vectors[:10]).join(Codes.of(vectors[10:]))
    assert np.array_equal(joined.codes, together.codes)
    q = vectors[3]
    assert np.array_equal(joined.approximate(q), together.approximate(q))
