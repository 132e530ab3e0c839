"""`kbsearch index` under the ingest limits (issue 22): `--limit NAME=VALUE`, a hostile file
refused on one line with a non-zero exit, the rest indexed and what was indexed unchanged, a
warning for a large file before the run starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hostile_files import docx_bomb, flate_bomb_pdf, many_pages_pdf

import kbsearch
from kbsearch.cli import cli

GUIDE = "# Guide\n\n## Returns\n\nReturns are accepted within 30 days.\n"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def _documents(db: Path) -> list[tuple[str, str]]:
    with kbsearch.open_kb(db) as kb:
        return sorted((d.document.doc_id, d.document.content_hash) for d in kb.documents())


@pytest.mark.parametrize(
    ("make", "limit"),
    [
        pytest.param(
            lambda p: docx_bomb(p / "bomb.docx", 3_000_000),
            "max_uncompressed_bytes=2000000",
            id="zip-bomb",
        ),
        pytest.param(
            lambda p: flate_bomb_pdf(p / "bomb.pdf", 3_000_000),
            "max_uncompressed_bytes=2000000",
            id="flate-bomb",
        ),
        pytest.param(lambda p: many_pages_pdf(p / "long.pdf", 30), "max_pages=10", id="pages"),
    ],
)
def test_a_hostile_file_is_refused_on_one_line_and_nothing_indexed_changes(
    tmp_path: Path, make: object, limit: str
) -> None:
    pytest.importorskip("reportlab")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(GUIDE, encoding="utf-8")
    db = tmp_path / "kb.db"
    assert run("index", str(docs), "--db", str(db), "--embedder", "none")[0] == 0
    before = _documents(db)
    hostile = make(docs)  # type: ignore[operator]
    code, out, err = run("index", str(docs), "--db", str(db), "--limit", limit)
    assert code == 1
    failed = [line for line in err.splitlines() if line.startswith("failed:")]
    assert len(failed) == 1
    assert f"{hostile.name}: refused:" in failed[0]
    assert f"({limit.partition('=')[0]})" in failed[0]
    assert "failed 1" in out
    assert _documents(db) == before


def test_an_unknown_or_malformed_limit_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text(GUIDE, encoding="utf-8")
    for bad in ("max_pagez=3", "max_pages=-1"):
        code, _, err = run("index", str(tmp_path), "--db", str(tmp_path / "kb.db"), "--limit", bad)
        assert code == 2
        assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")
    assert not (tmp_path / "kb.db").exists()


def test_a_large_file_is_announced_before_indexing_starts(tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text(GUIDE * 20, encoding="utf-8")
    db = tmp_path / "kb.db"
    code, _, err = run(
        "index", str(tmp_path), "--db", str(db), "--embedder", "none",
        "--limit", "warn_file_bytes=500",
    )  # fmt: skip
    assert code == 0
    assert err.splitlines()[0].startswith(f"warning: {tmp_path.resolve() / 'guide.md'}: a large")
    assert len(_documents(db)) == 1


def test_the_help_gives_each_size_limit_in_bytes_and_mib() -> None:
    """As the messages give sizes (1 MiB = 1,048,576 bytes), not as a bare byte count."""
    text = " ".join(CliRunner().invoke(cli, ["index", "--help"]).output.split())
    assert "max_file_bytes (67108864 bytes, 64 MiB)" in text
    assert "warn_file_bytes (8388608 bytes, 8 MiB)" in text
    assert "max_pages (1000 pages)" in text
