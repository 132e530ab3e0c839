"""One heading rule for every format with heading levels: Markdown, MDX, reST, HTML, Word."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import docx
import pytest

from kbsearch.ingest import parse_file
from kbsearch.ingest.outline import Outline

# Title; a section with text; a sub-section; a skipped level (#### under ##); two sections
# with the same heading; a heading deeper than every section level is text only in Word.
MARKDOWN = """# Guide

Intro.

## Install

Install text.

### Windows

Windows text.

## Notes

First notes.

#### Deep

Deep text.

## Notes

Second notes.
"""

RST = """=====
Guide
=====

Intro.

Install
=======

Install text.

Windows
-------

Windows text.

Notes
=====

First notes.

Deep
----

Deep text.

Notes
=====

Second notes.
"""

HTML = """<html><body><main><h1>Guide</h1><p>Intro.</p>
<h2>Install</h2><p>Install text.</p><h3>Windows</h3><p>Windows text.</p>
<h2>Notes</h2><p>First notes.</p><h4>Deep</h4><p>Deep text.</p>
<h2>Notes</h2><p>Second notes.</p></main></body></html>"""


def _docx(path: Path) -> None:
    word = docx.Document()
    word.add_paragraph("Guide", style="Title")
    word.add_paragraph("Intro.")
    for level, heading, text in [
        (1, "Install", "Install text."),
        (2, "Windows", "Windows text."),
        (1, "Notes", "First notes."),
        (3, "Deep", "Deep text."),
        (1, "Notes", "Second notes."),
    ]:
        word.add_heading(heading, level)
        word.add_paragraph(text)
    word.save(str(path))


WRITERS: dict[str, Callable[[Path], None]] = {
    "guide.md": lambda p: p.write_text(MARKDOWN, encoding="utf-8"),
    "guide.mdx": lambda p: p.write_text("import X from 'x'\n\n" + MARKDOWN, encoding="utf-8"),
    "guide.html": lambda p: p.write_text(HTML, encoding="utf-8"),
    "guide.docx": _docx,
}
EXPECTED = [
    ((), "Intro."),
    (("Install",), "Install text."),
    (("Install", "Windows"), "Windows text."),
    (("Notes",), "First notes."),
    (("Notes", "Deep"), "Deep text."),
    (("Notes",), "Second notes."),
]


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_every_format_follows_the_same_outline(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    WRITERS[name](path)
    (doc,) = parse_file(path)
    assert doc.title == "Guide"
    assert [(b.section, b.text) for b in doc.blocks] == EXPECTED
    notes = [b.outline for b in doc.blocks if b.section == ("Notes",)]
    assert len(notes) == 2 and notes[0] != notes[1]  # two sections, not one


def test_rst_sections_nest_as_its_underlines_say(tmp_path: Path) -> None:
    # reST levels come from the order of underline styles, so "Deep" (the second style) is a
    # sub-section like "Windows"; the rest is the outline above
    path = tmp_path / "guide.rst"
    path.write_text(RST, encoding="utf-8")
    (doc,) = parse_file(path)
    assert doc.title == "Guide"
    assert [(b.section, b.text) for b in doc.blocks] == EXPECTED
    notes = [b.outline for b in doc.blocks if b.section == ("Notes",)]
    assert len(notes) == 2 and notes[0] != notes[1]


def test_section_level_keeps_deeper_headings_as_text() -> None:
    outline = Outline(section_level=2)
    outline.heading(1, "Guide")
    outline.heading(2, "Install")
    outline.heading(3, "Windows")
    outline.add("Windows text.")
    assert [(b.section, b.text) for b in outline.blocks] == [
        (("Install",), "Windows"),
        (("Install",), "Windows text."),
    ]


def test_a_second_different_level_one_heading_is_text() -> None:
    outline = Outline()
    outline.heading(1, "Guide")
    outline.heading(1, "Guide")  # repeated: dropped
    outline.heading(1, "Other part")
    assert outline.title == "Guide"
    assert [b.text for b in outline.blocks] == ["Other part"]
