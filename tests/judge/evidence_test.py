"""Evidence collection: the exact cosine background and term presence."""

from __future__ import annotations

import numpy as np
import pytest
from support import SEED, seed_store

from kbsearch.judge.evidence import Background, row_of, term_statistics, terms_in_row
from kbsearch.retrieve.lexical.impact import ImpactIndex
from kbsearch.text.analysis import Analyzer


def test_background_equals_the_scan() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(50, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = vectors[3] + 0.1
    query /= np.linalg.norm(query)
    cos = vectors.astype(np.float64) @ query
    mean, std = Background.of(vectors).of_query(query)
    assert mean == np.float64(cos.mean()) or abs(mean - cos.mean()) < 1e-12
    assert abs(std - cos.std()) < 1e-9


def test_terms_found_in_a_row(tmp_path) -> None:
    analyzer = Analyzer("stem")
    store = seed_store(tmp_path / "kb.db", analyzer)
    index = ImpactIndex.load(store, "staff")
    stats = term_statistics(index, analyzer, "refund kettle zebra", ["en"])
    assert stats.words == (("refund",), ("kettl",), ("zebra",))
    assert stats.terms == ("refund", "kettl", "zebra")
    assert stats.known == (True, True, False)
    assert stats.idf[2] > stats.idf[0] > 0  # an absent term weighs most
    for key, text in SEED.items():
        row = row_of(index, key)
        assert row is not None
        expected = tuple(w in text.lower() for w in ("refund", "kettle", "zebra"))
        assert terms_in_row(index, stats.words, row) == expected
    assert row_of(index, "nope") is None


def test_sentence_coverage_reads_one_sentence_at_a_time(tmp_path) -> None:
    from kbsearch.judge.evidence import TermStatistics, sentence_coverage

    analyzer = Analyzer("stem")
    stats = TermStatistics(
        (("lost",), ("parcel",), ("refund",)), (1.0, 1.0, 2.0), (True, True, True)
    )
    spread = ["A lost bag. A parcel. We refund."]
    together = ["Nothing here. A lost parcel is refunded."]
    assert sentence_coverage(spread, stats, analyzer, ["en"]) == 0.5  # "We refund." alone
    assert sentence_coverage(together, stats, analyzer, ["en"]) == 1.0
    assert sentence_coverage([], stats, analyzer, ["en"]) == 0.0


def test_a_word_counts_once_in_a_bilingual_index(tmp_path) -> None:
    # "refunding" is stemmed "refund" in English and "refunding" in French: one word, known
    # because the English stem is in the index; the absent French stem does not make it unknown
    analyzer = Analyzer("stem")
    store = seed_store(tmp_path / "kb.db", analyzer)
    index = ImpactIndex.load(store, "staff")
    english = term_statistics(index, analyzer, "refunding kettles", ["en"])
    both = term_statistics(index, analyzer, "refunding kettles", ["en", "fr"])
    assert both.words == (("refund", "refunding"), ("kettl",))
    assert both.terms == ("refund", "refunding", "kettl")
    assert both.known == (True, True)
    assert both.idf == english.idf
    unknown = term_statistics(index, analyzer, "zebra", ["en", "fr"])
    assert unknown.known == (False,)


def test_centralities_are_each_passage_mean_cosine_over_the_collection(tmp_path) -> None:
    from support import indexed_kb

    from kbsearch.filters import Filters
    from kbsearch.judge.evidence import centralities

    with indexed_kb(tmp_path) as kb:
        dense = kb.dense_index()
        vectors = np.asarray(dense.table.vectors, dtype=np.float64)
        background = Background.of(vectors)
        ranked = kb.routes["dense"].candidates("lost parcel", Filters(audience="staff"), 5)
        found = centralities(kb.backend, background, ranked)
        row = {pid: i for i, pid in enumerate(dense.table.passage_ids)}
        # p . m over every passage is the mean of p's cosines with each of them
        expected = [float((vectors @ vectors[row[p]]).mean()) for p, _ in ranked]
        assert found == pytest.approx(expected, abs=1e-6)
        assert centralities(kb.backend, background, []) == ()
