"""Metrics: equal to ir-measures on random data, hand-computed cases, edge cases."""

from __future__ import annotations

import math

import ir_measures
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbsearch.errors import EvaluationError
from kbsearch.evaluation.metrics import evaluate_run, parse_measure, query_scores

OURS_TO_IRM = {
    "hit@1": "Success@1",
    "hit@5": "Success@5",
    "R@3": "R@3",
    "R@10": "R@10",
    "P@1": "P@1",
    "P@5": "P@5",
    "MRR@3": "RR@3",
    "MRR@10": "RR@10",
    "nDCG@3": "nDCG@3",
    "nDCG@10": "nDCG@10",
    "AP@5": "AP@5",
    "AP": "AP",
}

DOCS = [f"d{i}" for i in range(15)]


@st.composite
def qrels_and_run(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[str]] = {}
    for q in range(draw(st.integers(1, 6))):
        qid = f"q{q}"
        judged = draw(st.dictionaries(st.sampled_from(DOCS), st.integers(0, 3), max_size=8))
        if judged or draw(st.booleans()):
            qrels[qid] = judged
        if draw(st.booleans()) or not judged:
            run[qid] = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=12))
    return qrels, run


@settings(max_examples=300, deadline=None)
@given(qrels_and_run())
def test_every_metric_equals_ir_measures(data: tuple[dict, dict]) -> None:
    qrels, run = data
    ours = evaluate_run(qrels, run, list(OURS_TO_IRM))
    # trec_eval sorts by score (ties by docid): hand it strictly decreasing scores.
    scored = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in run.items()}
    measures = [ir_measures.parse_measure(m) for m in OURS_TO_IRM.values()]
    oracle = {
        (m.query_id, str(m.measure)): m.value
        for m in ir_measures.iter_calc(measures, qrels, scored)
    }
    with_relevant = [q for q, j in qrels.items() if any(g >= 1 for g in j.values())]
    assert sorted(ours.per_query) == sorted(with_relevant)
    for qid in with_relevant:
        for name, irm in OURS_TO_IRM.items():
            # ir-measures skips queries absent from the run; kbsearch scores them 0
            expected = oracle.get((qid, irm), 0.0)
            assert ours.per_query[qid][name] == pytest.approx(expected, abs=1e-9), (qid, name)
    no_rel = [q for q in dict.fromkeys([*qrels, *run]) if q not in with_relevant]
    assert ours.no_relevant_queries == len(no_rel)
    assert ours.no_relevant_with_results == sum(1 for q in no_rel if run.get(q))
    for name in OURS_TO_IRM:
        if with_relevant:
            mean = sum(ours.per_query[q][name] for q in with_relevant) / len(with_relevant)
            assert ours.means[name] == pytest.approx(mean, abs=1e-12)
        else:
            assert math.isnan(ours.means[name])


def test_ties_are_judged_in_returned_order() -> None:
    """Hits "a" and "b" tie on score; the order the system returned decides, not the ids."""
    qrels = {"q": {"b": 1, "c": 2}}
    measures = ["MRR@10", "nDCG@10", "AP"]
    a_first = evaluate_run(qrels, {"q": ["a", "b", "c"]}, measures).per_query["q"]
    b_first = evaluate_run(qrels, {"q": ["b", "a", "c"]}, measures).per_query["q"]
    assert a_first["MRR@10"] == 0.5
    assert b_first["MRR@10"] == 1.0
    assert a_first["nDCG@10"] < b_first["nDCG@10"]
    # the oracle agrees once given rank-derived (strictly decreasing) scores
    for order, ours in ((["a", "b", "c"], a_first), (["b", "a", "c"], b_first)):
        scored = {"q": {d: float(3 - i) for i, d in enumerate(order)}}
        parsed = [ir_measures.parse_measure(m) for m in ("RR@10", "nDCG@10", "AP")]
        values = {str(m.measure): m.value for m in ir_measures.iter_calc(parsed, qrels, scored)}
        assert values["RR@10"] == pytest.approx(ours["MRR@10"], abs=1e-12)
        assert values["nDCG@10"] == pytest.approx(ours["nDCG@10"], abs=1e-12)
        assert values["AP"] == pytest.approx(ours["AP"], abs=1e-12)


@pytest.mark.parametrize(
    ("rank", "mrr", "ndcg"), [(5, 0.2, 0.386853), (1, 1.0, 1.0), (2, 0.5, 0.630930)]
)
def test_tutorial_single_query(rank: int, mrr: float, ndcg: float) -> None:
    cards = [f"card-{i:02d}" for i in range(1, 17)]
    relevant = "card-16"
    others = [c for c in cards if c != relevant]
    ranked = others[: rank - 1] + [relevant] + others[rank - 1 :]
    scores = query_scores(
        {relevant: 1}, ranked, [parse_measure(m) for m in ("R@5", "MRR@10", "nDCG@10")]
    )
    assert scores["R@5"] == 1.0
    assert scores["MRR@10"] == pytest.approx(mrr, abs=1e-12)
    assert scores["nDCG@10"] == pytest.approx(ndcg, abs=5e-7)


def test_hit_at_5_over_four_questions_and_one_without_relevant() -> None:
    qrels = {"a": {"x": 1}, "b": {"x": 1}, "c": {"x": 1}, "d": {"x": 1}, "e": {}}
    filler = [f"n{i}" for i in range(10)]

    def at(rank: int) -> list[str]:
        return filler[: rank - 1] + ["x"] + filler[rank - 1 :]

    run = {"a": at(1), "b": at(2), "c": at(8), "d": filler, "e": filler[:3]}
    result = evaluate_run(qrels, run, ["hit@5"])
    assert result.means["hit@5"] == 0.5
    assert result.evaluated == 4
    assert result.no_relevant_queries == 1
    assert result.no_relevant_with_results == 1


def test_query_without_results_counts_as_zero() -> None:
    qrels = {"a": {"x": 1}, "b": {"y": 2}}
    measures = ["hit@5", "R@5", "P@5", "MRR@10", "nDCG@10", "AP"]
    result = evaluate_run(qrels, {"a": ["x"], "b": []}, measures)
    assert result.evaluated == 2
    assert all(result.per_query["b"][m] == 0.0 for m in measures)
    assert result.means["MRR@10"] == 0.5
    # absent from the run altogether: same thing
    assert evaluate_run(qrels, {"a": ["x"]}, measures).means["MRR@10"] == 0.5


def test_duplicate_id_in_run_is_an_error() -> None:
    with pytest.raises(EvaluationError, match="twice"):
        evaluate_run({"q": {"x": 1}}, {"q": ["x", "y", "x"]}, ["R@10"])


def test_ndcg_ideal_comes_from_qrels_not_from_the_run() -> None:
    # two relevant docs in the qrels, only one retrieved (at rank 1): nDCG < 1
    scores = query_scores({"x": 1, "y": 1}, ["x"], [parse_measure("nDCG@10")])
    assert scores["nDCG@10"] == pytest.approx(1 / (1 + 1 / math.log2(3)))


@pytest.mark.parametrize("name", ["nDCG", "foo@3", "R@0", "P"])
def test_bad_measure_names(name: str) -> None:
    with pytest.raises(EvaluationError):
        parse_measure(name)


def test_measure_aliases() -> None:
    assert parse_measure("Recall@5").name == "R@5"
    assert parse_measure("RR@10").name == "MRR@10"
    assert parse_measure("success@3").name == "hit@3"
    assert parse_measure("AP").name == "AP"
