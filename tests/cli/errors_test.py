"""One error adapter for every command: a library error is one line ``error: ...`` on stderr
and exit 1; a malformed command line is click's usage error, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from support import FIXTURES_ROOT, cli_indexed_db, damage_table

from kbsearch.cli import cli

BEIR = str(FIXTURES_ROOT / "eval" / "beir")


def run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.stdout, result.stderr


def library_error_cases(tmp: Path) -> dict[str, list[str]]:
    missing = str(tmp / "missing.db")
    bad_run = tmp / "dup.trec"
    bad_run.write_text("q Q0 x 1 2 t\nq Q0 x 2 1 t\n")
    qrels = tmp / "qrels.txt"
    qrels.write_text("q 0 x 1\n")
    return {
        "index": ["index", str(tmp / "no-such-folder"), "--db", str(tmp / "new.db")],
        "search": ["search", "parcel", "--db", missing],
        "ask": ["ask", "parcel", "--db", missing],
        "explain": ["explain", "parcel", "p@v1#x", "--db", missing],
        "show": ["show", "p@v1#x", "--db", missing],
        "inventory": ["inventory", "--db", missing],
        "stats": ["stats", "--db", missing],
        "backup": ["backup", str(tmp / "copy.db"), "--db", missing],
        "delete": ["delete", "returns", "--db", missing],
        "eval": ["eval", BEIR, "--db", missing, "--routes", "lexical"],
        "bench": ["bench", BEIR, "--db", str(tmp / "b.db"), "--embedder", "no-such-embedder"],
        "compare": ["compare", str(qrels), str(bad_run), "--qrels", str(qrels)],
        "demo": ["demo", "--dir", str(tmp / "demo"), "--embedder", "no-such-embedder"],
        "serve": ["serve", "--db", missing],
        "mcp": ["mcp", "--db", missing],
        "verify": ["verify", "--db", missing],
        "sync": ["sync", "--db", missing, "--qdrant-path", str(tmp / "edge")],
    }


COMMANDS = [
    "index", "search", "ask", "explain", "show", "inventory", "stats", "backup", "delete", "eval",
    "bench", "compare", "demo", "serve", "mcp", "verify", "sync",
]  # fmt: skip


@pytest.mark.parametrize("name", COMMANDS)
def test_library_error_is_one_line_and_exit_1(tmp_path: Path, name: str) -> None:
    code, out, err = run(library_error_cases(tmp_path)[name])
    assert code == 1, (out, err)
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in out + err


def test_every_top_level_command_has_a_library_error_case() -> None:
    assert set(COMMANDS) == set(cli.commands) - {"model"}


def test_serve_refuses_other_hosts_without_keys(tmp_path: Path) -> None:
    code, _, err = run(["serve", "--db", str(tmp_path / "kb.db"), "--host", "0.0.0.0"])
    assert code == 1 and "needs a keys file" in err


@pytest.mark.parametrize(
    "args",
    [
        ["search", "parcel", "--route", "lexical"],
        ["search", "parcel", "--route", "hybrid"],
        ["show", "delivery@v1#late-parcel", "--audience", "staff"],
    ],
)
def test_a_damaged_index_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """A corrupt page read by a command: a traceback of ``sqlite3.DatabaseError`` before
    (a search's from its read transaction's COMMIT, hiding the read's own error)."""
    db = cli_indexed_db(tmp_path, monkeypatch)
    damage_table(Path(db), "passages")
    code, _, err = run([*args, "--db", db])
    assert code == 1 and err.startswith("error: ") and err.count("\n") == 1, err
    assert "rebuild it with `kbsearch index`" in err


def test_a_failed_first_index_leaves_no_file(tmp_path: Path) -> None:
    code, _, _ = run(library_error_cases(tmp_path)["index"])
    assert code == 1 and not (tmp_path / "new.db").exists()


@pytest.mark.parametrize("name", [*COMMANDS, "model"])
def test_unknown_option_is_a_usage_error(name: str) -> None:
    code, _, err = run([name, "--no-such-option"])
    assert code == 2 and "No such option" in err


@pytest.mark.parametrize(
    "args",
    [
        ["search", "parcel"],
        ["explain", "parcel", "p@v1#x"],
        ["eval", BEIR],
        ["bench", BEIR],
    ],
)
@pytest.mark.parametrize("weights", ["1", "a,b", "0,0", "1,nan"])
def test_bad_weights_are_a_usage_error_in_every_command(
    tmp_path: Path, args: list[str], weights: str
) -> None:
    code, _, err = run([*args, "--db", str(tmp_path / "kb.db"), "--weights", weights])
    assert code == 2 and "--weights" in err
    assert not (tmp_path / "kb.db").exists()
