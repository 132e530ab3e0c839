"""Word parser (python-docx): paragraphs and tables in body order, headings from styles.

The ``Title`` style (else the document's core property ``title``) is the title; Word's
``Heading N`` styles sit below it, so ``Heading 1`` opens a top section (level 2 in Markdown
terms) and ``Heading N`` is level N+1, sections down to ``section_level``; every other
non-empty paragraph is a block; a table is a table block (first row = header; merged cells
repeat their text). Blocks carry no character offsets.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import docx
from docx.document import Document as WordDocument
from docx.opc.exceptions import PackageNotFoundError
from docx.table import Table as WordTable
from docx.text.paragraph import Paragraph

from kbsearch.errors import IngestError
from kbsearch.ingest.outline import DEEPEST_LEVEL, Outline
from kbsearch.ingest.text import normalize
from kbsearch.records import ParsedDocument, Table

SUFFIXES = (".docx",)
_HEADING = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)


def _table(table: WordTable) -> Table | None:
    rows = [tuple(normalize(cell.text) for cell in row.cells) for row in table.rows]
    rows = [r for r in rows if any(r)]
    if not rows:
        return None
    return Table(rows[0], tuple(rows[1:]))


def _read(path: Path) -> WordDocument:
    try:
        return docx.Document(str(path))
    except OSError as exc:
        raise IngestError(f"{path}: cannot read file ({exc.strerror or exc})") from exc
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise IngestError(f"{path}: corrupt or unreadable Word file ({reason[:200]})") from exc


def parse(path: Path, *, section_level: int = DEEPEST_LEVEL) -> list[ParsedDocument]:
    """Parse one ``.docx`` file into a single ParsedDocument (see the module docstring).

    Raises:
        IngestError: unreadable or corrupt file (not a Word document).
    """
    document = _read(path)
    outline = Outline(section_level)
    for item in document.iter_inner_content():
        if isinstance(item, WordTable):
            table = _table(item)
            if table is not None:
                outline.add(table=table)
            continue
        assert isinstance(item, Paragraph)
        text = normalize(item.text)
        style = (item.style.name if item.style is not None else "") or ""
        heading = _HEADING.match(style.strip())
        if style.strip().lower() == "title" and outline.title is None:
            outline.title = text or None
        elif heading:
            outline.heading(int(heading.group(1)) + 1, text)
        else:
            outline.add(text)
    title = outline.title or normalize(document.core_properties.title or "") or None
    return [ParsedDocument(None, title, tuple(outline.blocks), {})]
