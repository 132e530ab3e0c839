"""Defects found by trying to break kbsearch: each must be a clear, specific error that
damages nothing."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import FILES, FakeEmbedder, write_files

import kbsearch
from kbsearch.cli import cli
from kbsearch.errors import (
    EmbedderMismatchError,
    IngestError,
    InvalidArgumentError,
    InventoryError,
    PassageNotFoundError,
    QueryError,
    StorageError,
)
from kbsearch.knowledge_base import KnowledgeBase

DAY = date(2026, 6, 1)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return write_files(tmp_path / "docs", FILES)


@pytest.fixture
def lexical_kb(tmp_path: Path, docs: Path) -> KnowledgeBase:
    kb = kbsearch.open_kb(tmp_path / "lex.db", create=True, embedder="none")
    kb.index([docs], inventory=docs / "inventory.csv")
    return kb


@pytest.mark.parametrize(
    "kwargs",
    [
        {"paths": ["/definitely/not/here"]},
        {"inventory": "missing.csv"},
        {"passage_budget": 10},
    ],
)
def test_failed_reembed_keeps_the_index(
    lexical_kb: KnowledgeBase, docs: Path, kwargs: dict[str, object]
) -> None:
    before = lexical_kb.store.passages.count()
    args: dict[str, object] = {"inventory": docs / "inventory.csv", "reembed": True, **kwargs}
    paths = args.pop("paths", [docs])
    with pytest.raises((IngestError, InventoryError, InvalidArgumentError)):
        lexical_kb.index(paths, **args)  # type: ignore[arg-type]
    assert lexical_kb.store.passages.count() == before > 0


def test_vectors_cannot_be_added_to_a_lexical_only_index(tmp_path: Path, docs: Path) -> None:
    path = tmp_path / "lex.db"
    with kbsearch.open_kb(path, create=True, embedder="none") as kb:
        kb.index([docs], inventory=docs / "inventory.csv")
    with kbsearch.open_kb(path, embedder=FakeEmbedder()) as kb:
        with pytest.raises(EmbedderMismatchError, match="--reembed"):
            kb.index([docs], inventory=docs / "inventory.csv")
        assert kb.store.vectors.count() == 0


@pytest.mark.parametrize("query", [None, b"bytes", 42, "return \udcff"])
def test_queries_that_are_not_text(lexical_kb: KnowledgeBase, query: object) -> None:
    with pytest.raises(QueryError):
        lexical_kb.search(query, route="lexical")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"k": 10**19},
        {"depth": 10**19},
        {"rrf_k": "10"},
        {"rrf_k": None},
        {"weights": (1.0,)},
        {"weights": ("a", "b")},
        {"weights": (0, 0)},
        {"weights": (1, float("nan"))},
        {"filters": {"audience": "public"}},
    ],
)
def test_bad_arguments_are_invalid_argument_errors(
    lexical_kb: KnowledgeBase, kwargs: dict[str, object]
) -> None:
    with pytest.raises(InvalidArgumentError):
        lexical_kb.search("parcel", route="lexical", **kwargs)  # type: ignore[arg-type]
    if "k" not in kwargs:
        with pytest.raises(InvalidArgumentError):
            lexical_kb.explain("parcel", "delivery@v1#lost-parcel", **kwargs)  # type: ignore[arg-type]


def test_undecodable_passage_id_is_not_found(lexical_kb: KnowledgeBase) -> None:
    with pytest.raises(PassageNotFoundError):
        lexical_kb.get_passage("r\udcff")


def test_folder_as_database(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="folder"):
        kbsearch.open_kb(tmp_path)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stderr


def test_cli_backup_errors_are_one_line(lexical_kb: KnowledgeBase, tmp_path: Path) -> None:
    db = str(lexical_kb.store.path)
    not_db = tmp_path / "notes.txt"
    not_db.write_text("my notes")
    for target in (str(tmp_path / "no" / "such" / "dir" / "x.db"), str(not_db)):
        code, err = run("backup", target, "--db", db, "--force")
        assert code == 1 and err.startswith("error: ") and err.count("\n") == 1
    assert not_db.read_text() == "my notes"
    code, err = run("backup", str(not_db), "--db", db)
    assert code == 1 and "--force" in err


def test_failed_first_index_leaves_no_database(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    code, err = run("index", "/definitely/not/here", "--db", str(db), "--embedder", "none")
    assert code == 1 and err.startswith("error: ")
    assert not db.exists()


def test_failure_lines_name_the_file_once(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "d", {"a.md": "# A\n\n## One\n\nSome words.\n"})
    (docs / "bad.pdf").write_bytes(b"not a pdf")
    result = CliRunner().invoke(
        cli, ["index", str(docs), "--db", str(tmp_path / "kb.db"), "--embedder", "none"]
    )
    line = next(x for x in result.stderr.splitlines() if x.startswith("failed:"))
    assert line.count("bad.pdf") == 1
