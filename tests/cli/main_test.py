"""The command line: a thin layer whose errors are one line and a non-zero exit."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from support import FILES, write_files

from kbsearch.cli import cli


@pytest.fixture
def db(tmp_path: Path) -> str:
    docs = write_files(tmp_path / "docs", FILES)
    path = str(tmp_path / "kb.db")
    result = CliRunner().invoke(
        cli,
        [
            "index",
            str(docs),
            "--db",
            path,
            "--inventory",
            str(docs / "inventory.csv"),
            "--embedder",
            "none",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "added 4, updated 0, unchanged 0, removed 0, failed 0" in result.output
    return path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_search_json_shape(db: str) -> None:
    code, out, _ = run(
        "search", "lost parcel", "--db", db, "--route", "lexical", "--json", "--as-of", "2026-06-01"
    )
    assert code == 0
    payload = json.loads(out)
    assert set(payload) == {
        "query",
        "route",
        "k",
        "answerable",
        "confidence",
        "min_confidence",
        "uncertain_from",
        "verdict",
        "hits",
    }
    assert payload["answerable"] is None  # a lexical-only index has no confidence
    hit = payload["hits"][0]
    assert {"rank", "passage_id", "doc_id", "version", "section", "score", "text"} <= set(hit)
    assert hit["passage_id"] == "delivery@v1#lost-parcel" and hit["rank"] == 1


def test_search_readable_list(db: str) -> None:
    code, out, _ = run("search", "lost parcel", "--db", db, "--route", "lexical")
    assert code == 0 and " 1." in out and "delivery@v1#lost-parcel" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "", "--route", "lexical"], "empty"),
        (["search", "?!?", "--route", "lexical"], "no letter"),
        (["search", "x" * 10000, "--route", "lexical"], "exceeds"),
        (["show", "goodwill@v1#goodwill-amount"], "no passage"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(db: str, args: list[str], message: str) -> None:
    code, out, err = run(*args[:2], "--db", db, *args[2:])
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err
    assert "25 euros" not in out + err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--k", "0"], "'--k': 0 is not in the range 1<=x<=100000"),
        (["--depth", "0"], "'--depth': 0 is not in the range"),
        (["--rrf-k", "-1"], "'--rrf-k': RRF k must be a finite number >= 0"),
        (["--rrf-k", "nan"], "'--rrf-k': RRF k must be a finite number >= 0"),
        (["--as-of", "01/06/2026"], "'--as-of': malformed date"),
        (["--as-of", "2026-13-01"], "'--as-of': invalid date"),
        (["--audience", "admin"], "'--audience': 'admin' is not one of 'public', 'staff'"),
        (["--fusion", "convex:alpha=2"], "alpha must be a finite number from 0 to 1, got '2'"),
        (["--fusion", "convex:alpha=nan"], "alpha must be a finite number from 0 to 1"),
        (["--fusion", "convex:alpha=.3,alpha=.5"], "parameter alpha is given twice"),
        (["--fusion", "convex:alpha=.3", "--route", "lexical"], "hybrid route only"),
        (["--rrf-k", "30", "--route", "dense"], "hybrid route only; route 'dense'"),
        (["--weights", "1,2", "--route", "lexical"], "hybrid route only; route 'lexical'"),
        (["--weights", "1,2", "--fusion", "convex", "--route", "hybrid"], "add --fusion rrf"),
        # given at all, at their default value too
        (["--rrf-k", "10", "--route", "lexical"], "hybrid route only; route 'lexical'"),
        (["--weights", "1,1", "--route", "dense"], "hybrid route only; route 'dense'"),
        (["--fusion", "learned", "--route", "lexical"], "hybrid route only"),
        (["--rrf-k", "10", "--route", "hybrid"], "add --fusion rrf"),
        (["--weights", "1,1", "--route", "hybrid"], "add --fusion rrf"),
    ],
)
@pytest.mark.parametrize("command", ["search", "explain"])
def test_a_bad_option_value_is_a_one_line_usage_error(
    db: str, command: str, args: list[str], message: str
) -> None:
    """Whether click or the library finds it, a bad option value (or options that cannot go
    together) exits 2 with one line naming it, before the index is searched."""
    passage = ["delivery@v1#lost-parcel"] if command == "explain" else []
    code, out, err = run(command, "parcel", *passage, "--db", db, *args)
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err, err
    assert err.rstrip().endswith(f" {command} --help')"), err  # CliRunner's name is "cli"


def test_a_usage_error_of_a_nested_command_is_one_line() -> None:
    code, _, err = run("model", "convert", "--no-such-option")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: No such option '--no-such-option' (see '")
    assert err.endswith(" model convert --help')\n")
    code, out, err = run("model")  # a group without its subcommand shows its help
    assert code == 2 and "Commands:" in out + err


def test_missing_database_says_how_to_create_it(tmp_path: Path) -> None:
    code, _, err = run("search", "x", "--db", str(tmp_path / "none.db"))
    assert code == 1 and "kbsearch index" in err


def test_nothing_damaged_by_bad_input(db: str) -> None:
    before = run("search", "parcel", "--db", db, "--route", "lexical", "--json")[1]
    run("search", "NOT AND OR", "--db", db, "--route", "lexical", "--k", "0")
    run("index", "/definitely/missing", "--db", db)
    assert run("search", "parcel", "--db", db, "--route", "lexical", "--json")[1] == before


def test_unreadable_file_fails_others_indexed(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "d", {"a.md": "# A\n\n## One\n\nSome words.\n"})
    (docs / "b.pdf").write_bytes(b"not a pdf at all")
    code, out, err = run("index", str(docs), "--db", str(tmp_path / "kb.db"), "--embedder", "none")
    assert code == 1 and "added 1" in out and "failed 1" in out and "b.pdf" in err


def test_inventory_show_stats_backup(db: str, tmp_path: Path) -> None:
    code, out, _ = run("inventory", "--db", db)
    assert code == 0 and "returns@v2" in out and "goodwill@v1  staff" in out
    code, out, _ = run("show", "delivery@v1#lost-parcel", "--db", db)
    assert code == 0 and "refunded in full" in out
    code, out, _ = run("stats", "--db", db, "--json")
    assert code == 0 and json.loads(out)["documents"] == 4
    code, out, _ = run("backup", str(tmp_path / "copy.db"), "--db", db)
    assert code == 0 and (tmp_path / "copy.db").exists()


def test_explain_lexical_only_index(db: str) -> None:
    code, out, _ = run("explain", "lost parcel", "delivery@v1#lost-parcel", "--db", db, "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["lexical"]["rank"] == 1
    assert abs(payload["bm25"]["score"] - payload["lexical"]["score"]) < 1e-9


def test_lexical_explain_without_vectors_and_explain_agree(db: str) -> None:
    """`search --route lexical --explain` works on an index without vectors, and `explain`
    with the same k and depth gives each hit the rank `search` gave it (k > depth)."""
    options = [
        "--db",
        db,
        "--route",
        "lexical",
        "--k",
        "4",
        "--depth",
        "1",
        "--as-of",
        "2026-06-01",
    ]
    code, out, err = run("search", "parcel days items", *options, "--explain", "--json")
    assert code == 0, err
    hits = json.loads(out)["hits"]
    assert len(hits) > 1
    for hit in hits:
        code, out, err = run("explain", "parcel days items", hit["passage_id"], *options, "--json")
        assert code == 0, err
        assert json.loads(out)["lexical"]["rank"] == hit["rank"]


@pytest.mark.parametrize("command", ["search", "explain"])
def test_a_language_the_index_lacks_is_a_usage_error_listing_the_choices(
    db: str, command: str
) -> None:
    """``--lang de`` on an index without German: a usage error (exit 2, one line), as
    ``--lang zz`` is (docs/reference/errors.md)."""
    passage = ["delivery@v1#lost-parcel"] if command == "explain" else []
    code, _, err = run(command, "parcel", *passage, "--db", db, "--lang", "de")
    assert code == 2 and err.count("\n") == 1, err
    assert "unknown language 'de'; this index holds en" in err
    assert err.endswith(f" {command} --help')\n"), err


@pytest.mark.parametrize("lang", ["french", "xx", "", "zz-ZZ"])
@pytest.mark.parametrize("command", ["search", "explain"])
def test_a_language_filter_that_is_no_language_is_a_usage_error(
    db: str, command: str, lang: str
) -> None:
    """As ``index --lang zz`` and an upload's language (the one known_language check)."""
    passage = ["delivery@v1#lost-parcel"] if command == "explain" else []
    code, _, err = run(command, "parcel", *passage, "--db", db, "--lang", lang)
    assert code == 2 and err.count("\n") == 1, err
    assert f"unsupported --lang {lang!r}" in err and "en, eo, es" in err


def test_a_language_filter_with_a_region_is_its_language(db: str) -> None:
    lexical = ["--route", "lexical", "--json"]
    code, out, err = run("search", "parcel", "--db", db, "--lang", "EN-gb", *lexical)
    assert code == 0, err
    plain = run("search", "parcel", "--db", db, "--lang", "en", *lexical)[1]
    assert json.loads(out)["hits"] == json.loads(plain)["hits"] != []


def test_an_empty_document_filter_names_no_document_id(db: str) -> None:
    for empty in ("", ",", " "):
        code, _, err = run("search", "parcel", "--db", db, "--doc", empty)
        assert (code, err) == (1, f"error: --doc {empty!r} names no document id\n")


def test_show_a_document_id_lists_its_passages(db: str) -> None:
    """Issue 14 item 14: `kbsearch show DOC_ID` (or DOC_ID@vN) lists the passages."""
    code, out, err = run("show", "returns", "--db", db)
    assert code == 0, err
    assert out.splitlines() == [
        "returns is a document id; its 2 passage(s):",
        "  returns@v1#return-window  Return window",
        "  returns@v2#return-window  Return window",
    ]
    code, out, _ = run("show", "returns@v2", "--db", db, "--json")
    assert code == 0
    ids = [p["passage_id"] for p in json.loads(out)["passages"]]
    assert ids and all(i.startswith("returns@v2#") for i in ids)


def test_explain_a_document_id_says_so_and_names_its_passages(db: str) -> None:
    code, _, err = run("explain", "return window", "returns@v1", "--db", db)
    assert code == 1
    assert err.count("\n") == 1
    assert err.startswith("error: 'returns@v1' is a document id, not a passage id; its passages: ")
    assert "returns@v1#return-window" in err and "returns@v2" not in err


@pytest.mark.parametrize("command", ["show", "explain"])
def test_a_staff_document_id_is_not_revealed_to_the_public(db: str, command: str) -> None:
    args = ["goodwill"] if command == "show" else ["goodwill credit", "goodwill"]
    code, out, err = run(command, *args, "--db", db)
    assert code == 1
    assert err == "error: no passage 'goodwill' for this audience\n"  # no date given
    assert "goodwill@v1" not in out + err
    code, out, _ = run("show", "goodwill", "--db", db, "--audience", "staff")
    assert code == 0 and "goodwill@v1#goodwill-amount" in out


def test_search_marks_matched_words_in_bold_on_a_terminal(db: str) -> None:
    args = ["search", "lost parcel", "--db", db, "--route", "lexical"]
    terminal = CliRunner().invoke(cli, args, color=True)  # as if stdout were a terminal
    assert terminal.exit_code == 0, terminal.output
    snippet = next(line for line in terminal.output.splitlines() if "refunded" in line)
    assert click.style("Lost", bold=True) in snippet or click.style("lost", bold=True) in snippet
    assert click.style("parcel", bold=True) in snippet
    assert click.style("refunded", bold=True) not in snippet
    assert "# Delivery" not in snippet  # the window that matches, not the first characters


def test_search_bolds_the_content_words_not_the_stop_words(db: str) -> None:
    args = ["search", "how is a lost parcel handled", "--db", db, "--route", "lexical"]
    terminal = CliRunner().invoke(cli, args, color=True)
    assert terminal.exit_code == 0, terminal.output
    snippet = next(line for line in terminal.output.splitlines() if "refunded" in line)
    assert click.style("parcel", bold=True) in snippet
    assert click.style("A", bold=True) not in snippet
    assert click.style("is", bold=True) not in snippet


@pytest.mark.parametrize(("color", "flags"), [(False, []), (True, ["--no-color"])])
def test_search_is_plain_when_piped_or_no_color(db: str, color: bool, flags: list[str]) -> None:
    args = ["search", "lost parcel", "--db", db, "--route", "lexical", *flags]
    result = CliRunner().invoke(cli, args, color=color)
    assert result.exit_code == 0 and "\x1b[" not in result.output
    assert "A lost parcel is refunded in full." in result.output


def test_search_color_forces_bold_when_piped(db: str) -> None:
    args = ["search", "lost parcel", "--db", db, "--route", "lexical", "--color"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0 and click.style("parcel", bold=True) in result.output


@pytest.mark.parametrize("lang", ["zz", "english"])
def test_index_refuses_an_unknown_language_as_a_usage_error(
    db: str, tmp_path: Path, lang: str
) -> None:
    docs = write_files(tmp_path / "more", {"a.md": "# A\n\n## B\n\nSome text.\n"})
    code, _, err = run("index", str(docs), "--db", db, "--lang", lang)
    assert code == 2 and err.count("\n") == 1, err
    assert f"--lang {lang!r}" in err and "en, eo, es" in err


@pytest.mark.parametrize(("color", "flags"), [(False, []), (True, ["--no-color"])])
def test_explain_is_plain_when_piped_or_no_color(db: str, color: bool, flags: list[str]) -> None:
    args = ["explain", "lost parcel", "delivery@v1#lost-parcel", "--db", db, *flags]
    result = CliRunner().invoke(cli, args, color=color)
    assert result.exit_code == 0, result.output
    assert "\x1b[" not in result.output
    assert "  lost             idf=" in result.output


def test_explain_bolds_the_terms_the_passage_holds_with_color(db: str) -> None:
    args = ["explain", "lost parcel", "delivery@v1#lost-parcel", "--db", db, "--color"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert f"  {click.style('lost', bold=True)}             idf=" in result.output
