"""HTML parser (BeautifulSoup + lxml): the main content only, sections at ``h2``..``h6``
(the outline rule of every format: :mod:`kbsearch.ingest.outline`).

The content root is the first ``<main>``, ``<article>`` or ``[role=main]`` element, else
``<body>``. Scripts, styles, navigation, headers, footers, asides, forms and similar chrome are
removed. Every block-level element (``p``, ``li``, ``div``, ``td``...) ends a text block, so
adjacent items are never glued (``<li>a</li><li>b</li>`` gives two blocks ``a`` and ``b``);
``<br>`` is a space. Question text in buttons (accordion FAQs) and ``<summary>`` is content;
control-only buttons are dropped. Entities are decoded by the parser. A table holding headings
or other tables is page layout and is read as text. The title is the first ``<h1>``, else
``<title>``.
"""

from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import Comment, Declaration, Doctype, PageElement, ProcessingInstruction

from kbsearch.ingest.outline import DEEPEST_LEVEL, Outline
from kbsearch.ingest.text import normalize, normalize_lines, read_bytes
from kbsearch.records import ParsedDocument, Table

SUFFIXES = (".html", ".htm")

_DROP = [
    *("script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form"),
    *("iframe", "svg", "canvas", "select", "input", "textarea", "dialog"),
]
# Attributes of a button that opens or closes content (Bootstrap accordions, ARIA disclosures).
_DISCLOSURE = ("aria-expanded", "aria-controls", "data-bs-toggle", "data-toggle")
_BLOCK = {
    *("address", "article", "blockquote", "dd", "details", "div", "dl", "dt", "fieldset"),
    *("figcaption", "figure", "hr", "li", "main", "ol", "p", "section", "summary", "ul"),
    *("caption", "button"),
}
_SKIPPED_STRINGS = (Comment, Declaration, Doctype, ProcessingInstruction)


def _cell_text(cell: Tag) -> str:
    return normalize(cell.get_text(" "))


def _table(table: Tag) -> Table | None:
    """Rows of ``table`` (nested tables are read as text of their cell). The header is the row
    of ``<th>`` cells in ``<thead>`` or the first row."""
    rows: list[tuple[str, ...]] = []
    header_index: int | None = None
    for tr in table.find_all("tr"):
        if tr.find_parent("table") is not table:
            continue
        cells = tr.find_all(["th", "td"], recursive=False)
        if not cells:
            continue
        if header_index is None and tr.find_parent("thead") is not None:
            header_index = len(rows)
        rows.append(tuple(_cell_text(c) for c in cells))
    rows = [r for r in rows if any(r)]
    if not rows:
        return None
    index = header_index if header_index is not None and header_index < len(rows) else 0
    header = rows[index]
    return Table(header, tuple(rows[:index] + rows[index + 1 :]))


def _is_layout(table: Tag) -> bool:
    """A table used for page layout (it holds headings or other tables) is read as text."""
    return table.find(["table", "h1", "h2", "h3", "h4", "h5", "h6"]) is not None


def _is_content_button(button: Tag) -> bool:
    """A button whose text is content: it sits in a heading or a ``<summary>``, it opens or
    closes content (an accordion question), or its text is a question."""
    if button.find_parent(["h1", "h2", "h3", "h4", "h5", "h6", "summary", "dt"]) is not None:
        return True
    if any(button.has_attr(name) for name in _DISCLOSURE):
        return True
    return normalize(button.get_text(" ")).endswith("?")


def strip_chrome(root: Tag) -> None:
    """Remove scripts, styles, navigation, headers, footers, forms... hidden elements and
    buttons that are controls only ("Copy", "Close"); question buttons stay (see
    :func:`_is_content_button`)."""
    controls = [b for b in root.find_all("button") if not _is_content_button(b)]
    for tag in [*root.find_all(_DROP), *root.select("[hidden]"), *controls]:
        if not tag.decomposed:
            tag.decompose()


class _Walker(Outline):
    def __init__(self, section_level: int) -> None:
        super().__init__(section_level)
        self.buffer: list[str] = []

    def flush(self) -> None:
        text = normalize("".join(self.buffer))
        self.buffer.clear()
        self.add(text)

    def walk(self, root: Tag) -> None:
        """Read ``root``'s subtree in document order with an explicit stack (no recursion,
        so pages nested thousands of elements deep are read too)."""
        stack: list[PageElement | None] = list(reversed(list(root.children)))
        while stack:
            child = stack.pop()
            if child is None:  # the end of a block element
                self.flush()
                continue
            if isinstance(child, NavigableString):
                if not isinstance(child, _SKIPPED_STRINGS):
                    self.buffer.append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name
            if name in ("h1", "h2", "h3", "h4", "h5", "h6"):
                self.flush()
                self.heading(int(name[1]), normalize(child.get_text(" ")))
            elif name == "table" and not _is_layout(child):
                self.flush()
                table = _table(child)
                if table is not None:
                    self.add(table=table)
            elif name == "pre":
                self.flush()
                self.add(normalize_lines(child.get_text()))
            elif name == "br":
                self.buffer.append(" ")
            else:
                if name in _BLOCK:
                    self.flush()
                    stack.append(None)
                stack.extend(reversed(list(child.children)))


def _content_root(soup: BeautifulSoup) -> Tag:
    for selector in ("main", "[role=main]", "article"):
        candidate = soup.select_one(selector)
        if candidate is not None:
            return candidate
    body = soup.find("body")
    return body if isinstance(body, Tag) else soup


def parse(path: Path, *, section_level: int = DEEPEST_LEVEL) -> list[ParsedDocument]:
    """Parse one HTML file into a single ParsedDocument (no character offsets).

    Raises:
        IngestError: the file cannot be read.
    """
    soup = BeautifulSoup(read_bytes(path), "lxml")
    root = _content_root(soup)
    h1 = root.find("h1")
    first_h1 = normalize(h1.get_text(" ")) if isinstance(h1, Tag) else ""
    strip_chrome(root)
    walker = _Walker(section_level)
    walker.walk(root)
    walker.flush()
    title_tag = soup.find("title")
    page_title = normalize(title_tag.get_text(" ")) if isinstance(title_tag, Tag) else ""
    title = walker.title or first_h1 or page_title or None
    return [ParsedDocument(None, title, tuple(walker.blocks), {})]
