"""Document metadata from front matter: a value YAML would construct as something other than
text (a Python object tag, a custom tag) is refused, naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

import kbsearch
from kbsearch.errors import IngestError
from kbsearch.ingest import parse_file

BODY = "# Page\n\n## Part\n\nSome text.\n"


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("title: !!python/object/apply:os.system ['echo owned']", "title"),
        ("title: !!python/name:os.system", "title"),
        ("owner: !custom value", "owner"),
        ("access: !!python/str public", "access"),
        ("tags:\n  - !!python/object:__main__.X {}", "tags"),
    ],
)
def test_a_front_matter_value_with_a_non_yaml_tag_is_refused(
    tmp_path: Path, line: str, field: str
) -> None:
    path = tmp_path / "page.md"
    path.write_text(f"---\n{line}\n---\n{BODY}", encoding="utf-8")
    with pytest.raises(IngestError) as raised:
        parse_file(path)
    message = str(raised.value)
    assert f"front matter field {field!r}" in message and "tag" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("line", "title"),
    [("title: !!str 1.10", "1.10"), ("title: Plain", "Plain"), ("version: !!int 3", None)],
)
def test_standard_yaml_tags_are_read_as_text(tmp_path: Path, line: str, title: str | None) -> None:
    path = tmp_path / "page.md"
    path.write_text(f"---\n{line}\n---\n{BODY}", encoding="utf-8")
    (parsed,) = parse_file(path)
    if title is not None:
        assert parsed.metadata["title"] == title


def test_a_page_with_a_python_tag_is_not_indexed(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.md").write_text(
        f"---\ntitle: !!python/object/apply:os.system ['x']\n---\n{BODY}", encoding="utf-8"
    )
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        report = kb.index([docs], default_access="public")
        assert kb.documents() == []
    assert "front matter field 'title'" in report.failed[0][1]


def test_a_file_indexed_without_inventory_has_the_format_an_upload_gets(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.md").write_text(f"---\naccess: public\n---\n{BODY}", encoding="utf-8")
    (docs / "notes.txt").write_text(BODY, encoding="utf-8")
    (docs / "old.htm").write_text(f"<html><body><h1>Old</h1><p>{BODY}</p></body></html>", "utf-8")
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        kb.index([docs], default_access="public")
        formats = {d.document.doc_id: d.document.format for d in kb.documents()}
    assert formats == {"page": "markdown", "notes": "plaintext", "old": "html"}  # not md, htm
