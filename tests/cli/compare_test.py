"""`kbsearch compare` through click's test runner: TREC runs written by hand."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kbsearch.cli import cli


def write_run(path: Path, ranks: dict[str, int]) -> Path:
    lines = []
    for qid, rank in ranks.items():
        docs = [f"n{i}" for i in range(rank - 1)] + ["x"]
        lines += [f"{qid} Q0 {d} {r} {10 - r} t" for r, d in enumerate(docs, 1)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_compare_two_runs(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 x 1\n" for i in range(30)))
    base = write_run(tmp_path / "base.trec", {f"q{i}": 5 for i in range(30)})
    better = write_run(tmp_path / "better.trec", {f"q{i}": 1 for i in range(30)})
    same = write_run(tmp_path / "same.trec", {f"q{i}": 5 for i in range(30)})
    args = [str(base), str(better), str(same), "--qrels", str(qrels), "--resamples", "500"]
    result = CliRunner().invoke(cli, ["compare", *args, "--measure", "MRR@10"])
    assert result.exit_code == 0, result.output
    assert "randomization" in result.output and "500" in result.output
    assert "significant gain" in result.output
    assert "not significant" in result.output
    data = json.loads(
        CliRunner().invoke(cli, ["compare", *args, "--json", "--test", "bootstrap"]).stdout
    )
    verdicts = {
        (c["other"], c["measure"]): (c["verdict"], c["p_value"]) for c in data["comparisons"]
    }
    assert verdicts[("better", "MRR@10")][0] == "gain"
    assert verdicts[("same", "nDCG@10")] == ("no significant difference", 1.0)
    assert data["means"]["better"]["MRR@10"] == 1.0 and data["means"]["base"]["MRR@10"] == 0.2


def test_compare_needs_judgements_and_two_runs(tmp_path: Path) -> None:
    run = write_run(tmp_path / "a.trec", {"q": 1})
    assert CliRunner().invoke(cli, ["compare", str(run), str(run)]).exit_code == 2
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q 0 x 1\n")
    assert CliRunner().invoke(cli, ["compare", str(run), "--qrels", str(qrels)]).exit_code == 2
    dup = tmp_path / "dup.trec"
    dup.write_text("q Q0 x 1 2 t\nq Q0 x 2 1 t\n")
    result = CliRunner().invoke(cli, ["compare", str(run), str(dup), "--qrels", str(qrels)])
    assert result.exit_code == 1 and "twice" in result.output
