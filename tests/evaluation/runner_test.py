"""The runner with a fake search function, TREC files, compare, and the HTML report."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

import pytest

from kbsearch.errors import EvaluationError, QueryError
from kbsearch.evaluation.compare import compare_runs
from kbsearch.evaluation.questions import Question, QuestionSet, Relevant
from kbsearch.evaluation.report import render_report, write_report
from kbsearch.evaluation.runner import evaluate
from kbsearch.evaluation.trec import read_trec_run, write_trec_qrels, write_trec_run
from kbsearch.records import Filters, Hit


def make_hits(doc_ids: Sequence[str]) -> list[Hit]:
    return [Hit(i, f"{d}@v1#top", d, "1", "", 1.0 / i, d) for i, d in enumerate(doc_ids, 1)]


FILLER = [f"n{i}" for i in range(12)]


def ranked(rank: int | None, target: str = "x") -> list[str]:
    if rank is None:
        return FILLER
    return FILLER[: rank - 1] + [target] + FILLER[rank - 1 :]


QUESTIONS = QuestionSet(
    questions=(
        Question("a", "alpha", kind="answerable", relevant=(Relevant(doc_id="x"),)),
        Question("b", "beta", kind="answerable", relevant=(Relevant(doc_id="x"),)),
        Question("c", "gamma", kind="table", relevant=(Relevant(doc_id="x"),)),
        Question("d", "delta", kind="table", relevant=(Relevant(doc_id="x"),)),
        Question("e", "epsilon", kind="answerable", abstain=True),
    ),
    rule="document",
    format="test",
    source="fake",
)
RANKS = {"alpha": 1, "beta": 2, "gamma": 8, "delta": None, "epsilon": None}


class FakeSearch:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, str, Filters]] = []

    def __call__(self, text: str, n: int, route: str, filters: Filters) -> list[Hit]:
        self.calls.append((text, n, route, filters))
        shift = 1 if route == "dense" and RANKS[text] is not None else 0
        rank = RANKS[text]
        return make_hits(ranked(None if rank is None else rank + shift)[:n])


def test_evaluate_routes_metrics_kinds_and_missed() -> None:
    search = FakeSearch()
    result = evaluate(search, QUESTIONS, ["lexical", "dense"], k=5, depth=20, warmup=2)
    lexical = result.routes["lexical"]
    assert lexical.evaluation.means["hit@5"] == 0.5
    assert lexical.evaluation.no_relevant_queries == 1
    assert lexical.evaluation.no_relevant_with_results == 1
    assert lexical.evaluation.means["MRR@10"] == pytest.approx((1 + 0.5 + 1 / 8) / 4)
    assert result.routes["dense"].evaluation.means["MRR@10"] == pytest.approx(
        (0.5 + 1 / 3 + 1 / 9) / 4
    )
    assert {m.qid for m in lexical.missed} == {"c", "d"}
    assert lexical.missed[0].top[0].passage_id == "n0@v1#top"
    assert dict(lexical.first_relevant) == {"a": 1, "b": 2, "c": 8, "d": None}
    assert lexical.per_kind["answerable"].means["hit@5"] == 1.0
    assert lexical.per_kind["answerable"].no_relevant_queries == 1
    assert lexical.per_kind["table"].means["hit@5"] == 0.0
    # 2 warm-up + 5 timed calls per route; the timed ones only are in the latency
    assert len(search.calls) == 14
    assert lexical.latency.count == 5 and lexical.latency.p50_ms >= 0
    assert all(n == 20 for _, n, _, _ in search.calls)
    assert "R@100" not in result.measures and "R@5" in result.measures
    data = result.to_dict()
    assert data["routes"]["lexical"]["means"]["hit@5"] == 0.5  # type: ignore[index]


def test_filters_from_questions() -> None:
    questions = QuestionSet(
        questions=(
            Question("p", "public q", as_of=date(2025, 3, 1), language="fr", public_ok=True),
            Question("s", "staff q", public_ok=False),
        ),
        rule="section",
        format="policy",
        access_aware=True,
    )
    seen: dict[str, Filters] = {}

    def search(text: str, n: int, route: str, filters: Filters) -> list[Hit]:
        seen[text] = filters
        return []

    evaluate(search, questions, ["lexical"], warmup=0)
    assert seen["public q"] == Filters(audience="public", as_of=date(2025, 3, 1))
    assert seen["staff q"] == Filters(audience="staff")
    evaluate(search, questions, ["lexical"], warmup=0, use_language=True)
    assert seen["public q"].language == "fr"
    # a set without access information is searched as staff (sees everything)
    evaluate(search, QUESTIONS, ["lexical"], warmup=0)
    assert seen["alpha"].audience == "staff"


def test_refused_query_counts_as_zero() -> None:
    def search(text: str, n: int, route: str, filters: Filters) -> list[Hit]:
        if text == "alpha":
            raise QueryError("only punctuation")
        return make_hits(ranked(1)[:n])

    result = evaluate(search, QUESTIONS, ["lexical"], k=5)
    assert result.routes["lexical"].refused == ("a",)
    assert result.routes["lexical"].evaluation.per_query["a"]["hit@5"] == 0.0
    assert result.routes["lexical"].evaluation.means["hit@5"] == 0.75


def test_a_route_listed_twice_is_refused() -> None:
    def search(text: str, n: int, route: str, filters: Filters) -> list[Hit]:
        return make_hits(ranked(1)[:n])

    with pytest.raises(EvaluationError, match="route 'hybrid' is listed twice"):
        evaluate(search, QUESTIONS, ["hybrid", "lexical", "hybrid"])


def test_trec_run_round_trip_keeps_returned_order(tmp_path: Path) -> None:
    run = {"q1": ["b", "a", "c"], "q2": []}
    path = write_trec_run(tmp_path / "r.trec", run, "tag")
    lines = path.read_text().splitlines()
    assert lines[0] == "q1 Q0 b 1 3 tag"
    scores = [float(line.split()[4]) for line in lines]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 3
    assert read_trec_run(path) == {"q1": ["b", "a", "c"]}
    with pytest.raises(EvaluationError):
        write_trec_run(tmp_path / "bad.trec", {"q": ["a", "a"]}, "tag")
    spaced = write_trec_run(tmp_path / "spaced.trec", {"q": ["a b"]}, "tag")  # issue 22
    assert read_trec_run(spaced) == {"q": ["a b"]}
    qrels = write_trec_qrels(tmp_path / "qrels.txt", {"q1": {"a": 2}})
    assert qrels.read_text() == "q1 0 a 2\n"


def test_trec_files_check_with_ir_measures(tmp_path: Path) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    result = evaluate(FakeSearch(), QUESTIONS, ["lexical"], k=5, depth=20)
    run_path = write_trec_run(tmp_path / "lexical.trec", result.routes["lexical"].run, "t")
    qrels_path = write_trec_qrels(tmp_path / "qrels.txt", result.qrels)
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    agg = ir_measures.calc_aggregate([ir_measures.RR @ 10, ir_measures.nDCG @ 10], qrels, run)
    means = result.routes["lexical"].evaluation.means
    assert agg[ir_measures.RR @ 10] == pytest.approx(means["MRR@10"], abs=1e-9)
    assert agg[ir_measures.nDCG @ 10] == pytest.approx(means["nDCG@10"], abs=1e-9)


def test_compare_runs_verdicts() -> None:
    qrels = {f"q{i}": {"x": 1} for i in range(40)}
    good = {q: ranked(1) for q in qrels}
    bad = {q: ranked(6) for q in qrels}
    comparison = compare_runs(
        qrels, {"base": bad, "new": good, "same": bad}, ["MRR@10"], resamples=500
    )
    by_other = {c.other: c for c in comparison.comparisons}
    assert by_other["new"].verdict == "gain" and by_other["new"].test.significant
    assert by_other["new"].wins_losses_ties == (40, 0, 0)
    assert by_other["same"].verdict == "no significant difference"
    assert by_other["same"].test.p_value == 1.0
    with pytest.raises(EvaluationError):
        compare_runs(qrels, {"only": good}, ["MRR@10"])


def test_report_html_has_tables_and_charts(tmp_path: Path) -> None:
    result = evaluate(FakeSearch(), QUESTIONS, ["lexical", "dense"], k=5, depth=20)
    html = render_report(result)
    assert html.count("<svg") == 2  # per-kind bars and first-relevant ranks
    assert "hit@5 per kind and route" in html
    assert "Rank of the first relevant result" in html
    assert "gamma" in html and "n0@v1#top" in html  # a missed question and its top result
    assert "<h3>lexical</h3>" in html  # per-kind table
    path = write_report(tmp_path / "out" / "report.html", result)
    written = path.read_text(encoding="utf-8")
    assert written.startswith("<!doctype html>") and written.count("<svg") == 2
    assert "<script" not in written and "src=" not in written  # self-contained
