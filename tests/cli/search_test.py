"""`kbsearch search` and `explain` with `--rerank`: the library's reranking, its errors one
line (a bad option value is click's usage error, exit 2; a reranker that cannot load exits 1)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support import FILES, LengthReranker, write_files

import kbsearch
from kbsearch.cli import cli
from kbsearch.filters import Filters

STAFF = ["--audience", "staff", "--as-of", "2026-06-01"]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The fixture documents, lexical only (no vectors)."""
    root = tmp_path_factory.mktemp("cli")
    docs = write_files(root / "docs", FILES)
    with kbsearch.open_kb(root / "kb.db", create=True, embedder="none") as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv").ok
    return str(root / "kb.db")


def test_search_reranks_as_the_library_does(db: str, fake_reranker: LengthReranker) -> None:
    args = ["search", "parcel", "--db", db, "--route", "lexical", *STAFF, "--k", "3"]
    result = CliRunner().invoke(cli, [*args, "--rerank", "fake", "--json"])
    assert result.exit_code == 0, result.output
    shown = [h["passage_id"] for h in json.loads(result.stdout)["hits"]]
    filters = Filters(audience="staff", as_of="2026-06-01")
    with kbsearch.open_kb(db) as kb:
        hits = kb.search("parcel", k=3, route="lexical", filters=filters, rerank="fake")
        plain = kb.search("parcel", k=3, route="lexical", filters=filters)
    assert shown == [h.passage_id for h in hits] != [h.passage_id for h in plain]
    top_n = CliRunner().invoke(cli, [*args, "--rerank", "fake", "--rerank-top-n", "1", "--json"])
    assert [h["passage_id"] for h in json.loads(top_n.stdout)["hits"]] == [
        h.passage_id for h in plain
    ]  # the top 1 reranked alone: the lexical order


def test_explain_shows_the_rerank_stage(db: str, fake_reranker: LengthReranker) -> None:
    args = ["explain", "lost parcel", "delivery@v1#lost-parcel", "--db", db, *STAFF]
    result = CliRunner().invoke(cli, [*args, "--rerank", "fake"])
    assert result.exit_code == 0, result.output
    assert "rerank (fake): score " in result.output and "rank #" in result.output
    as_json = CliRunner().invoke(cli, [*args, "--rerank", "fake", "--json"])
    assert json.loads(as_json.stdout)["rerank"]["reranker"] == "fake"


@pytest.mark.parametrize(
    ("options", "code", "message"),
    [
        (["--rerank", "bm25"], 2, "unknown reranker 'bm25'"),
        (["--rerank", "cross-encoder"], 2, "needs an argument"),
        (["--rerank-top-n", "5"], 2, "need --rerank NAME"),
        (["--rerank", "fake", "--rerank-budget-ms", "0"], 2, "'--rerank-budget-ms': rerank budget"),
        (["--rerank", "fake", "--rerank-budget-ms", "nan"], 2, "'--rerank-budget-ms': "),
        (["--rerank", "fake", "--rerank-top-n", "0"], 2, "'--rerank-top-n': rerank top_n must"),
        (["--rerank", "cross-encoder:/nowhere/model"], 1, "no cross-encoder model folder at"),
    ],
)
def test_rerank_errors(
    db: str, fake_reranker: LengthReranker, options: list[str], code: int, message: str
) -> None:
    searches = (
        ["search", "parcel", "--route", "lexical"],
        ["explain", "parcel", "delivery@v1#lost-parcel"],
    )
    for command in searches:
        result = CliRunner().invoke(cli, [*command, "--db", db, *options])
        assert result.exit_code == code, result.output
        assert message in result.output
        if code == 1:
            assert result.output.startswith("error: ") and result.output.count("\n") == 1


def test_a_cross_encoder_path_to_a_file_says_it_is_not_a_folder(db: str) -> None:
    result = CliRunner().invoke(cli, ["search", "parcel", "--db", db, "--route", "lexical",
                                      "--rerank", f"cross-encoder:{db}"])  # fmt: skip
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert f"error: {db} is a file, not a folder" in result.output


def test_help_names_the_rerankers() -> None:
    result = CliRunner().invoke(cli, ["search", "--help"])
    assert "--rerank" in result.output and "kbsearch[rerank]" in result.output


def test_the_command_line_says_how_to_re_embed_an_index_without_vectors(db: str) -> None:
    searched = CliRunner().invoke(cli, ["search", "parcel", "--db", db, "--route", "dense"])
    asked = CliRunner().invoke(cli, ["ask", "lost parcel", "--db", db])
    assert searched.exit_code == asked.exit_code == 1
    assert "search --route lexical" in searched.stderr
    for result in (searched, asked):
        assert (
            "no vectors" in result.stderr
            and "--db DB --reembed (the default embedder" in result.stderr
        )
        # a state of the index, not a malformed command line: one line, exit 1 (errors page)
        assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("error: ")


def test_search_explain_shows_the_rerank_stage(db: str, fake_reranker: LengthReranker) -> None:
    args = ["search", "parcel", "--db", db, "--route", "lexical", *STAFF, "--k", "3"]
    reranked = [*args, "--rerank", "fake", "--rerank-top-n", "2", "--explain"]
    text = CliRunner().invoke(cli, reranked)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0] == lines[0].strip() and lines[0].startswith("rerank (fake): scored 2 of")
    assert lines[0].endswith(" ms (budget 500 ms)"), lines[0]
    moves = [line.strip() for line in lines if line.strip().startswith("rerank (fake): ")][1:]
    assert len(moves) == 3 and all("; rank #" in m for m in moves)
    assert sum("not scored (below the top 2)" in m for m in moves) == 1
    shown = json.loads(CliRunner().invoke(cli, [*reranked, "--json"]).stdout)
    assert shown["rerank"]["reranker"] == "fake" and shown["rerank"]["top_n"] == 2
    assert shown["rerank"]["scored"] == 2 and shown["rerank"]["budget_ms"] > 0
    moved = [h["rerank"] for h in shown["hits"]]
    assert [m["after"] for m in moved] == [1, 2, 3]
    assert sum(m["score"] is None for m in moved) == 1
    plain = json.loads(CliRunner().invoke(cli, [*args, "--rerank", "fake", "--json"]).stdout)
    assert "rerank" not in plain and all("rerank" not in h for h in plain["hits"])


def test_search_without_a_route_takes_lexical_on_an_index_without_vectors(db: str) -> None:
    """As the HTTP API and the page: the best route the index supports, not a failing hybrid."""
    result = CliRunner().invoke(cli, ["search", "parcel", "--db", db, *STAFF, "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["route"] == "lexical" and payload["hits"]
    refused = CliRunner().invoke(cli, ["search", "parcel", "--db", db, "--rrf-k", "20"])
    assert refused.exit_code == 2  # RRF settings: the route taken is not fused
