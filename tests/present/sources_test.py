"""How sources are shown: a citation gives the path a search hit gives (relative to the public
documents' folder), never the server's absolute path, and a staff document elsewhere does not
move it."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from support import FILES, FakeEmbedder, write_files

import kbsearch
from kbsearch.filters import Filters
from kbsearch.judge.answer import render
from kbsearch.present.sources import common_root, public_root, shown_source
from kbsearch.records import Document

DAY = date(2026, 6, 1)


def test_ask_cites_the_path_relative_to_the_indexed_folder(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "my-docs", FILES)
    staff = write_files(
        tmp_path / "elsewhere" / "staff",
        {"notes.md": "---\naccess: staff\n---\n# Notes\n\n## Parcels\n\nCall the depot.\n"},
    )
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=FakeEmbedder()) as kb:
        assert kb.index([docs, staff], inventory=docs / "inventory.csv").ok
        for audience in ("public", "staff"):
            filters = Filters(audience=audience, as_of=DAY)
            answer = kb.ask("is a lost parcel refunded", filters=filters, min_confidence=0.0)
            assert answer.citation is not None and answer.citation.source == "delivery.md"
            assert str(tmp_path) not in render(answer)
            assert str(tmp_path) not in str(answer.to_dict())


def test_shown_source() -> None:
    def doc(source: str, access: str = "public") -> Document:
        return Document("d", "1", "D", "en", access, source=source)  # type: ignore[arg-type]

    documents = [doc("/srv/kb/a/x.md"), doc("/srv/kb/b/y.md"), doc("/srv/other/s.md", "staff")]
    root = public_root([*documents, doc("https://example.com/page")])
    assert root == "/srv/kb"
    assert shown_source("/srv/kb/a/x.md", root) == "a/x.md"
    assert shown_source("https://example.com/page", root) == "https://example.com/page"
    assert shown_source("/srv/kb/a/x.md", None) == "x.md"
    assert shown_source("/srv/other/staff.md", root) == "staff.md"  # outside: no "../"


def test_the_filesystem_root_is_no_common_root() -> None:
    """Public files in /tmp/a and /srv/b: relative to "/" a path is the server's layout."""
    assert common_root(["/tmp/a", "/srv/b"]) is None
    assert shown_source("/tmp/a/x.md", common_root(["/tmp/a", "/srv/b"])) == "x.md"
    assert common_root(["/srv/kb/a", "/srv/kb/b"]) == "/srv/kb"
