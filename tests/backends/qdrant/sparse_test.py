from __future__ import annotations

import math

import pytest

from kbsearch.backends.qdrant.sparse import (
    LengthStatistics,
    SparseWeights,
    qdrant_idf,
    query_vector,
    term_index,
    tokens,
)


def test_tokens_fold_accents_like_fts5_remove_diacritics() -> None:
    assert tokens("Remboursé, colis PK-2200") == ["rembourse", "colis", "pk", "2200"]


def test_term_frequency_saturation_and_length_normalisation_by_hand() -> None:
    w = SparseWeights.from_body("refund refund parcel")
    assert w.length == 3
    indices, values = w.vector(avgdl=6.0)
    by_index = dict(zip(indices, values, strict=True))
    norm = 1.2 * (1 - 0.75 + 0.75 * 3 / 6.0)  # k1 * (1 - b + b |D| / avgdl) = 0.75
    assert by_index[term_index("refund")] == pytest.approx(2 * 2.2 / (2 + norm))
    assert by_index[term_index("parcel")] == pytest.approx(1 * 2.2 / (1 + norm))
    assert indices == sorted(indices)


def test_longer_passages_weigh_less_and_tf_saturates() -> None:
    short = dict(zip(*SparseWeights.from_body("refund").vector(10.0), strict=True))
    long = dict(zip(*SparseWeights.from_body("refund " + "x " * 30).vector(10.0), strict=True))
    i = term_index("refund")
    assert long[i] < short[i]
    many = dict(zip(*SparseWeights.from_body("refund " * 1000).vector(1000.0), strict=True))
    assert many[i] < 2.2  # bounded by k1 + 1


def test_average_length_must_be_positive() -> None:
    with pytest.raises(ValueError):
        SparseWeights.from_body("a").vector(0.0)


def test_query_vector_counts_repeats_as_fts5_adds_repeated_phrases() -> None:
    indices, values = query_vector(["refund", "parcel", "refund"])
    got = dict(zip(indices, values, strict=True))
    assert got == {term_index("refund"): 2.0, term_index("parcel"): 1.0}


def test_term_index_fits_qdrant_u32_and_is_stable() -> None:
    assert 0 <= term_index("refund") < 2**32
    assert term_index("refund") == int.from_bytes(
        __import__("hashlib").blake2b(b"refund", digest_size=4).digest(), "big"
    )


def test_qdrant_idf_formula() -> None:
    assert qdrant_idf(10, 2) == pytest.approx(math.log(1 + 8.5 / 2.5))
    assert qdrant_idf(10, 10) > 0  # never clamped, unlike FTS5


def test_length_statistics_drift() -> None:
    a = LengthStatistics(10.0, 8.0)
    assert not a.drifted(LengthStatistics(10.4, 8.0), 0.05)
    assert a.drifted(LengthStatistics(10.0, 9.0), 0.05)


def test_a_staff_points_values_ignore_the_public_average() -> None:
    """A staff point has no ``bm25_public`` vector: only the average of every passage can
    leave its values stale."""
    a = LengthStatistics(10.0, 8.0)
    assert not a.drifted(LengthStatistics(10.0, 9.0), 0.05, public=False)
    assert a.drifted(LengthStatistics(11.0, 8.0), 0.05, public=False)
