"""BM25 through FTS5: the worked example, query parsing, explanation adding up."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from support import SEED, seed_store

from kbsearch.errors import QueryError
from kbsearch.records import Document, Filters, Passage
from kbsearch.retrieve.lexical.bm25 import explain_bm25
from kbsearch.retrieve.lexical.sql import lexical_search, sql_terms
from kbsearch.store import Store
from kbsearch.text.analysis import Analyzer, match_expression, query_words


def test_worked_example_scores_exactly(tmp_path: Path) -> None:
    store = seed_store(tmp_path / "kb.db", Analyzer("plain"))
    hits = lexical_search(store, Analyzer("plain"), "kettle refund", Filters(), 10)
    assert [pid for pid, _ in hits] == ["A", "B", "C", "D", "E"]
    assert [round(s, 4) for _, s in hits] == [1.3808, 1.028, 0.4336, 0.4336, 0.4114]
    assert hits[2][1] == hits[3][1]  # an exact tie, broken by passage id: C before D


def test_results_identical_run_to_run(tmp_path: Path) -> None:
    store = seed_store(tmp_path / "kb.db", Analyzer("plain"))
    runs = [
        lexical_search(store, Analyzer("plain"), "refund days", Filters(), 10) for _ in range(3)
    ]
    assert runs[0] == runs[1] == runs[2]


def test_explanation_adds_up_to_fts5_bm25(tmp_path: Path) -> None:
    store = seed_store(tmp_path / "kb.db", Analyzer("plain"))
    hits = dict(lexical_search(store, Analyzer("plain"), "kettle refund", Filters(), 10))
    rows = store.passages.rows(hits)
    terms = sql_terms(store, Analyzer("plain"), "kettle refund", Filters())
    for pid, score in hits.items():
        explanation = explain_bm25(store, terms, rows[pid].row_id, "public")
        assert math.isclose(explanation.score, score, rel_tol=0, abs_tol=1e-9)
    a = explain_bm25(store, terms, rows["A"].row_id, "public")
    assert a.passages == 8 and a.length == 6 and math.isclose(a.avgdl, 58 / 8)
    assert [(t.term, t.tf, t.document_frequency) for t in a.terms] == [
        ("kettle", 2, 2),
        ("refund", 0, 3),
    ]


def test_query_words_split_codes_and_punctuation() -> None:
    assert " ".join(query_words("Which pump kit fits the PW-2200?")) == (
        "which pump kit fits the pw 2200"
    )
    assert query_words("NOT a code") == ["not", "a", "code"]


@pytest.mark.parametrize(
    "query",
    ["NOT a code", "kettle AND OR NEAR(refund)", '"unbalanced', "pk-2200*", "col:umn ^start", "(x"],
)
def test_operator_words_are_plain_words(tmp_path: Path, query: str) -> None:
    store = seed_store(tmp_path / "kb.db", Analyzer("plain"))
    hits = lexical_search(store, Analyzer("plain"), query, Filters(), 5)  # no FTS5 syntax error
    plain = lexical_search(store, Analyzer("plain"), " ".join(query_words(query)), Filters(), 5)
    assert hits == plain  # the same as the query's words with the operators' symbols dropped


def test_match_expression_quotes_every_term() -> None:
    assert match_expression(["not", "a", "code"]) == '"not" OR "a" OR "code"'


@pytest.mark.parametrize("query", ["", "   ", "?!... --", "x" * 2049])
def test_bad_queries_raise(tmp_path: Path, query: str) -> None:
    store = seed_store(tmp_path / "kb.db", Analyzer("plain"))
    with pytest.raises(QueryError):
        lexical_search(store, Analyzer("plain"), query, Filters(), 5)


def test_stemming_matches_inflections() -> None:
    stem = Analyzer("stem")
    assert stem.query_terms("refunds", ["en"]) == stem.query_terms("refund", ["en"])
    fr = stem.query_terms("remboursements", ["fr"])
    assert fr == stem.query_terms("remboursement", ["fr"])
    body = stem.body("Nous traitons les remboursements.", "fr")
    assert fr[0] in body.split()


def test_stemmed_search_finds_plural(tmp_path: Path) -> None:
    store = seed_store(tmp_path / "kb.db", Analyzer("stem"))
    hits = lexical_search(store, Analyzer("stem"), "refunds", Filters(), 10)
    assert {pid for pid, _ in hits} == {"C", "D", "E"}


@pytest.mark.parametrize(
    ("audience", "table"), [("public", "public_fts"), ("staff", "passages_fts")]
)
def test_filtered_query_is_driven_by_fts5(tmp_path: Path, audience: str, table: str) -> None:
    store = seed_store(tmp_path / "kb.db", Analyzer("plain"))
    filters = Filters(audience=audience, language="en", doc_ids=("A",))
    plan = " | ".join(store.fts.plan('"kettle"', filters, 5))
    assert f"SCAN {table} VIRTUAL TABLE INDEX" in plan
    assert plan.index(table) < plan.index("USING INTEGER PRIMARY KEY")


def test_worked_example_keeps_its_scores_with_vectors(tmp_path: Path) -> None:
    """The dense route's vectors live beside the FTS5 index without moving BM25 scores."""
    import numpy as np

    from kbsearch.retrieve.dense import DenseIndex

    store = Store(tmp_path / "kb.db", create=True)
    rng = np.random.default_rng(0)
    for key, text in SEED.items():
        doc = Document(doc_id=key, version="1", title=key, language="en", access="public")
        vector = rng.normal(size=(1, 8)).astype(np.float32)
        vector /= np.linalg.norm(vector)
        store.documents.write(doc, [Passage(key, key, "1", "", "text", text, 0)], [text], vector)
    hits = lexical_search(store, Analyzer("plain"), "kettle refund", Filters(), 10)
    assert [(p, round(s, 4)) for p, s in hits] == [
        ("A", 1.3808),
        ("B", 1.028),
        ("C", 0.4336),
        ("D", 0.4336),
        ("E", 0.4114),
    ]
    assert len(DenseIndex.load(store, 8).search(np.ones(8, np.float32), Filters(), 10)) == 8
