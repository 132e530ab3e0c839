"""`kbsearch eval` and `bench` through click's test runner (lexical route only:
no embedding model is loaded)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import FIXTURES_ROOT, LengthReranker, cli_indexed_db

from kbsearch.cli import cli

FIXTURES = FIXTURES_ROOT / "eval"
LEXICAL = ["--routes", "lexical", "--embedder", "none", "--k", "2", "--depth", "5"]


def test_bench_indexes_then_evaluates_and_eval_reuses_the_index(tmp_path: Path) -> None:
    db, runs, report = tmp_path / "kb.db", tmp_path / "runs", tmp_path / "report.html"
    args = [str(FIXTURES / "beir"), "--db", str(db), *LEXICAL, "--json"]
    result = CliRunner().invoke(
        cli, ["bench", *args, "--run-dir", str(runs), "--report", str(report)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    lexical = data["routes"]["lexical"]
    assert lexical["evaluated"] == 2 and lexical["no_relevant_queries"] == 1
    assert 0.0 <= lexical["means"]["nDCG@10"] <= 1.0
    assert (runs / "lexical.trec").read_text().startswith("q1 Q0 d1 1 ")
    assert "q1 0 d1 2" in (runs / "qrels.txt").read_text()
    assert "<svg" in report.read_text(encoding="utf-8")
    # the same numbers from `eval` on the built index
    again = CliRunner().invoke(
        cli, ["eval", str(FIXTURES / "beir"), "--db", str(db), *LEXICAL, "--json"]
    )
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["routes"]["lexical"]["means"] == lexical["means"]
    # tables when not --json
    table = CliRunner().invoke(cli, ["eval", str(FIXTURES / "beir"), "--db", str(db), *LEXICAL])
    assert table.exit_code == 0 and "nDCG@10" in table.output and "p95 ms" in table.output


def test_eval_errors_are_one_line(tmp_path: Path) -> None:
    missing = CliRunner().invoke(
        cli, ["eval", str(FIXTURES / "beir"), "--db", str(tmp_path / "none.db"), *LEXICAL]
    )
    assert missing.exit_code == 1 and missing.output.startswith("error: ")
    assert missing.output.count("\n") == 1
    db = tmp_path / "kb.db"
    assert (
        CliRunner()
        .invoke(cli, ["bench", str(FIXTURES / "beir"), "--db", str(db), *LEXICAL])
        .exit_code
        == 0
    )
    kind = CliRunner().invoke(
        cli, ["eval", str(FIXTURES / "beir"), "--db", str(db), *LEXICAL, "--kind", "table"]
    )
    assert kind.exit_code == 1 and "no question of kind" in kind.output
    bad_route = CliRunner().invoke(
        cli, ["eval", str(FIXTURES / "beir"), "--db", str(db), "--routes", "sparse"]
    )
    assert bad_route.exit_code == 2


def test_bench_checks_its_search_options_before_indexing(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    args = ["bench", str(FIXTURES / "beir"), "--db", str(db), *LEXICAL, "--weights", "1,2"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "hybrid route only; route 'lexical'" in result.output
    assert not db.exists()  # nothing was indexed


def test_eval_shows_the_rerank_stage_gain_and_cost(
    tmp_path: Path, fake_reranker: LengthReranker
) -> None:
    """``ROUTE+rerank`` is ROUTE then the reranker: its own column, the gain over ROUTE, the
    latency it adds and the stage's reports (the fake reranker: no quality claim)."""
    db = tmp_path / "kb.db"
    beir = str(FIXTURES / "beir")
    assert CliRunner().invoke(cli, ["bench", beir, "--db", str(db), *LEXICAL]).exit_code == 0
    routes = ["--routes", "lexical,lexical+rerank", "--rerank", "fake"]
    options = [beir, "--db", str(db), "--embedder", "none", "--k", "2", "--depth", "5"]
    result = CliRunner().invoke(cli, ["eval", *options, *routes, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data["routes"]) == {"lexical", "lexical+rerank"}
    stage = data["rerank"]["lexical+rerank"]
    assert stage["reranker"] == "fake" and stage["stopped"] == 0
    assert stage["searches"] == 3 and stage["p50_ms"] >= 0  # the questions', not the warm-up
    questions = {text for text, _ in fake_reranker.pairs}
    assert len(questions) == 3  # every question of the fixture set (one of them has no qrels)
    table = CliRunner().invoke(cli, ["eval", *options, *routes, "--run-dir", str(tmp_path / "r")])
    assert table.exit_code == 0, table.output
    assert "the rerank stage: lexical+rerank against lexical" in table.output
    assert "the budget ran out on 0 of" in table.output
    assert (tmp_path / "r" / "lexical+rerank.trec").is_file()


@pytest.mark.parametrize(
    ("options", "code", "message"),
    [
        (["--routes", "lexical+rerank"], 2, "needs a reranker: add --rerank NAME"),
        (["--routes", "lexical", "--rerank", "fake"], 2, "--rerank applies to the routes"),
        (["--routes", "lexical+bm25"], 2, "each optionally with +rerank"),
        (["--routes", "hybrid,lexical,hybrid"], 2, "route 'hybrid' is listed twice"),
        (["--routes", "lexical+rerank,lexical+rerank", "--rerank", "fake"], 2, "listed twice"),
        (["--routes", "lexical+rerank", "--rerank", "nope"], 2, "unknown reranker"),
    ],
)
def test_eval_rerank_errors_before_any_work(
    tmp_path: Path, fake_reranker: LengthReranker, options: list[str], code: int, message: str
) -> None:
    db = tmp_path / "kb.db"
    args = ["bench", str(FIXTURES / "beir"), "--db", str(db), "--embedder", "none", *options]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == code and message in result.output, result.output
    assert not db.exists()  # checked before the corpus is indexed


def test_fusion_settings_without_route_hybrid_are_refused_before_indexing(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    args = ["bench", str(FIXTURES / "beir"), "--db", str(db), *LEXICAL, "--fusion", "convex"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "hybrid route only; route 'lexical'" in result.output
    assert result.output.count("\n") == 1 and not db.exists()


@pytest.mark.parametrize(
    "options",
    [
        ["--weights", "1,2"],
        ["--rrf-k", "30"],
        ["--weights", "1,2", "--fusion", "rrf"],
        ["--rrf-k", "10"],  # given at all: the default value too
        ["--weights", "1,1"],
    ],
)
def test_rrf_settings_without_route_hybrid_say_so_first(tmp_path: Path, options: list[str]) -> None:
    db = tmp_path / "kb.db"
    args = ["bench", str(FIXTURES / "beir"), "--db", str(db), "--routes", "lexical,dense"]
    result = CliRunner().invoke(cli, [*args, *options])
    # not "add --fusion rrf" first, then "hybrid route only" once it is added
    assert result.exit_code == 2 and "hybrid route only; route 'lexical'" in result.output
    assert "--fusion rrf" not in result.output and not db.exists()


def test_eval_k_sets_the_cutoffs_of_the_main_and_per_kind_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = cli_indexed_db(tmp_path, monkeypatch)
    rows = [
        {"id": "q1", "question": "is a lost parcel refunded", "kind": "answerable",
         "language": "en", "as_of": "2026-06-01", "public_ok": True,
         "relevant_chunks": ["delivery@v1#lost-parcel"]},
        {"id": "q2", "question": "how long to return items", "kind": "policy", "language": "en",
         "as_of": "2026-06-01", "public_ok": True,
         "relevant_chunks": ["returns@v2#return-window"]},
    ]  # fmt: skip
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["eval", str(questions), "--db", db, "--routes", "lexical", "--k", "3"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    main, _, kinds = result.output.partition("lexical per kind")
    assert kinds, result.output
    for table in (main, kinds):  # the same measures, cut at --k (R@5 is past it)
        assert "hit@3" in table and "R@3" in table and "P@3" in table, table
        assert not re.search(r"(?<![A-Za-z])R@(5|10)\b", table), table
    data = json.loads(CliRunner().invoke(cli, [*args, "--json"]).stdout)
    lexical = data["routes"]["lexical"]
    assert lexical["measures"] == ["hit@3", "R@3", "R@100", "P@3", "MRR@10", "nDCG@10", "AP"]
    assert lexical["per_kind"]["policy"]["measures"] == lexical["measures"]


def test_runs_with_spaces_in_ids_are_written_and_compared(tmp_path: Path) -> None:
    """issue 22: `eval --run-dir` refused passage ids made from file names with spaces."""
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    corpus = [
        {"_id": "return policy", "title": "Return policy", "text": "Return items in 30 days."},
        {"_id": "shipping", "title": "Shipping", "text": "Orders ship in 2 days."},
    ]
    (beir / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    (beir / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "return items"}) + "\n")
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\treturn policy\t1\n")
    runs = tmp_path / "runs"
    args = ["bench", str(beir), "--db", str(tmp_path / "kb.db"), *LEXICAL, "--run-dir", str(runs)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "return%20policy" in (runs / "lexical.trec").read_text()
    assert "q1 0 return%20policy 1" in (runs / "qrels.txt").read_text()
    run, again = runs / "lexical.trec", tmp_path / "again.trec"
    again.write_text(run.read_text())
    compared = CliRunner().invoke(
        cli, ["compare", str(run), str(again), "--qrels", str(runs / "qrels.txt"), "--json"]
    )
    assert compared.exit_code == 0, compared.output
    assert json.loads(compared.stdout)["means"]["lexical"]["MRR@10"] == 1.0


def test_an_output_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    """A report, run folder or answers dump path that is a folder, under a file, or in a
    link loop was a traceback (IsADirectoryError, NotADirectoryError, FileExistsError)."""
    db = tmp_path / "kb.db"
    args = [str(FIXTURES / "beir"), "--db", str(db), *LEXICAL]
    assert CliRunner().invoke(cli, ["bench", *args]).exit_code == 0
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    for option, path in [
        ("--run-dir", afile / "runs"),
        ("--report", afile / "report.html"),
        ("--report", tmp_path / "loop1" / "report.html"),
    ]:
        result = CliRunner().invoke(cli, ["eval", *args, option, str(path)])
        assert result.exit_code == 1, result.output
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith(f"error: cannot write {path}"), line


def test_eval_answers_checks_the_gold_and_the_vectors_before_evaluating(tmp_path: Path) -> None:
    """A bad gold answers file, or an index without vectors, failed only after the routes'
    whole evaluation (minutes on PIAF), its tables printed."""
    db = tmp_path / "kb.db"
    args = [str(FIXTURES / "beir"), "--db", str(db), *LEXICAL]
    assert CliRunner().invoke(cli, ["bench", *args]).exit_code == 0
    gold = tmp_path / "answers.jsonl"
    gold.write_text('{"_id": "q1"}\n', encoding="utf-8")
    bad = CliRunner().invoke(cli, ["eval", *args, "--answers", "--gold-answers", str(gold)])
    assert bad.exit_code == 1 and "nDCG@10" not in bad.output
    assert bad.stderr.strip().splitlines() == [f"error: {gold}:1: expected {{'_id', 'answers'}}"]
    gold.write_text('{"_id": "q1", "answers": ["thirty days"]}\n', encoding="utf-8")
    lexical = CliRunner().invoke(cli, ["eval", *args, "--answers", "--gold-answers", str(gold)])
    assert lexical.exit_code == 1 and "nDCG@10" not in lexical.output
    (line,) = lexical.stderr.strip().splitlines()
    assert line.startswith("error: this index has no vectors (built with --embedder none)")
