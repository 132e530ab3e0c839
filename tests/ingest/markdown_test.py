"""Markdown parser: sections, code fences, setext headings, front matter, tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import FIXTURES_ROOT

from kbsearch.errors import IngestError
from kbsearch.ingest import parse_file
from kbsearch.records import Table

FIXTURES = FIXTURES_ROOT / "ingest"


@pytest.fixture(scope="module")
def guide():
    (doc,) = parse_file(FIXTURES / "guide.md")
    return doc


def test_front_matter_gives_title_and_metadata(guide) -> None:
    assert guide.title == "Pump guide"
    assert guide.metadata["owner"] == "support"
    assert guide.metadata["version"] == "2"
    assert guide.metadata["effective_from"] == "2024-01-01"
    assert guide.metadata["tags"] == "pumps, kits"


def test_sections_at_every_heading_level_including_setext(guide) -> None:
    sections = list(dict.fromkeys(b.section for b in guide.blocks))
    assert sections == [
        (),
        ("Installing the pump",),
        ("Installing the pump", "Tools you need"),
        ("Setext heading here",),
        ("Spare parts",),
    ]


def test_hash_line_in_code_fence_is_code_not_heading(guide) -> None:
    code = [b for b in guide.blocks if "# this is a comment" in b.text]
    assert len(code) == 1
    assert code[0].section == ("Installing the pump",)
    assert "pump --install" in code[0].text
    assert all("this is a comment" not in "".join(b.section) for b in guide.blocks)


def test_text_before_first_section_and_extra_h1_kept(guide) -> None:
    top = [b.text for b in guide.blocks if b.section == ()]
    # the front matter gives the title, so the `#` heading stays as text
    assert top == ["Overview of the pumps", "Welcome to the pump guide. Read it before use."]


def test_heading_below_section_level_and_list_items_stay_in_section() -> None:
    (doc,) = parse_file(FIXTURES / "guide.md", section_level=2)
    texts = [b.text for b in doc.blocks if b.section == ("Installing the pump",)]
    assert "Tools you need" in texts
    assert "a screwdriver" in texts and "a spirit level" in texts


def test_table_block_keeps_rows(guide) -> None:
    tables = [b.table for b in guide.blocks if b.table is not None]
    assert tables == [
        Table(
            ("Part", "Code", "Notes"),
            (("Pump kit", "PK-2200-07", "fits the PW-2200 only"), ("Seal", "SE-100", "all models")),
        )
    ]


def test_offsets_point_into_source(guide) -> None:
    source = (FIXTURES / "guide.md").read_text(encoding="utf-8")
    block = next(b for b in guide.blocks if b.text == "Fix the pump to the wall.")
    assert block.start is not None and block.end is not None
    assert source[block.start : block.end].strip() == "Fix the pump to the wall."


def test_h1_is_title_without_front_matter(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("Title\n=====\n\nIntro.\n\n## A\n\nText A.\n", encoding="utf-8")
    (doc,) = parse_file(path)
    assert doc.title == "Title"
    assert [(b.section, b.text) for b in doc.blocks] == [((), "Intro."), (("A",), "Text A.")]


def test_section_level_three_gives_paths(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("## Returns\n\nR.\n\n### Opened items\n\nO.\n\n## Other\n\nX.\n", "utf-8")
    (doc,) = parse_file(path, section_level=3)
    assert [b.section for b in doc.blocks] == [
        ("Returns",),
        ("Returns", "Opened items"),
        ("Other",),
    ]


def test_malformed_front_matter_is_ingest_error(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("---\ntitle: [unclosed\n---\n\nText\n", encoding="utf-8")
    with pytest.raises(IngestError, match="front matter"):
        parse_file(path)


def test_a_field_given_twice_in_front_matter_is_refused(tmp_path: Path) -> None:
    """YAML keeps the last of a repeated key: ``access`` public then staff went staff, and
    the page-wide rule of HTML took the first; both are refused, a repeated same value is
    read, and so is a field kbsearch does not read (tags) twice."""
    path = tmp_path / "a.md"
    path.write_text("---\naccess: staff\naccess: public\n---\n# A\n\nText\n", encoding="utf-8")
    with pytest.raises(IngestError, match="gives 'access' twice"):
        parse_file(path)
    path.write_text(
        "---\naccess: staff\ntags: a\naccess: 'staff'\ntags: b\n---\n# A\n\nText\n",
        encoding="utf-8",
    )
    (doc,) = parse_file(path)
    assert doc.metadata["access"] == "staff"


def test_non_utf8_is_ingest_error(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(IngestError, match="UTF-8"):
        parse_file(path)


def test_raw_html_block_in_markdown_drops_script(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text(
        "## A\n\n<div>\n<p>Visible &amp; kept</p>\n<script>hiddenscript()</script>\n</div>\n",
        encoding="utf-8",
    )
    (doc,) = parse_file(path)
    assert [b.text for b in doc.blocks] == ["Visible & kept"]


def test_front_matter_values_are_read_as_written(tmp_path: Path) -> None:
    path = tmp_path / "v.md"
    path.write_text(
        "---\nversion: 1.10\ndoc_id: 007\neffective_from: 2026-02-30\ntags: [a, b]\n"
        "owner: null\n---\n# T\n\nText.\n"
    )
    meta = parse_file(path)[0].metadata
    assert meta == {
        "version": "1.10",
        "doc_id": "007",
        "effective_from": "2026-02-30",  # checked (and refused) when the document is resolved
        "tags": "a, b",
        "owner": "",
    }


@pytest.mark.parametrize(
    ("front", "field", "kind"),
    [
        ("title: [a, b]", "title", "a list"),
        ("version: {x: 1}", "version", "a mapping"),
        ("access: [public]", "access", "a list"),
        ("title: {k: v}", "title", "a mapping"),
    ],
)
def test_a_read_field_that_is_not_plain_text_is_refused(
    tmp_path: Path, front: str, field: str, kind: str
) -> None:
    """A breaker's find: `title: [a, b]` was stored as `a, b`, `access: [public]` read as
    public, `version: {x: 1}` silently ignored; each is one line naming the field."""
    path = tmp_path / "a.md"
    path.write_text(f"---\n{front}\n---\n\n## S\n\nText\n", encoding="utf-8")
    with pytest.raises(IngestError, match=f"'{field}' must be plain text, not {kind}"):
        parse_file(path)


def test_a_list_in_a_field_kbsearch_does_not_read_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("---\ntitle: Guide\ntags: [x, y]\n---\n\n## S\n\nText\n", encoding="utf-8")
    (doc,) = parse_file(path)
    assert doc.title == "Guide" and doc.metadata["tags"] == "x, y"


def test_yaml_aliases_cost_only_the_nodes_written(tmp_path: Path) -> None:
    """A 'billion laughs' front matter (9 levels of 9 aliases: 9**9 leaves once expanded) held
    the server's write lock for over 10 minutes in the tag check; each node is now visited
    once, and an unread field's list is never expanded into text."""
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    names = "abcdefghi"
    for prev, name in zip(names, names[1:], strict=False):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    path = tmp_path / "lol.md"
    path.write_text("---\n" + "\n".join(levels) + "\n---\n\n## S\n\nText\n", encoding="utf-8")
    (doc,) = parse_file(path)
    assert len(doc.metadata["i"]) < 100  # nested lists are not expanded into text


def test_a_heading_attribute_list_is_no_part_of_the_heading(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text(
        "# Guide {#guide}\n\n## Setting the password {: #setting-the-password }\n\nP.\n\n"
        "### Query blocked (status 9) {#cname data-toc-label='Blocked CNAME'}\n\nQ.\n\n"
        "## Bind on `enp2s0` {#bind}\n\nB.\n\n## Appendix {.unnumbered}\n\nA.\n\n"
        "## Notes {-}\n\nN.\n\n## The `{#id}` syntax\n\nS.\n\n## Sets {x} apart\n\nX.\n",
        encoding="utf-8",
    )
    (doc,) = parse_file(path)
    assert doc.title == "Guide"
    assert [b.section for b in doc.blocks] == [
        ("Setting the password",),
        ("Setting the password", "Query blocked (status 9)"),
        ("Bind on enp2s0",),
        ("Appendix",),
        ("Notes",),
        ("The {#id} syntax",),
        ("Sets {x} apart",),
    ]


def test_a_footnote_reference_is_no_text_and_its_note_stays_where_written(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text(
        "# Guide\n\n## Configuring DoH [^guide]\n\nUse a proxy[^1]. Match [^a-z] too.\n\n"
        "[^1]: Any proxy.\n\n## Other\n\nMore.\n\n[^guide]: Based on a guide by Ben.\n",
        encoding="utf-8",
    )
    (doc,) = parse_file(path)
    assert [(b.section, b.text) for b in doc.blocks] == [
        (("Configuring DoH",), "Use a proxy. Match [^a-z] too."),  # [^a-z]: no note defined
        (("Configuring DoH",), "Any proxy."),
        (("Other",), "More."),
        (("Other",), "Based on a guide by Ben."),
    ]
