"""Template and shortcode markup is removed from indexed text, one test per syntax; real text
in square brackets and code stay (issue 22: a Grav site's passages held `{% endif %}`,
`{{image_type}}`, `[fa=rocket /]`, `[center]`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbsearch.ingest.markdown import parse_text


def texts(source: str) -> list[str]:
    doc = parse_text(source, Path("page.md"))
    return [b.text for b in doc.blocks if b.text]


def sections(source: str) -> list[tuple[str, ...]]:
    return [b.section for b in parse_text(source, Path("page.md")).blocks]


@pytest.mark.parametrize(
    ("written", "kept"),
    [
        # Twig / Jinja tags and output, whitespace control, comments
        ("{% if user %}Hello world{% endif %}", "Hello world"),
        ("{%- include 'nav.html' -%} Hello world", "Hello world"),
        ("Type {{image_type}} here", "Type here"),
        ("Hello {# a note for editors #} world", "Hello world"),
        # Liquid, with a filter
        ("Welcome to {{ site.title | escape }} today", "Welcome to today"),
        # Hugo shortcodes, both delimiters; the text between paired shortcodes stays
        ('{{< figure src="a.png" title="Map" >}} See the map', "See the map"),
        ("{{% notice tip %}}Tip text{{% /notice %}}", "Tip text"),
        ("{{< highlight go >}}", ""),
        # Grav / WordPress bracket shortcodes
        ("Launch [fa=rocket /] now", "Launch now"),
        ("[center]**Centered** text[/center]", "Centered text"),
        ('[ui-tabs position="top-left"]Tabbed[/ui-tabs]', "Tabbed"),
        ('[caption id="attachment_1" align="left"]A photo[/caption]', "A photo"),
        ("Big [size=20]words[/size] here", "Big words here"),
    ],
)
def test_each_syntax_is_removed(written: str, kept: str) -> None:
    assert texts(f"# Page\n\n{written}\n") == ([kept] if kept else [])


def test_a_heading_loses_its_template_markup() -> None:
    assert sections("# Page\n\n## {{image_type}} settings\n\nText.\n") == [("settings",)]


def test_a_template_line_between_paragraphs_is_no_passage_text() -> None:
    source = "# Page\n\n{% if grav.twig %}\n\nFirst.\n\n{% endif %}\n\nSecond.\n"
    assert texts(source) == ["First.", "Second."]


def test_an_mdx_component_keeps_only_its_text() -> None:
    source = '# Page\n\n<Callout type="info">Note text</Callout>\n\nA <Badge text="new" /> badge\n'
    assert texts(source) == ["Note text", "A badge"]


@pytest.mark.parametrize(
    ("written", "kept"),
    [
        ("See [the returns](https://example.com/returns) first.", "See the returns first."),
        ("A note[^1] at the end.", "A note[^1] at the end."),
        ("An editor's [sic] and a [Note] stay.", "An editor's [sic] and a [Note] stay."),
        ("- [x] done\n- [ ] to do", None),
        ("Use `{{ page.title }}` in a template.", "Use {{ page.title }} in a template."),
        ("The set [a, b] and [1] and x[i] stay.", "The set [a, b] and [1] and x[i] stay."),
        ("Unclosed {{ stays when no end follows", "Unclosed {{ stays when no end follows"),
    ],
)
def test_real_text_in_brackets_and_code_survives(written: str, kept: str | None) -> None:
    found = texts(f"# Page\n\n{written}\n")
    if kept is None:  # a task list: its boxes stay
        assert "[x] done" in " ".join(found) and "[ ] to do" in " ".join(found)
    else:
        assert found == [kept]


def test_fenced_code_keeps_its_template_tags() -> None:
    source = "# Page\n\n```twig\n{% if user %}{{ user.name }}{% endif %}\n```\n"
    assert texts(source) == ["{% if user %}{{ user.name }}{% endif %}"]


def test_an_opening_tag_nothing_closes_is_text() -> None:
    assert texts("# Page\n\nPress [Enter] to go on.\n") == ["Press [Enter] to go on."]
