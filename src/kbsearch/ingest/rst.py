"""reStructuredText parser (docutils): sections, paragraphs, lists, literal blocks, tables.

docutils builds the document tree (``publish_doctree``) with file inclusion and raw
directives disabled and its warnings silenced; a lone top-level section title becomes the
document title (docutils' ``doctitle_xform``); the sections below it, or the top-level
sections when there are several, are level 2, and so on.
Bibliographic fields (``:version: 1.10``, ``:doc_id:``...) become metadata, read as written.
Blocks carry no character offsets.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from docutils.core import publish_doctree
from docutils.utils import SystemMessage

from kbsearch.errors import IngestError, shown_value
from kbsearch.ingest.inventory import COLUMNS
from kbsearch.ingest.outline import DEEPEST_LEVEL, Outline
from kbsearch.ingest.text import normalize, normalize_lines, read_text
from kbsearch.records import ParsedDocument, Table

SUFFIXES = (".rst",)
_SETTINGS = {
    "report_level": 5,  # no warnings on stderr
    "halt_level": 5,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "input_encoding": "unicode",
}
_SKIP = (nodes.system_message, nodes.comment, nodes.substitution_definition, nodes.target)
_TEXT = (nodes.paragraph, nodes.line_block, nodes.term, nodes.caption, nodes.rubric)


def _table(node: nodes.table) -> Table | None:
    rows: list[tuple[str, ...]] = []
    header: tuple[str, ...] | None = None
    for row in node.findall(nodes.row):
        cells = tuple(normalize(entry.astext()) for entry in row.children)
        if isinstance(row.parent, nodes.thead) and header is None:
            header = cells
        elif any(cells):
            rows.append(cells)
    if header is None:
        if not rows:
            return None
        header, rows = rows[0], rows[1:]
    return Table(header, tuple(rows))


def _metadata(docinfo: nodes.docinfo, path: Path) -> dict[str, str]:
    """The bibliographic fields, by lower-case name.

    Raises:
        IngestError: a field kbsearch reads (an inventory column) given twice with different
            values (``:access: public``, then ``:access: staff``: the last was kept).
    """
    out: dict[str, str] = {}
    for child in docinfo.children:
        if isinstance(child, nodes.field):
            name, value = normalize(child[0].astext()).lower(), normalize(child[1].astext())
        elif isinstance(child, nodes.Element):
            name, value = child.tagname.lower(), normalize(child.astext())
        else:
            continue
        if name in COLUMNS and out.get(name, value) != value:
            raise IngestError(
                f"{path}: the field {name!r} is given twice, {shown_value(out[name])} then"
                f" {shown_value(value)}; keep one"
            )
        out[name] = value
    return out


class _RstWalker:
    def __init__(self, section_level: int, path: Path) -> None:
        self.outline = Outline(section_level)
        self.metadata: dict[str, str] = {}
        self.path = path

    def walk(self, node: nodes.Element, depth: int) -> None:
        for child in node.children:
            if isinstance(child, _SKIP) or not isinstance(child, nodes.Element):
                continue
            if isinstance(child, nodes.section):
                title = child.next_node(nodes.title)
                self.outline.heading(depth + 1, normalize(title.astext()) if title else "")
                self.walk(child, depth + 1)
                self.outline.close(depth + 1)
            elif isinstance(child, nodes.title | nodes.subtitle):
                continue  # read by the section (or the document title)
            elif isinstance(child, nodes.docinfo):
                self.metadata.update(_metadata(child, self.path))
            elif isinstance(child, nodes.literal_block | nodes.doctest_block):
                self.outline.add(normalize_lines(child.astext()))
            elif isinstance(child, nodes.table):
                table = _table(child)
                if table is not None:
                    self.outline.add(table=table)
            elif isinstance(child, _TEXT):
                self.outline.add(normalize(child.astext()))
            else:  # lists, admonitions, block quotes, definitions...: their own blocks
                self.walk(child, depth)


def parse(path: Path, *, section_level: int = DEEPEST_LEVEL) -> list[ParsedDocument]:
    """Parse one reStructuredText file into a single ParsedDocument.

    Raises:
        IngestError: unreadable file, not UTF-8, a document docutils cannot read, or a
            field given twice with different values.
    """
    source = read_text(path)
    try:
        tree = publish_doctree(source, source_path=str(path), settings_overrides=_SETTINGS)
    except (SystemMessage, ValueError, AttributeError, KeyError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise IngestError(f"{path}: not readable as reStructuredText ({reason[:200]})") from exc
    walker = _RstWalker(section_level, path)
    title = tree.next_node(nodes.title)
    if title is not None and title.parent is tree:  # docutils promoted the top title
        walker.outline.title = normalize(title.astext())
    walker.walk(tree, 1)  # top-level sections are level 2 (sections), as under a title
    metadata = walker.metadata
    doc_title = metadata.get("title") or walker.outline.title
    return [
        ParsedDocument(
            metadata.get("doc_id") or None, doc_title, tuple(walker.outline.blocks), metadata
        )
    ]
