"""MkDocs' admonitions, details and content tabs unfolded before the Markdown parser reads them."""

from __future__ import annotations

from pathlib import Path

from kbsearch.ingest import parse_file
from kbsearch.ingest.admonitions import unfold


def test_a_marker_becomes_its_title_and_its_body_is_dedented() -> None:
    source = (
        '!!! warning "Before you start"\n    Stop the **service**.\n\n    Then update.\n'
        "Back to text.\n"
    )
    assert unfold(source) == (
        "Before you start\nStop the **service**.\n\nThen update.\nBack to text.\n"
    )


def test_a_marker_without_title_leaves_an_empty_line() -> None:
    source = "Intro.\n\n!!! note\n    A note.\n\n???+ tip inline end\n    A tip.\n"
    assert unfold(source) == "Intro.\n\n\nA note.\n\n\nA tip.\n"


def test_a_title_runs_from_the_first_quote_to_the_last() -> None:
    source = '!!! info "The terms "server" and "client""\n    Usage.\n'
    assert unfold(source) == 'The terms "server" and "client"\nUsage.\n'


def test_details_in_a_list_item_and_tabs_and_nesting() -> None:
    source = (
        '1. **Add groups.**\n\n    ??? "Raw database instructions"\n        ```sql\n'
        "        INSERT INTO g VALUES (1);\n        ```\n\n"
        '=== "Docker run"\n    Run it.\n\n    !!! info "Ports"\n        Port 80.\n'
        '=== "Compose"\n    Compose it.\n'
    )
    assert unfold(source).split("\n") == [
        "1. **Add groups.**",
        "",
        "    Raw database instructions",
        "    ```sql",
        "    INSERT INTO g VALUES (1);",
        "    ```",
        "",
        "Docker run",
        "Run it.",
        "",
        "Ports",
        "Port 80.",
        "Compose",
        "Compose it.",
        "",
    ]


def test_code_setext_underlines_and_bare_marks_are_left_alone() -> None:
    source = (
        '```text\n!!! note "in code"\n    indented code\n```\n\nTitle\n===\n\n!!!\n\n'
        "=== not a tab\n\n    plain indented code\n"
    )
    assert unfold(source) == source


def test_the_body_is_read_as_markdown_and_offsets_point_into_the_file(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    source = (
        "# Docker\n\n## Password\n\nSet it with a variable.\n\n!!! note\n"
        "    To set **no** password, see [the FAQ](faq.md).\n\n    Restart after.\n"
    )
    path.write_text(source, encoding="utf-8")
    (doc,) = parse_file(path)
    assert [(b.section, b.text) for b in doc.blocks] == [
        (("Password",), "Set it with a variable."),
        (("Password",), "To set no password, see the FAQ."),
        (("Password",), "Restart after."),
    ]
    block = doc.blocks[1]
    assert block.start is not None and block.end is not None
    assert source[block.start : block.end].strip().startswith("To set **no** password")


def test_container_fences_become_their_title() -> None:
    source = (
        ":::tip Save time\nUse **tabs**.\n:::\n\n:::note[Before you start]\nStop it.\n:::\n\n"
        "::: details Click me\nHidden.\n:::\n\n::: {.warning}\nCareful.\n:::\n\n"
        ":::danger\nNo.\n:::\n"
        "```\n:::tip in code\n```\n"
    )
    assert unfold(source).split("\n") == [
        "Save time", "Use **tabs**.", "", "",
        "Before you start", "Stop it.", "", "",
        "Click me", "Hidden.", "", "",
        "", "Careful.", "", "",
        "", "No.", "",
        "```", ":::tip in code", "```", "",
    ]  # fmt: skip
