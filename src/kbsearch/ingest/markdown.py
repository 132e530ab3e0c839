"""Markdown parser: CommonMark (markdown-it-py) with GFM tables and YAML front matter.

Footnote references (``[^1]``, GFM) are left out of the text, and of a heading's.
Headings follow the outline rule of every format (:mod:`kbsearch.ingest.outline`): the first
level-1 heading is the title unless the front matter gives one, headings of levels
2..``section_level`` open sections (their texts form the section path), deeper ones stay as
text. A ``#`` line inside a fenced code block is code, not a
heading (the parser sees a ``fence`` token); setext headings (``Title`` over ``---``) are
headings. A heading's trailing attribute list (``## Install {#install}``, ``{: #id .class }``,
``{.unnumbered}``, ``{-}``: Python-Markdown's attr_list, Pandoc, kramdown, Docusaurus) sets the
site's anchor, not text a reader sees: it is left out of the heading, so of the section path
and the passage id. Offsets come from the token line map. Template and shortcode markup (Twig,
Liquid, Hugo, Grav) is removed from the text outside code (:mod:`kbsearch.ingest.markup`), and
MkDocs' admonitions, details and content tabs are read as the Markdown their indented body is
(:mod:`kbsearch.ingest.admonitions`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import yaml
from bs4 import BeautifulSoup
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

from kbsearch.errors import IngestError, shown_value
from kbsearch.ingest.admonitions import unfold
from kbsearch.ingest.html import strip_chrome
from kbsearch.ingest.inventory import COLUMNS
from kbsearch.ingest.markup import closed_shortcodes, strip_markup
from kbsearch.ingest.metadata import check_yaml_tags
from kbsearch.ingest.outline import DEEPEST_LEVEL, Outline
from kbsearch.ingest.text import normalize, normalize_lines, read_text
from kbsearch.records import ParsedDocument, Table

SUFFIXES = (".md", ".markdown")
# the front-matter fields kbsearch reads: an inventory row's columns but the file's own name
READ_FIELDS = frozenset(c for c in COLUMNS if c != "file")
# a heading's attribute list at its end: `{#id ...}`, `{.class ...}`, `{: anything}`, `{-}`
_ATTRIBUTE_LIST = re.compile(r"\s*\{(?::[^{}]*|\s*[#.][^{}]*|\s*-\s*)\}\s*$")


def _parser() -> MarkdownIt:
    """CommonMark with GFM tables, YAML front matter and GFM footnotes: a reference ``[^1]``
    (one whose ``[^1]: text`` the page defines) is no text, and a definition is read as a
    paragraph where it is written (not moved to the page's end, into another section)."""
    return (
        MarkdownIt("commonmark")
        .enable("table")
        .use(front_matter_plugin)
        .use(footnote_plugin, inline=False, move_to_end=False)
    )


def _inline_text(token: Token, closed: frozenset[str] = frozenset()) -> str:
    """Plain text of an inline token: text, code spans and image alt texts; markup dropped,
    template and shortcode tags too outside code spans (:mod:`kbsearch.ingest.markup`;
    ``closed``: the document's closed shortcodes)."""
    parts: list[str] = []
    run: list[str] = []  # text between code spans and images, emphasis included
    for child in token.children or ():
        if child.type == "text":
            run.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            run.append("\n")
        elif child.type in ("code_inline", "image"):
            parts += [strip_markup("".join(run), closed), child.content]
            run = []
    parts.append(strip_markup("".join(run), closed))
    return normalize("".join(parts))


_NULL_TAG = "tag:yaml.org,2002:null"


def _node_text(node: yaml.Node) -> str:
    """A front-matter value as written: ``version: 1.10`` stays ``"1.10"`` and a date stays
    its text (checked later), a null is empty; a list (of a field kbsearch does not read,
    such as ``tags``) is its plain items joined with ``", "``, nested ones left out, so that
    aliases cannot make its text grow beyond what is written."""
    if isinstance(node, yaml.ScalarNode):
        return "" if node.tag == _NULL_TAG else str(node.value)
    if isinstance(node, yaml.SequenceNode):
        items = (item for item in node.value if isinstance(item, yaml.ScalarNode))
        return ", ".join(t for t in (_node_text(item) for item in items) if t)
    return ""  # a nested mapping carries no field kbsearch reads


def _heading_text(token: Token, closed: frozenset[str]) -> str:
    """A heading's text (its ``inline`` token) without a trailing attribute list (module
    docstring); one inside a code span (``## The `{#id}` syntax``) is text."""
    text = _inline_text(token, closed)
    children = token.children or []
    last = children[-1] if children else None
    if last is not None and last.type == "text" and _ATTRIBUTE_LIST.search(last.content):
        text = _ATTRIBUTE_LIST.sub("", text)
    return text


def _front_matter(content: str, path: Path) -> dict[str, str]:
    """Front-matter keys and their values as text (YAML is composed, not constructed, so
    numbers and dates are not reinterpreted).

    Raises:
        IngestError: malformed YAML, not a mapping, a field kbsearch reads given twice with
            different values, or a value with a tag that asks for an object
            (:func:`~kbsearch.ingest.metadata.check_yaml_tags`).
    """
    try:
        root = yaml.compose(content, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise IngestError(f"{path}: malformed YAML front matter ({reason})") from exc
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        raise IngestError(f"{path}: front matter must be a YAML mapping of keys to values")
    fields = [(key, value) for key, value in root.value if isinstance(key, yaml.ScalarNode)]
    given: dict[str, str] = {}
    for key, value in fields:
        name = str(key.value)
        if name in READ_FIELDS and isinstance(value, yaml.ScalarNode):
            text = _node_text(value)
            if given.setdefault(name, text) != text:  # YAML's loaders keep the last silently
                raise IngestError(
                    f"{path}: front matter gives {name!r} twice, {shown_value(given[name])}"
                    f" then {shown_value(text)}; keep one"
                )
        check_yaml_tags(str(key.value), value, path)
        if str(key.value) in READ_FIELDS and not isinstance(value, yaml.ScalarNode):
            kind = "a list" if isinstance(value, yaml.SequenceNode) else "a mapping"
            raise IngestError(
                f"{path}: front matter field {str(key.value)!r} must be plain text, not {kind}"
            )
    return {str(key.value): _node_text(value) for key, value in fields}


class _Builder(Outline):
    """The document's outline, with each token's character span in the source."""

    def __init__(self, source: str, section_level: int) -> None:
        super().__init__(section_level)
        starts = [0]
        for line in source.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))
        self._line_starts = starts

    def _span(self, token: Token) -> tuple[int | None, int | None]:
        if not token.map:
            return None, None
        first, last = token.map
        last = min(last, len(self._line_starts) - 1)
        return self._line_starts[first], self._line_starts[last]

    def block(self, text: str, token: Token, table: Table | None = None) -> None:
        start, end = self._span(token)
        self.add(text, table, start=start, end=end)

    def heading_at(self, level: int, text: str, token: Token) -> None:
        start, end = self._span(token)
        self.heading(level, text, start=start, end=end)


def _table(tokens: Sequence[Token], i: int, closed: frozenset[str]) -> tuple[Table, int]:
    """Read the table starting at ``tokens[i]`` (``table_open``); returns it and the index of
    its ``table_close``."""
    header: list[str] = []
    rows: list[list[str]] = []
    in_head = False
    while tokens[i].type != "table_close":
        tok = tokens[i]
        if tok.type == "thead_open":
            in_head = True
        elif tok.type == "thead_close":
            in_head = False
        elif tok.type == "tr_open" and not in_head:
            rows.append([])
        elif tok.type == "inline":
            (header if in_head else rows[-1]).append(_inline_text(tok, closed))
        i += 1
    return Table(tuple(header), tuple(tuple(r) for r in rows if any(r))), i


def parse(path: Path, *, section_level: int = DEEPEST_LEVEL) -> list[ParsedDocument]:
    """Parse one Markdown file into a single ParsedDocument.

    Raises:
        IngestError: unreadable file, not UTF-8, or malformed front matter.
    """
    return [parse_text(read_text(path), path, section_level=section_level)]


def parse_text(source: str, path: Path, *, section_level: int = DEEPEST_LEVEL) -> ParsedDocument:
    """Parse Markdown ``source`` (read from ``path``, named in errors).

    Raises:
        IngestError: malformed front matter.
    """
    tokens = _parser().parse(unfold(source))  # as many lines: the line map points into source
    build = _Builder(source, section_level)
    closed = closed_shortcodes(source)
    metadata: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "front_matter":
            metadata = _front_matter(tok.content, path)
            build.title = metadata.get("title") or None  # a later `#` heading stays as text
        elif tok.type == "heading_open":
            build.heading_at(int(tok.tag[1:]), _heading_text(tokens[i + 1], closed), tok)
            i += 2  # skip inline and heading_close
        elif tok.type == "paragraph_open":
            build.block(_inline_text(tokens[i + 1], closed), tok)
            i += 2
        elif tok.type in ("fence", "code_block"):
            build.block(normalize_lines(tok.content), tok)
        elif tok.type == "html_block":
            soup = BeautifulSoup(tok.content, "lxml")
            strip_chrome(soup)
            build.block(normalize(strip_markup(soup.get_text(" "), closed)), tok)
        elif tok.type == "table_open":
            table, end = _table(tokens, i, closed)
            if table.header or table.rows:
                build.block("", tok, table)
            i = end
        i += 1
    title = metadata.get("title") or build.title
    doc_id = metadata.get("doc_id") or None
    return ParsedDocument(doc_id, title, tuple(build.blocks), metadata)
