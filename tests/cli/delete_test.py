"""``kbsearch delete``: a removal the library and the HTTP API refuse alike."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from support import FILES, write_files

import kbsearch
from kbsearch.cli import cli


def test_an_empty_version_is_refused_as_the_api_refuses_it(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "docs", FILES)
    db = tmp_path / "kb.db"
    with kbsearch.open_kb(db, create=True, embedder="none") as kb:
        kb.index([docs], inventory=docs / "inventory.csv")
        before = [(d.document.doc_id, d.document.version) for d in kb.documents()]
    # a document that exists and one that does not: the same message, nothing removed
    for doc_id in (before[0][0], "no-such-doc"):
        result = CliRunner().invoke(cli, ["delete", doc_id, "--db", str(db), "--version", " "])
        assert result.exit_code == 1
        assert "version is empty; leave it out to remove every version" in result.output
    with kbsearch.open_kb(db) as kb:
        assert [(d.document.doc_id, d.document.version) for d in kb.documents()] == before
