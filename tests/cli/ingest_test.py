"""``index``, ``inventory --init`` and the no-results hint of ``search``: a first hour with
one's own folder (issue 14 items 9, 11, 12)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import write_files

from kbsearch.cli import cli

DOCS = {
    "guide/refunds.md": "# Refunds\n\nRefunds arrive within 5 days.\n",
    "admin/refunds.md": "# Refunds (admin)\n\nApprove refunds in the back office.\n",
    "notes.fr.md": "---\nversion: 1.10\n---\n# Notes\n\nLe remboursement arrive vite.\n",
    "title-only.md": "# Only a title\n",
    "logo.png": "not an image",
}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_first_index_then_search_says_why_nothing_public(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "docs", DOCS)
    db = str(tmp_path / "kb.db")
    code, out, err = run("index", str(docs), "--db", db, "--embedder", "none")
    assert code == 0, err
    assert "added 3, updated 0, unchanged 0, removed 0, failed 0" in out
    assert "3 document(s) have no access label and are staff; public searches" in out
    assert "1 unsupported file(s) skipped (--verbose lists them)" in out
    assert "1 warning(s)" in err
    code, out, err = run("search", "refunds", "--db", db, "--route", "lexical")
    assert (code, out.strip()) == (0, "no results")
    assert "staff-only passages match" in err and "--default-access public" in err
    assert not any(ch.isdigit() for ch in err), err  # no count of the hidden passages
    # nothing matches at all: no hint
    code, out, err = run("search", "zebra", "--db", db, "--route", "lexical")
    assert (code, out.strip(), err) == (0, "no results", "")


def test_default_access_is_remembered_and_reruns_exit_zero(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "docs", DOCS)
    db = str(tmp_path / "kb.db")
    run("index", str(docs), "--db", db, "--embedder", "none")
    code, out, _ = run("index", str(docs), "--db", db, "--default-access", "public")
    assert code == 0
    assert "access changed: admin/refunds@v1 staff -> public" in out
    code, out, err = run("index", str(docs), "--db", db, "--verbose")
    assert code == 0
    assert "added 0, updated 0, unchanged 3, removed 0, failed 0" in out
    assert "are public" in out and "access changed" not in out
    assert f"skipped: {docs / 'logo.png'}" in out
    assert "warning: " in err and "title-only.md: has only a title; nothing indexed" in err
    code, out, _ = run("search", "refunds", "--db", db, "--route", "lexical")
    assert code == 0 and "guide/refunds@v1#top" in out and "admin/refunds@v1#top" in out
    code, out, _ = run("inventory", "--db", db)
    assert "notes.fr@v1.10  public fr" in out


def test_empty_folder_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    db = tmp_path / "kb.db"
    code, _, err = run("index", str(tmp_path / "empty"), "--db", str(db), "--embedder", "none")
    assert code == 1 and "no file to index in" in err
    assert not db.exists()


def test_inventory_init_writes_a_starter_csv(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "docs", DOCS)
    code, out, _ = run("inventory", "--init", str(docs))
    assert code == 0 and f"wrote {docs / 'inventory.csv'}: 4 document(s)" in out
    with (docs / "inventory.csv").open() as fh:
        rows = {r["file"]: r for r in csv.DictReader(fh)}
    assert sorted(rows) == ["admin/refunds.md", "guide/refunds.md", "notes.fr.md", "title-only.md"]
    assert rows["notes.fr.md"]["doc_id"] == "notes.fr"
    assert (rows["notes.fr.md"]["version"], rows["notes.fr.md"]["language"]) == ("1.10", "fr")
    assert rows["guide/refunds.md"]["access"] == ""
    # refuses to overwrite; the written inventory indexes as is
    code, _, err = run("inventory", "--init", str(docs))
    assert code == 1 and "exists; pass --force" in err
    db = str(tmp_path / "kb.db")
    code, out, err = run(
        "index",
        str(docs),
        "--db",
        db,
        "--inventory",
        str(docs / "inventory.csv"),
        "--embedder",
        "none",
    )
    assert code == 0, err
    assert "added 3" in out


def test_inventory_init_says_why_a_file_with_its_own_id_is_not_listed(tmp_path: Path) -> None:
    """A Markdown file whose front matter gives its id is left out of the starter inventory
    (one id: "id", not "ids"), and still indexed from its front matter."""
    docs = write_files(
        tmp_path / "docs",
        {
            "plain.md": "# Plain\n\nRefunds arrive within 5 days.\n",
            "own.md": "---\ndoc_id: own-doc\n---\n# Own\n\nGift cards never expire here.\n",
        },
    )
    code, out, err = run("inventory", "--init", str(docs))
    assert code == 0 and "1 document(s)" in out
    assert err.splitlines() == ["not listed: own.md: holds its own document id (front matter)"]
    db = str(tmp_path / "kb.db")
    args = ["index", str(docs), "--db", db, "--inventory", str(docs / "inventory.csv")]
    code, out, err = run(*args, "--embedder", "none")
    assert code == 0 and "added 2" in out, (out, err)


def test_a_declined_public_search_or_question_says_staff_only_passages_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dense and hybrid searches always return the nearest public passages, so "no results"
    never came and the hint never fired: a verdict of "the documents don't say" gives it
    too, when staff-only passages match by keyword (and none other when they do not)."""
    from support import FILES, FakeEmbedder

    from kbsearch import embedders

    monkeypatch.setitem(embedders.EMBEDDERS, "fake", (lambda arg, threads: FakeEmbedder(), "test"))
    docs = write_files(tmp_path / "docs", FILES)
    db = str(tmp_path / "kb.db")
    code, out, err = run("index", str(docs), "--db", db, "--embedder", "fake",
                         "--inventory", str(docs / "inventory.csv"))  # fmt: skip
    assert code == 0, err
    for command in ("search", "ask"):
        # "goodwill" is in the staff-only document alone
        code, out, err = run(command, "goodwill credit euros", "--db", db, "--min-confidence", "1")
        assert code == 0, err
        assert "The documents don't say" in out and "goodwill@" not in out, out
        assert f"{command.capitalize()} with --audience staff" in err, err
        assert "staff-only passages match" in err and not any(c.isdigit() for c in err), err
        # staff sees it: no hint
        code, out, err = run(command, "goodwill credit euros", "--db", db, "--audience", "staff")
        assert code == 0 and "staff-only" not in err, err
        # nothing staff-only matches: no hint
        code, out, err = run(command, "late parcel", "--db", db, "--min-confidence", "1")
        assert code == 0 and err == "", err
