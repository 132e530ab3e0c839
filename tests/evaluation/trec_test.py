"""TREC runs and qrels: ids with whitespace (passage ids made from file names such as
``return policy.md``) are written escaped and read back as they were (issue 22)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbsearch.errors import EvaluationError
from kbsearch.evaluation.formats import read_trec_qrels
from kbsearch.evaluation.trec import (
    escape_id,
    read_trec_run,
    unescape_id,
    write_trec_qrels,
    write_trec_run,
)

IDS = ["return policy@v1#refunds", "tab\there", "50% off@v1#top", "plain@v1#a", "é\u00a0nbsp"]


def test_escaping_replaces_whitespace_and_percent_only() -> None:
    assert escape_id("return policy@v1#refunds") == "return%20policy@v1#refunds"
    assert escape_id("50% off") == "50%25%20off"
    assert escape_id("plain@v1#a") == "plain@v1#a"
    assert escape_id("é\u00a0x") == "é%C2%A0x"  # a no-break space is whitespace too
    for value in IDS:
        assert unescape_id(escape_id(value)) == value
        assert not any(ch.isspace() for ch in escape_id(value))


def test_a_run_and_qrels_with_spaces_in_ids_round_trip(tmp_path: Path) -> None:
    run = {"q 1": IDS, "q2": IDS[::-1]}
    path = write_trec_run(tmp_path / "run.trec", run, "kbsearch-lexical")
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first == "q%201 Q0 return%20policy@v1#refunds 1 5 kbsearch-lexical"
    assert all(len(line.split()) == 6 for line in path.read_text().splitlines())
    assert read_trec_run(path) == run
    qrels = {"q 1": {"return policy@v1#refunds": 2, "50% off@v1#top": 1}}
    assert read_trec_qrels(write_trec_qrels(tmp_path / "qrels.txt", qrels)) == qrels


def test_the_tag_still_refuses_whitespace(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match="tag"):
        write_trec_run(tmp_path / "run.trec", {"q": ["a"]}, "two words")


@pytest.mark.parametrize("score", ["nan", "inf", "-inf", "1e999"])
def test_a_run_score_that_is_not_finite_is_refused(tmp_path: Path, score: str) -> None:
    """A NaN sorts nowhere: the run's order was noise, and compare measured it."""
    path = tmp_path / "run.trec"
    path.write_text(f"q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 {score} a\n", encoding="utf-8")
    with pytest.raises(EvaluationError, match=":2: the score is not a finite number"):
        read_trec_run(path)


def test_a_run_or_qrels_file_not_in_utf8_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    path.write_bytes("q1 Q0 é 1 2.0 a\n".encode("latin-1"))
    with pytest.raises(EvaluationError, match="not UTF-8 text"):
        read_trec_run(path)
    path.write_bytes("q1 0 é 1\n".encode("latin-1"))
    with pytest.raises(EvaluationError, match="not UTF-8 text"):
        read_trec_qrels(path)
