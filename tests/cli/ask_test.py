"""``kbsearch ask`` and the confidence in ``kbsearch search``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import cli_indexed_db

from kbsearch.cli import cli


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    return cli_indexed_db(tmp_path, monkeypatch)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_ask_prints_a_cited_answer(db: str) -> None:
    code, out = run(
        "ask",
        "is a lost parcel refunded",
        "--db",
        db,
        "--as-of",
        "2026-06-01",
        "--min-confidence",
        "0",
    )
    assert code == 0, out
    assert "A lost parcel is refunded in full." in out
    assert "Source: Delivery > Lost parcel (version 1, in force from 2025-01-01)" in out
    # the file as a search hit shows it, not the absolute path on this machine
    assert "File: delivery.md" in out and str(Path(db).parent) not in out


def test_ask_abstains_with_nearest_passages(db: str) -> None:
    code, out = run("ask", "student discount", "--db", db, "--min-confidence", "1", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["answer"] == "The documents don't say" and not data["answerable"]
    assert data["nearest"] and data["citation"] is None


def test_search_json_carries_the_decision(db: str) -> None:
    code, out = run("search", "lost parcel", "--db", db, "--json", "--min-confidence", "0.5")
    assert code == 0, out
    data = json.loads(out)
    assert isinstance(data["answerable"], bool) and 0 <= data["confidence"] <= 1
    assert data["min_confidence"] == 0.5 and data["hits"]


def test_bad_min_confidence_is_a_usage_error(db: str) -> None:
    for bad in ("1.5", "nan", "-inf"):
        code, _ = run("ask", "x", "--db", db, "--min-confidence", bad)
        assert code == 2, bad


def test_eval_abstention_table_and_report_chart(db: str, tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    rows = [
        {"id": "q1", "question": "is a lost parcel refunded", "kind": "answerable",
         "language": "en", "as_of": "2026-06-01", "public_ok": True, "abstain": False,
         "relevant_chunks": ["delivery@v1#lost-parcel"]},
        {"id": "q2", "question": "do you sell hot tubs", "kind": "answerable", "language": "en",
         "as_of": "2026-06-01", "public_ok": True, "abstain": True, "relevant_chunks": []},
        {"id": "q3", "question": "x" * 3000, "kind": "answerable", "language": "en",
         "as_of": "2026-06-01", "public_ok": True, "abstain": True, "relevant_chunks": []},
    ]  # fmt: skip
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = tmp_path / "report.html"
    code, out = run("eval", str(questions), "--db", db, "--routes", "hybrid", "--abstention",
                    "--report", str(report))  # fmt: skip
    assert code == 0, out
    assert "answer or abstain" in out and "kind=answerable" in out
    assert "refused 1 question(s), left out: q3" in out  # one bad question stops nothing
    html = report.read_text()
    assert "Answer or abstain" in html and "Risk-coverage" in html
    # the model's minimum (0.498150829) to 2 decimals, as search and ask show every confidence
    assert "(minimum confidence 0.50)" in out and "(minimum confidence 0.50)" in html
    assert "0.498" not in out + html


def test_ask_shares_search_color_option(db: str) -> None:
    args = ["ask", "is a lost parcel refunded", "--db", db, "--as-of", "2026-06-01",
            "--min-confidence", "0"]  # fmt: skip
    code, plain = run(*args, "--no-color")
    assert code == 0, plain
    assert "A lost parcel is refunded in full." in plain and "\x1b[" not in plain
    code, bold = run(*args, "--color")
    assert code == 0, bold
    assert "\x1b[1mlost parcel\x1b[0m" in bold or "\x1b[1mlost\x1b[0m" in bold, repr(bold)


def test_ask_on_an_index_with_nothing_public_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every document staff-only (no access label): ``ask`` said only "The documents don't
    say (confidence 0.00)"; it now says why, as ``search`` does, counting nothing hidden."""
    from support import FILES, FakeEmbedder, write_files

    from kbsearch import embedders

    monkeypatch.setitem(embedders.EMBEDDERS, "fake", (lambda arg, threads: FakeEmbedder(), "test"))
    files = {name: text for name, text in FILES.items() if name != "inventory.csv"}
    docs = write_files(tmp_path / "docs", files)
    db = str(tmp_path / "kb.db")
    runner = CliRunner()
    indexed = runner.invoke(cli, ["index", str(docs), "--db", db, "--embedder", "fake"])
    assert indexed.exit_code == 0, indexed.output
    result = runner.invoke(cli, ["ask", "is a lost parcel refunded", "--db", db])
    assert result.exit_code == 0, result.output
    assert "The documents don't say" in result.stdout
    err = result.stderr
    assert "no passage is visible to the public audience" in err
    assert "--audience staff" in err and "--default-access public" in err
    assert not any(ch.isdigit() for ch in err), err  # no count of the hidden passages
    staff = runner.invoke(cli, ["ask", "is a lost parcel refunded", "--db", db,
                                "--audience", "staff", "--min-confidence", "0"])  # fmt: skip
    assert "A lost parcel is refunded in full." in staff.stdout and staff.stderr == ""


def test_eval_answers_judges_each_verdict(db: str, tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    rows = [
        {"id": "q1", "question": "is a lost parcel refunded", "kind": "answerable",
         "language": "en", "as_of": "2026-06-01", "public_ok": True, "abstain": False,
         "keys": ["refunded in full"], "relevant_chunks": ["delivery@v1#lost-parcel"]},
        {"id": "q2", "question": "do you sell hot tubs", "kind": "answerable", "language": "en",
         "as_of": "2026-06-01", "public_ok": True, "abstain": True, "relevant_chunks": []},
    ]  # fmt: skip
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    dump = tmp_path / "answers.jsonl"
    code, out = run("eval", str(questions), "--db", db, "--routes", "hybrid", "--answers",
                    "--answers-dump", str(dump))  # fmt: skip
    assert code == 0, out
    assert "answers: outcomes" in out and "answers per kind" in out
    # the outcomes name what is missed: the gold (a gold answer string, or all the keys)
    assert "answered, misses the gold" in out and "them" not in out
    assert "gold: a gold answer string, or all of the question's keys" in " ".join(out.split())
    answers = {r["qid"]: r for r in map(json.loads, dump.read_text().splitlines())}
    assert set(answers) == {"q1", "q2"}
    # q1's shown answer holds its key whenever it is shown (answered or uncertain)
    if answers["q1"]["verdict"] != "dont_say":
        assert "refunded in full" in answers["q1"]["answer"]
    # the same answers at other cuts: at 0 every question with a span is answered, and the
    # default band's row gives the default verdicts' counts
    assert "answers by minimum confidence" in out and "default (answered from)" in out
    # its last two columns are said: precision leaves the unanswerable answered out
    said = " ".join(out.split())
    assert "right share: right over every answerable question" in said
    assert "precision: right over the answerable answered (the unanswerable" in said
    code, out = run("eval", str(questions), "--db", db, "--routes", "hybrid", "--answers",
                    "--json")  # fmt: skip
    assert code == 0, out
    shown = json.loads(out)  # one document: the routes' figures and the answers'
    assert "hybrid" in json.dumps(shown) and "answers" in shown
    cuts = {row["min_confidence"]: row for row in shown["by_min_confidence"]}
    default = next(row for row in cuts.values() if row["band"] == "default (answered from)")
    verdicts = shown["answers"]["all"]["all"]["verdicts"]
    assert default["answered"] == verdicts["answered"]
    assert cuts[0.05]["answered"] >= default["answered"]
