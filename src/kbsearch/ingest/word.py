"""Word parser (python-docx): paragraphs and tables in body order, headings from styles.

The ``Title`` style (else the document's core property ``title``) is the title; Word's
``Heading N`` styles sit below it, so ``Heading 1`` opens a top section (level 2 in Markdown
terms) and ``Heading N`` is level N+1, sections down to ``section_level``; every other
non-empty paragraph is a block; a table is a table block (first row = header; merged cells
repeat their text). Blocks carry no character offsets.

A ``.docx`` is a zip archive: before python-docx reads it, its members are checked against
``max_uncompressed_bytes`` (:mod:`kbsearch.ingest.limits`), first by the sizes their headers
declare, then by the bytes actually decompressed, counted as they are read (a header may lie),
so a zip bomb is refused after reading at most the limit.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from pathlib import Path

import docx
from docx.document import Document as WordDocument
from docx.opc.exceptions import PackageNotFoundError
from docx.table import Table as WordTable
from docx.text.paragraph import Paragraph

from kbsearch.errors import IngestError
from kbsearch.ingest.limits import Budget, IngestLimits, byte_size, over_uncompressed
from kbsearch.ingest.outline import DEEPEST_LEVEL, Outline
from kbsearch.ingest.text import normalize
from kbsearch.records import ParsedDocument, Table

SUFFIXES = (".docx",)
_HEADING = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
# what python-docx and zipfile raise on a damaged archive (a bad member: zlib.error, EOFError;
# an unknown compression method: NotImplementedError)
_CORRUPT = (
    PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, zlib.error, EOFError,
    NotImplementedError,
)  # fmt: skip
_CHECK_EVERY = 256  # paragraphs and tables between two looks at the time budget
_CHUNK = 1 << 20  # bytes decompressed per read while members are counted


def _table(table: WordTable) -> Table | None:
    rows = [tuple(normalize(cell.text) for cell in row.cells) for row in table.rows]
    rows = [r for r in rows if any(r)]
    if not rows:
        return None
    return Table(rows[0], tuple(rows[1:]))


def check_archive(path: Path, limits: IngestLimits) -> None:
    """Refuse a zip whose members expand past ``max_uncompressed_bytes``: by the sizes the
    central directory declares, then by the bytes decompressed (at most the limit is read).

    Raises:
        LimitExceededError: over the limit.
        zipfile.BadZipFile, OSError, ...: as :mod:`zipfile` (the caller names them corrupt).
    """
    limit = limits.max_uncompressed_bytes
    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
        declared = sum(info.file_size for info in members)
        if declared > limit:
            raise over_uncompressed(path, f"its zip members declare {byte_size(declared)}", limits)
        total = 0
        for info in members:
            with archive.open(info) as member:
                while chunk := member.read(_CHUNK):
                    total += len(chunk)
                    if total > limit:
                        what = "its zip members expand past the limit"
                        raise over_uncompressed(path, what, limits)


def _read(path: Path, limits: IngestLimits) -> WordDocument:
    try:
        check_archive(path, limits)
        return docx.Document(str(path))
    except OSError as exc:
        raise IngestError(f"{path}: cannot read file ({exc.strerror or exc})") from exc
    except _CORRUPT as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise IngestError(f"{path}: corrupt or unreadable Word file ({reason[:200]})") from exc


def parse(
    path: Path,
    *,
    section_level: int = DEEPEST_LEVEL,
    limits: IngestLimits | None = None,
    budget: Budget | None = None,
) -> list[ParsedDocument]:
    """Parse one ``.docx`` file into a single ParsedDocument (see the module docstring).
    ``limits``: default :class:`IngestLimits`; ``budget``: checked once the file is read,
    then every ``_CHECK_EVERY`` paragraphs and tables (python-docx takes minutes over a
    50 MB ``document.xml``).

    Raises:
        LimitExceededError: the archive expands past ``max_uncompressed_bytes``, or reading
            took the document past its ``budget``.
        IngestError: unreadable or corrupt file (not a Word document).
    """
    document = _read(path, limits or IngestLimits())
    outline = Outline(section_level)
    for position, item in enumerate(document.iter_inner_content()):
        if budget is not None and position % _CHECK_EVERY == 0:
            budget.check("parse")
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
