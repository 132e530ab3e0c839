"""HTML parser (BeautifulSoup + lxml): the main content only, sections at ``h2``..``h6``
(the outline rule of every format: :mod:`kbsearch.ingest.outline`).

The content root is the first ``<main>`` or ``[role=main]`` element, else every top-level
``<article>`` (the sibling articles of a FAQ page, each read with its heading as its section),
else ``<body>``; articles left outside ``<main>`` are named in a warning, never dropped
silently. Scripts, styles, navigation, headers, footers, asides, forms and similar chrome are
removed, and so is a help centre's page furniture (:func:`is_furniture`): the "Was this article
helpful?" votes and the "Related articles" lists, found by their class or id, their role, or
the heading that opens them. Every block-level element (``p``, ``li``, ``div``, ``td``...)
ends a text block, so adjacent items are never glued (``<li>a</li><li>b</li>`` gives two
blocks ``a`` and ``b``); ``<br>`` is a space. Question text in buttons (accordion FAQs) and
``<summary>`` is content; control-only buttons are dropped. Entities are decoded by the parser.
A table holding headings or other tables is page layout and is read as text. The title is the
first ``<h1>``, else ``<title>``.

A page's metadata may be written as ``<meta name="FIELD" content="VALUE">`` (or
``name="kbsearch:FIELD"``, or ``property=`` for ``name=``, as RDFa writes it; a name given
twice with different contents is refused), for the fields :data:`META_FIELDS`, as Markdown
front matter gives them: ``<meta name="access" content="staff">`` makes the page staff-only.
Other metadata a site's pages carry (``description``, ``language``...) is not read: the
language comes from the file name or from detection, as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from bs4 import BeautifulSoup, NavigableString, Tag, UnicodeDammit
from bs4.element import Comment, Declaration, Doctype, PageElement, ProcessingInstruction

from kbsearch.errors import IngestError, shown_value
from kbsearch.ingest.outline import DEEPEST_LEVEL, Outline
from kbsearch.ingest.text import normalize, normalize_lines, read_bytes
from kbsearch.records import ParsedDocument, Table
from kbsearch.text.analysis import controls_as_spaces

SUFFIXES = (".html", ".htm")
# the fields a <meta name> may give, as front matter does (never title or language, which
# ordinary pages carry with other meanings: the title is the page's h1, the language detected)
META_FIELDS = ("doc_id", "version", "access", "effective_from", "effective_to", "owner", "doc_type")
META_PREFIX = "kbsearch:"

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
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# Page furniture of help centres (Zendesk `article-votes`, `related-articles`, `article-relatives`;
# Freshdesk `article-vote`; Help Scout `related`; `article-feedback`, `article-footer`...): a
# word of an element's class or id, its ARIA role, or the heading that opens it.
_FURNITURE_WORDS = frozenset(
    {"related", "relatives", "vote", "votes", "voting", "feedback", "helpful", "footer"}
)
_FURNITURE_ROLES = frozenset({"complementary", "contentinfo"})
_FURNITURE_HEADINGS = frozenset(
    {
        *("related articles", "related", "articles associés", "articles connexes"),
        *("articles liés", "articles en rapport", "was this article helpful?"),
        *("was this page helpful?", "cet article vous a-t-il été utile ?"),
        "cette page vous a-t-elle été utile ?",
    }
)
_WORD_SPLIT = re.compile(r"[-_\s]+")


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


def _words(tag: Tag) -> set[str]:
    classes = tag.get("class")
    names = [str(c) for c in classes] if isinstance(classes, list) else [str(classes or "")]
    names.append(str(tag.get("id") or ""))
    return {w for name in names for w in _WORD_SPLIT.split(name.lower()) if w}


def _heading_text(tag: Tag) -> str:
    return normalize(tag.get_text(" ")).casefold().replace("\u00a0", " ")


def is_furniture(tag: Tag) -> bool:
    """True for a help centre's vote or related-articles block: a class or id word among
    ``related``, ``relatives``, ``vote(s)``, ``voting``, ``feedback``, ``helpful``, ``footer``
    (``article-votes``, ``related-articles``), the ARIA role ``complementary`` or
    ``contentinfo``, or a section or division whose first element is a heading such as
    "Related articles" / "Articles associés" / "Was this article helpful?"."""
    if _words(tag) & _FURNITURE_WORDS or str(tag.get("role") or "") in _FURNITURE_ROLES:
        return True
    if tag.name not in ("section", "div"):
        return False
    first = next((c for c in tag.children if isinstance(c, Tag)), None)
    return (
        first is not None
        and first.name in _HEADINGS
        and (_heading_text(first) in _FURNITURE_HEADINGS)
    )


def _furniture_run(heading: Tag) -> list[Tag]:
    """A furniture heading that opens no block of its own: it and the elements after it up to
    the next heading of its level or higher."""
    level = int(heading.name[1])
    run = [heading]
    for sibling in heading.find_next_siblings():
        if sibling.name in _HEADINGS and int(sibling.name[1]) <= level:
            break
        run.append(sibling)
    return run


def strip_chrome(root: Tag) -> None:
    """Remove scripts, styles, navigation, headers, footers, forms... hidden elements,
    buttons that are controls only ("Copy", "Close"; question buttons stay, see
    :func:`_is_content_button`) and page furniture (:func:`is_furniture`)."""
    controls = [b for b in root.find_all("button") if not _is_content_button(b)]
    furniture = [t for t in root.find_all(True) if is_furniture(t)]
    runs = [
        tag
        for h in root.find_all(_HEADINGS)
        if _heading_text(h) in _FURNITURE_HEADINGS
        for tag in _furniture_run(h)
    ]
    for tag in [*root.find_all(_DROP), *root.select("[hidden]"), *controls, *furniture, *runs]:
        if not tag.decomposed and tag is not root:
            tag.decompose()


class _Walker(Outline):
    def __init__(self, section_level: int) -> None:
        super().__init__(section_level)
        self.buffer: list[str] = []

    def flush(self) -> None:
        text = normalize("".join(self.buffer))
        self.buffer.clear()
        self.add(text)

    def walk(self, root: Tag, opening: Tag | None = None) -> None:
        """Read ``root``'s subtree in document order with an explicit stack (no recursion,
        so pages nested thousands of elements deep are read too). ``opening``: a heading of
        ``root`` that opens a section whatever its level (an article's own heading)."""
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
            if child is opening:
                self.flush()
                self.open_top(normalize(child.get_text(" ")))
            elif name in _HEADINGS:
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


def _inside(tag: Tag, names: Sequence[str]) -> bool:
    return tag.find_parent(list(names)) is not None


def _content_roots(soup: BeautifulSoup) -> tuple[list[Tag], list[str]]:
    """The elements holding the page's content (module docstring), in document order, and
    the warnings about content left out (articles outside ``<main>``)."""
    articles = [
        a
        for a in soup.find_all("article")
        if not _inside(a, ["article", *_DROP]) and not (is_furniture(a))
    ]
    for selector in ("main", "[role=main]"):
        candidate = soup.select_one(selector)
        if candidate is not None:
            outside = [a for a in articles if a is not candidate and candidate not in a.parents]
            outside = [a for a in outside if a not in candidate.parents]
            if not outside:
                return [candidate], []
            return [candidate], [
                f"{len(outside)} <article> element(s) outside <main> not read"
                f" (the first: {normalize(outside[0].get_text(' '))[:60]!r})"
            ]
    if articles:
        return articles, []
    body = soup.find("body")
    return [body if isinstance(body, Tag) else soup], []


def _own_heading(article: Tag, level: int) -> Tag | None:
    """An article's first heading when it is deeper than the section level: it opens the
    article's section anyway (a FAQ's ``<h3>`` question), so each article is a section."""
    heading = article.find(_HEADINGS)
    if isinstance(heading, Tag) and heading.name != "h1" and int(heading.name[1]) > level:
        return heading
    return None


def meta_fields(soup: BeautifulSoup, path: Path) -> dict[str, str]:
    """The :data:`META_FIELDS` a page's ``<meta name content>`` (or ``property``) tags give
    (case-insensitive, with or without :data:`META_PREFIX`), their content as text; a name
    may repeat with the same content.

    Raises:
        IngestError: two tags of one name give different contents (``access`` public, then
            staff: whichever were taken, the page's label would be a guess).
    """
    found: dict[str, str] = {}
    for tag in soup.find_all("meta"):
        if not isinstance(tag, Tag):
            continue
        # name= (HTML's), or property= (RDFa's, as Open Graph writes them)
        given = tag.get("name") or tag.get("property") or ""
        name = str(given).strip().lower().removeprefix(META_PREFIX)
        if name not in META_FIELDS:
            continue
        content = normalize(str(tag.get("content") or ""))
        if found.setdefault(name, content) != content:
            raise IngestError(
                f"{path}: <meta name={name!r}> is given twice, {shown_value(found[name])}"
                f" then {shown_value(content)}; keep one"
            )
    return found


def parse(path: Path, *, section_level: int = DEEPEST_LEVEL) -> list[ParsedDocument]:
    """Parse one HTML file into a single ParsedDocument (no character offsets).

    Raises:
        IngestError: the file cannot be read; a metadata field given twice
            (:func:`meta_fields`).
    """
    # decoded as Beautiful Soup decodes bytes (the declared encoding, else detection), so
    # that a NUL or another control character becomes a space, not U+FFFD inside a word
    markup = UnicodeDammit(read_bytes(path), is_html=True).unicode_markup or ""
    soup = BeautifulSoup(controls_as_spaces(markup), "lxml")
    metadata = meta_fields(soup, path)
    roots, warnings = _content_roots(soup)
    # the first h1 of the content, else (sibling articles) the page's, outside its chrome
    found = [h for r in roots for h in [r.find("h1")] if isinstance(h, Tag)]
    if not found and len(roots) > 1:
        found = [h for h in soup.find_all("h1") if not _inside(h, _DROP)]
    h1 = found[0] if found else None
    first_h1 = normalize(h1.get_text(" ")) if isinstance(h1, Tag) else ""
    walker = _Walker(section_level)
    for root in roots:
        strip_chrome(root)
        opening = _own_heading(root, section_level) if len(roots) > 1 else None
        if opening is not None:
            walker.flush()
        walker.walk(root, opening)
        walker.flush()
    title_tag = soup.find("title")
    page_title = normalize(title_tag.get_text(" ")) if isinstance(title_tag, Tag) else ""
    title = walker.title or first_h1 or page_title or None
    return [ParsedDocument(None, title, tuple(walker.blocks), metadata, tuple(warnings))]
