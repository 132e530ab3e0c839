"""PDF parser (pdfplumber): text lines with their font size and weight, headings, tables.

* Body size = the most common character size in the document (rounded to 0.5 pt).
* A line is a heading when its size is at least ``HEADING_RATIO`` x the body size, or when it
  is short and entirely bold (unless the body itself is bold). Consecutive heading lines of the
  same style are one heading. The largest heading on page 1, when no later heading is larger,
  is the title; every other heading opens a section (a flat path: ``(heading,)``).
* Tables come from pdfplumber's table finder (ruled tables); their characters are removed
  from the running text so rows are not repeated as paragraphs. First row = header.
* Running headers and footers are dropped: a line in the top or bottom ``MARGIN_FRACTION`` of
  its page whose text, with digit runs replaced, recurs in a margin of at least two pages
  (``"... · page 1"`` / ``"... · page 2"``). Lines that are only a page number are dropped too.
* A table continued across a page break becomes one table: when a page starts with a table
  directly after the previous page's last table (only dropped header/footer lines between),
  and it repeats that table's header row, or has as many columns and no header of its own
  (its first row is not all bold over non-bold rows), its rows are appended.
* Lines are joined into paragraphs (line-end hyphenation undone, real hyphens kept: see
  :func:`join_lines`); a paragraph ends at a vertical gap, a page break, a bullet,
  or a short line ending with punctuation. Every block records its 1-based page.
* All text is NFKC-normalised (the ligature U+FB01 becomes ``fi``); pdfplumber's own ligature
  expansion is turned off so that this one rule applies to every compatibility character.
* Limits (:mod:`kbsearch.ingest.pdf_limits`): a PDF whose page tree declares more than
  ``max_pages`` pages is refused before any page is parsed, and pdfplumber loads at most one
  page more (a tree that understates its count is refused there); the decoded streams
  together stop at ``max_uncompressed_bytes``; the document's time budget is checked after
  every page.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
from pdfminer.pdfparser import PDFSyntaxError
from pdfminer.psparser import PSException
from pdfplumber.utils.exceptions import PdfminerException

from kbsearch.errors import IngestError, LimitExceededError
from kbsearch.ingest.limits import Budget, IngestLimits
from kbsearch.ingest.pdf_limits import bounded_streams, open_pdf
from kbsearch.ingest.text import normalize
from kbsearch.records import Block, ParsedDocument, Table

SUFFIXES = (".pdf",)
HEADING_RATIO = 1.15  # a heading's font is at least 15 % larger than the body font
MAX_HEADING_CHARS = 120
MAX_BOLD_HEADING_CHARS = 80
MARGIN_FRACTION = 0.12  # top/bottom share of the page height where running lines are looked for
_PDF_ERRORS = (
    PdfminerException,
    PDFSyntaxError,
    PSException,
    PDFEncryptionError,
    PDFPasswordIncorrect,
    ValueError,
    KeyError,
    TypeError,
    AttributeError,
)
_PAGE_NUMBER = re.compile(r"^(page\s*)?\d+(\s*(/|of|sur)\s*\d+)?$", re.IGNORECASE)
_BULLET = re.compile(r"^([•▪◦‣·\-–—*]|\d{1,3}[.)])\s")
_SENTENCE_END = re.compile(r"[.!?:;…]$")
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class _Line:
    page: int
    top: float
    bottom: float
    x1: float
    text: str
    size: float
    bold: bool
    in_margin: bool = False


@dataclass(frozen=True)
class _TableItem:
    page: int
    top: float
    table: Table
    bold_header: bool = False  # first row all bold while the body rows are not
    end_page: int = 0  # last page a continued table reaches (0: same as ``page``)

    @property
    def last_page(self) -> int:
        return max(self.page, self.end_page)


def _is_bold(fontname: str) -> bool:
    name = fontname.lower()
    return any(w in name for w in ("bold", "black", "heavy", "semibold"))


def _inside(obj: dict[str, Any], boxes: Sequence[tuple[float, float, float, float]]) -> bool:
    x = (obj["x0"] + obj["x1"]) / 2
    y = (obj["top"] + obj["bottom"]) / 2
    return any(x0 <= x <= x1 and top <= y <= bottom for x0, top, x1, bottom in boxes)


def _table(rows: list[list[str | None]]) -> Table | None:
    cleaned = [tuple(normalize(c or "") for c in row) for row in rows]
    cleaned = [r for r in cleaned if any(r)]
    if not cleaned:
        return None
    return Table(cleaned[0], tuple(cleaned[1:]))


def _all_bold(page: Any, bbox: tuple[float, float, float, float]) -> bool:
    chars = [c for c in page.within_bbox(bbox).chars if c["text"].strip()]
    return bool(chars) and all(_is_bold(c.get("fontname", "")) for c in chars)


def _bold_header(page: Any, found: Any) -> bool:
    rows = found.rows
    if not rows or not _all_bold(page, rows[0].bbox):
        return False
    return len(rows) == 1 or not _all_bold(page, rows[1].bbox)


def _page_items(page: Any, number: int) -> Iterator[_Line | _TableItem]:
    tables = page.find_tables()
    boxes = [t.bbox for t in tables]
    for t in tables:
        table = _table(t.extract())
        if table is not None:
            yield _TableItem(number, t.bbox[1], table, _bold_header(page, t))
    margin = MARGIN_FRACTION * float(page.height)
    text_page = page.filter(lambda o: o.get("object_type") != "char" or not _inside(o, boxes))
    for line in text_page.extract_text_lines(return_chars=True, expand_ligatures=False):
        text = normalize(line["text"])
        chars = [c for c in line["chars"] if c["text"].strip()]
        if not text or not chars or _PAGE_NUMBER.match(text):
            continue
        size = median(round(c["size"] * 2) / 2 for c in chars)
        bold = all(_is_bold(c.get("fontname", "")) for c in chars)
        in_margin = line["top"] < margin or line["bottom"] > float(page.height) - margin
        yield _Line(number, line["top"], line["bottom"], line["x1"], text, size, bold, in_margin)


def _read(path: Path, limits: IngestLimits, budget: Budget | None) -> list[_Line | _TableItem]:
    items: list[_Line | _TableItem] = []
    try:
        with bounded_streams(path, limits) as ceiling, path.open("rb") as stream:
            pdf = open_pdf(stream, path, limits)  # not closed on a refusal: see open_pdf
            for number, page in enumerate(pdf.pages, start=1):
                page_items = list(_page_items(page, number))
                page_items.sort(key=lambda it: it.top)
                items.extend(page_items)
                if budget is not None:
                    budget.check("parse")
            pdf.close()
    except LimitExceededError:
        raise
    except OSError as exc:
        raise IngestError(f"{path}: cannot read file ({exc.strerror or exc})") from exc
    except _PDF_ERRORS as exc:
        if ceiling.exceeded:  # the refusal, wrapped by pdfplumber or pdfminer
            raise ceiling.refusal() from exc
        if _encrypted(exc):
            raise IngestError(
                f"{path}: the PDF is encrypted (password-protected); save an unprotected copy"
                " to index it"
            ) from exc
        reason = str(exc) or type(exc).__name__
        raise IngestError(f"{path}: corrupt or unreadable PDF ({reason})") from exc
    return items


def _encrypted(exc: BaseException) -> bool:
    """True when pdfminer refused the file for its encryption (pdfplumber wraps the error)."""
    causes = [exc, *exc.args, exc.__cause__, exc.__context__]
    return any(isinstance(c, PDFEncryptionError | PDFPasswordIncorrect) for c in causes)


_HYPHENATED_END = re.compile(r"([^\W\d_]+)[-\u2010]$")
_FIRST_WORD = re.compile(r"^([^\W\d_]+)")
_WORD = re.compile(r"[^\W\d_]+(?:[-\u2010][^\W\d_]+)*")


def _vocabulary(lines: Sequence[str]) -> set[str]:
    """Lower-cased words and hyphenated compounds of ``lines``, leaving out the two halves of
    every line-end hyphenation (they are what is being decided)."""
    vocab: set[str] = set()
    for i, line in enumerate(lines):
        found = _WORD.findall(line)
        if _HYPHENATED_END.search(line) and found:
            found = found[:-1]
        if i and _HYPHENATED_END.search(lines[i - 1]) and _FIRST_WORD.match(line) and found:
            found = found[1:]
        for word in found:
            vocab.add(word.lower())
            vocab.update(part.lower() for part in re.split(r"[-\u2010]", word))
    return vocab


def join_lines(lines: Sequence[str], vocabulary: set[str]) -> str:
    """Join a paragraph's lines, undoing line-end hyphenation: ``eligi-`` + ``bility`` gives
    ``eligibility``, while a real compound broken at its hyphen stays one (``fixed-`` +
    ``term`` gives ``fixed-term``). The hyphen is kept when the compound occurs elsewhere in
    the document, or both halves do as words and the joined word does not; otherwise it is a
    hyphenation and is removed. A next line starting with a capital or a digit keeps it."""
    out = lines[0] if lines else ""
    for line in lines[1:]:
        end = _HYPHENATED_END.search(out)
        start = _FIRST_WORD.match(line)
        if end and start and line[0].islower():
            left, right = end.group(1).lower(), start.group(1).lower()
            joined = left + right
            keep = f"{left}-{right}" in vocabulary or (
                joined not in vocabulary and left in vocabulary and right in vocabulary
            )
            out = (out if keep else out[:-1]) + line
        else:
            out = f"{out} {line}"
    return out


def _running_key(line: _Line) -> str:
    return " ".join(_DIGITS.sub("#", line.text).split()).casefold()


def _drop_running(items: list[_Line | _TableItem]) -> list[_Line | _TableItem]:
    """Remove running headers/footers: margin lines whose digit-blind text recurs in the
    margin of two or more pages."""
    pages: dict[str, set[int]] = {}
    for it in items:
        if isinstance(it, _Line) and it.in_margin:
            pages.setdefault(_running_key(it), set()).add(it.page)
    running = {key for key, seen in pages.items() if len(seen) >= 2}
    return [
        it
        for it in items
        if not (isinstance(it, _Line) and it.in_margin and _running_key(it) in running)
    ]


def _continues(prev: _TableItem, nxt: _TableItem) -> bool:
    if nxt.page != prev.last_page + 1:
        return False
    if nxt.table.header == prev.table.header:
        return True
    # A header-less continuation: same width, and its first row is not styled as a header.
    return len(nxt.table.header) == len(prev.table.header) and not nxt.bold_header


def _join_tables(items: list[_Line | _TableItem]) -> list[_Line | _TableItem]:
    """Merge a table continued on the next page into the previous one (see module doc).
    Must run after :func:`_drop_running`, so that only kept items separate two tables."""
    out: list[_Line | _TableItem] = []
    for it in items:
        prev = out[-1] if out else None
        if isinstance(it, _TableItem) and isinstance(prev, _TableItem) and _continues(prev, it):
            head = prev.table.header
            extra = it.table.rows if it.table.header == head else (it.table.header, *it.table.rows)
            table = Table(head, prev.table.rows + tuple(extra))
            out[-1] = _TableItem(prev.page, prev.top, table, prev.bold_header, it.page)
        else:
            out.append(it)
    return out


class _Assembler:
    """Turns the ordered lines and tables into blocks."""

    def __init__(self, lines: list[_Line]) -> None:
        sizes: Counter[float] = Counter()
        bold_chars = 0
        for line in lines:
            sizes[line.size] += len(line.text)
            bold_chars += len(line.text) if line.bold else 0
        total = sum(sizes.values())
        self.body = sizes.most_common(1)[0][0] if sizes else 0.0
        self.bold_rule = bold_chars * 2 < total
        self.right: dict[int, float] = {}
        for line in lines:
            self.right[line.page] = max(self.right.get(line.page, 0.0), line.x1)

    def is_heading(self, line: _Line) -> bool:
        if len(line.text) > MAX_HEADING_CHARS:
            return False
        if line.size >= self.body * HEADING_RATIO:
            return True
        return (
            self.bold_rule
            and line.bold
            and len(line.text) <= MAX_BOLD_HEADING_CHARS
            and not line.text.endswith(".")
        )

    def new_paragraph(self, prev: _Line, line: _Line) -> bool:
        if line.page != prev.page or line.top - prev.bottom > 0.5 * self.body:
            return True
        if _BULLET.match(line.text):
            return True
        short = prev.x1 < self.right[prev.page] - 0.15 * self.right[prev.page]
        return short and bool(_SENTENCE_END.search(prev.text))


def _headings(items: list[_Line | _TableItem], asm: _Assembler) -> list[tuple[int, int, str]]:
    """Merged heading runs as (first item index, last item index, text)."""
    runs: list[tuple[int, int, str]] = []
    for i, item in enumerate(items):
        if not isinstance(item, _Line) or not asm.is_heading(item):
            continue
        if runs and runs[-1][1] == i - 1:
            prev = items[i - 1]
            if isinstance(prev, _Line) and (prev.size, prev.bold) == (item.size, item.bold):
                first, _, text = runs[-1]
                runs[-1] = (first, i, f"{text} {item.text}")
                continue
        runs.append((i, i, item.text))
    return runs


def _pick_title(
    items: list[_Line | _TableItem], runs: list[tuple[int, int, str]], body: float
) -> tuple[str | None, list[tuple[int, int, str]], set[int]]:
    """The largest heading of page 1 is the title when no heading is larger. Returns the title,
    the remaining heading runs and the item indexes the title used."""
    sizes = {first: getattr(items[first], "size", 0.0) for first, _, _ in runs}
    page1 = [r for r in runs if items[r[0]].page == 1]
    if not page1:
        return None, runs, set()
    best = max(page1, key=lambda r: sizes[r[0]])
    if sizes[best[0]] < max(sizes.values()) or sizes[best[0]] <= body:
        return None, runs, set()
    rest = [r for r in runs if r is not best]
    return best[2], rest, set(range(best[0], best[1] + 1))


def parse(
    path: Path,
    *,
    section_level: int = 2,
    limits: IngestLimits | None = None,
    budget: Budget | None = None,
) -> list[ParsedDocument]:
    """Parse one PDF into a single ParsedDocument (blocks carry pages; no char offsets).
    ``section_level`` is unused: PDF headings have no reliable levels, so sections are flat.
    ``limits``: default :class:`IngestLimits`; ``budget``: checked after every page.

    Raises:
        LimitExceededError: over ``max_pages`` or ``max_uncompressed_bytes``, or past the
            ``budget`` (the message names the limit).
        IngestError: unreadable, corrupt or encrypted PDF (the message says which), or a PDF
            without extractable text.
    """
    items = _join_tables(_drop_running(_read(path, limits or IngestLimits(), budget)))
    lines = [it for it in items if isinstance(it, _Line)]
    if not lines and not any(isinstance(it, _TableItem) for it in items):
        raise IngestError(f"{path}: has no extractable text (scanned?)")
    asm = _Assembler(lines)
    runs = _headings(items, asm)
    title, runs, skip = _pick_title(items, runs, asm.body)
    heading_at = {first: (last, text) for first, last, text in runs}
    blocks: list[Block] = []
    section: tuple[str, ...] = ()
    para: list[_Line] = []
    vocabulary = _vocabulary([ln.text for ln in lines])

    def flush() -> None:
        if para:
            text = join_lines([ln.text for ln in para], vocabulary)
            blocks.append(Block(section, text, page=para[0].page))
            para.clear()

    i = 0
    while i < len(items):
        item = items[i]
        if i in skip:
            i += 1
            continue
        if i in heading_at:
            flush()
            last, text = heading_at[i]
            section = (text,)
            i = last + 1
            continue
        if isinstance(item, _TableItem):
            flush()
            blocks.append(Block(section, table=item.table, page=item.page))
        elif para and asm.new_paragraph(para[-1], item):
            flush()
            para.append(item)
        else:
            para.append(item)
        i += 1
    flush()
    return [ParsedDocument(None, title, tuple(blocks), {})]
