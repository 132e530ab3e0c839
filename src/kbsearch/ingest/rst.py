"""reStructuredText parser (docutils): sections, paragraphs, lists, literal blocks, tables.

docutils builds the document tree (``publish_doctree``) with file inclusion and raw
directives disabled and its warnings silenced; a lone top-level section title becomes the
document title (docutils' ``doctitle_xform``); the sections below it, or the top-level
sections when there are several, are level 2, and so on.
Bibliographic fields (``:version: 1.10``, ``:doc_id:``...) become metadata, read as written.
Blocks carry no character offsets.

Sphinx's markup, which docutils alone does not know, is read as Sphinx shows it, so a Sphinx
project's pages lose no text:

- its directives (:data:`SPHINX_DIRECTIVES`): ``.. option:: --gui-password=<password>``,
  ``.. versionadded:: 1.2``, ``.. seealso::``, ``.. tab::``... give their argument as a line
  and their content as blocks: a signature as written (:data:`SPHINX_SIGNATURES`), a title
  in inline markup (:data:`SPHINX_TITLED`; a ``seealso``'s led by ``See also:``), a version
  note as Sphinx words it (``New in version 1.2.``, or ``Changed in version 2.0: `` and the
  text after the version); a
  condition or a layout (``only:: html``, ``grid:: 1 2``: :data:`SPHINX_CONTAINERS`) is not
  shown, a code tab's content is code; those that name other files or draw (``toctree``,
  ``literalinclude``, ``graphviz``, ``autoclass``...: :data:`SPHINX_SKIPPED`) give nothing;
  docutils alone dropped every such directive with its content. ``.. class::`` stays
  docutils' own (class names, no text) when its argument is class names as docutils writes
  them (``special``), so a plain docutils page reads as before;
- an interpreted text role docutils does not know (``:ref:`the folder <config-locations>```,
  ``:option:`--gui-password```, ``:py:func:`~os.path.join```, a project's own) gives its
  text: the title before a ``<target>``, the last part of a ``~`` path, a bare ``:ref:`label```
  to a section of the same page that section's title (as Sphinx shows it; a label of another
  page gives itself); docutils kept the raw markup.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import Directive, directives
from docutils.parsers.rst.directives import misc
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
# Sphinx's directives (sphinx.directives, sphinx.domains' std/py/c/cpp/js/rst, sphinx-tabs,
# sphinx-design), by what their argument is. A signature, shown as written:
SPHINX_SIGNATURES = (
    "option", "cmdoption", "program", "envvar", "describe", "object", "confval",
    "productionlist", "index-entry", "function", "class", "method", "attribute", "data",
    "exception", "decorator", "py:function", "py:class", "py:method", "py:attribute", "py:data",
    "py:exception", "py:module", "py:decorator", "py:property", "c:function", "c:macro",
    "c:struct", "c:type", "c:member", "c:var", "cpp:function", "cpp:class", "cpp:type",
    "cpp:member", "js:function", "js:class", "js:data", "js:attribute", "js:method",
    "rst:directive", "rst:role", "rst:directive:option",
)  # fmt: skip
# a title, in inline markup (its roles read as their text):
SPHINX_TITLED = (
    "seealso", "centered", "todo", "tab", "group-tab", "tab-item", "card", "grid-item-card",
    "dropdown",
)  # fmt: skip
# a condition, a layout or none, not shown (``only:: html``, ``grid:: 1 2 3``): the content alone
SPHINX_CONTAINERS = (
    "only", "ifconfig", "tabs", "tab-set", "grid", "grid-item", "hlist", "glossary",
)  # fmt: skip
# a language, not shown: the content is code (sphinx-tabs' ``code-tab:: python``)
SPHINX_CODE = ("code-tab",)
# a version, then the note's text (``versionchanged:: 2.0`` and ``:func:`f` returns...``)
SPHINX_VERSIONS = {
    "versionadded": "New in version {}",
    "versionchanged": "Changed in version {}",
    "deprecated": "Deprecated since version {}",
    "versionremoved": "Removed in version {}",
}
SPHINX_DIRECTIVES = (
    *SPHINX_SIGNATURES, *SPHINX_TITLED, *SPHINX_CONTAINERS, *SPHINX_CODE, *SPHINX_VERSIONS
)  # fmt: skip
# directives that name other files, draw, or set the parser's state: no text of their own
SPHINX_SKIPPED = (
    "toctree", "literalinclude", "graphviz", "digraph", "graph", "inheritance-diagram",
    "autoclass", "autofunction", "automodule", "automethod", "autoattribute", "autodata",
    "autoexception", "autosummary", "currentmodule", "module", "default-domain", "highlight",
    "sectionauthor", "moduleauthor", "codeauthor", "index", "tabularcolumns", "plot",
    "mermaid", "uml", "doxygenfunction", "doxygenclass", "py:currentmodule", "c:namespace",
    "cpp:namespace",
)  # fmt: skip
# an interpreted text role docutils left as problematic: ``:role:`text``` or ``:dom:role:`...```
_UNKNOWN_ROLE = re.compile(r":(?:[\w.+-]+:)+`(?P<text>.*)`", re.DOTALL)
_TARGET = re.compile(r"(?P<title>.*?)\s*<[^<>]*>", re.DOTALL)


class _AnyOptions(dict[str, Callable[[str], Any]]):
    """A directive's option spec that takes every option, as text (Sphinx's directives have
    many; what they set is not text of the page)."""

    def __bool__(self) -> bool:  # docutils reads the options of a directive with a spec
        return True

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> Callable[[str], Any]:
        return directives.unchanged


class _Shown(Directive):
    """A Sphinx directive read as Sphinx shows it: its argument (a signature) as a line, as
    written, its content parsed as blocks of the page."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Callable[[str], Any]] | None] = _AnyOptions()

    def run(self) -> list[nodes.Node]:
        argument = " ".join(self.arguments[0].split()) if self.arguments else ""
        return [*(self.heading(argument) if argument else []), *self.body()]

    def heading(self, argument: str) -> list[nodes.Node]:
        return [nodes.paragraph(argument, argument)]

    def body(self) -> list[nodes.Node]:
        if not self.content:
            return []
        holder = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, holder)
        return list(holder.children)

    def inline(self, prefix: str, text: str) -> list[nodes.Node]:
        """A paragraph of ``prefix`` and ``text`` read as inline markup, and docutils'
        messages about it (an unknown role's: :func:`_unknown_roles_as_text`)."""
        parsed, messages = self.state.inline_text(text, self.lineno)
        return [nodes.paragraph(prefix + text, "", nodes.Text(prefix), *parsed), *messages]


class _Titled(_Shown):
    """A directive whose argument is a title in inline markup (:data:`SPHINX_TITLED`)."""

    def heading(self, argument: str) -> list[nodes.Node]:
        return self.inline("", argument)


class _SeeAlso(_Titled):
    """``seealso``: Sphinx heads it "See also"; its argument, or else its first paragraph,
    starts with ``See also:`` (``See also: the folder``), so the note still reads as one."""

    prefix = "See also: "

    def heading(self, argument: str) -> list[nodes.Node]:
        return self.inline(self.prefix, argument)

    def run(self) -> list[nodes.Node]:
        shown = super().run()
        if self.arguments:
            return shown
        first = shown[0] if shown else None
        if isinstance(first, nodes.paragraph):
            first.insert(0, nodes.Text(self.prefix))
            return shown
        return [nodes.paragraph(self.prefix.strip(), self.prefix.strip()), *shown]


class _Container(_Shown):
    """A directive whose argument is not shown (:data:`SPHINX_CONTAINERS`)."""

    def heading(self, argument: str) -> list[nodes.Node]:
        return []


class _Code(_Container):
    """A directive whose content is code (:data:`SPHINX_CODE`)."""

    def body(self) -> list[nodes.Node]:
        code = "\n".join(self.content)
        return [nodes.literal_block(code, code)] if code.strip() else []


class _Version(_Shown):
    """A version note (:data:`SPHINX_VERSIONS`): ``New in version 1.2.``, or ``Changed in
    version 2.0: `` and the text that follows the version, in inline markup."""

    line = "{}"

    def heading(self, argument: str) -> list[nodes.Node]:
        version, _, text = argument.partition(" ")
        if not text:
            prefix = f"{self.line.format(version)}."
            return [nodes.paragraph(prefix, prefix)]
        return self.inline(f"{self.line.format(version)}: ", text)


class _Class(_Shown):
    """``class``: docutils' own directive (the next element's or the content's class names,
    no text) when its argument is class names as docutils writes them (``.. class::
    special``), else Sphinx's Python class (``.. class:: Point(x, y)``), a signature."""

    def run(self) -> list[nodes.Node]:
        names = self.arguments[0].split() if self.arguments else []
        if names and all(nodes.make_id(name) == name for name in names):
            own = misc.Class(
                self.name, self.arguments, {}, self.content, self.lineno, self.content_offset,
                self.block_text, self.state, self.state_machine,
            )  # fmt: skip
            return list(own.run())
        return super().run()


class _Skipped(_Shown):
    """A Sphinx directive with no text of its own (:data:`SPHINX_SKIPPED`)."""

    def run(self) -> list[nodes.Node]:
        return []


def _register() -> None:
    kinds: list[tuple[Iterable[str], type[_Shown]]] = [
        (SPHINX_SIGNATURES, _Shown),
        (SPHINX_TITLED, _Titled),
        (SPHINX_CONTAINERS, _Container),
        (SPHINX_CODE, _Code),
        (SPHINX_SKIPPED, _Skipped),
    ]
    special: dict[str, type[_Shown]] = {"class": _Class, "seealso": _SeeAlso}
    for names, kind in kinds:
        for name in names:
            directives.register_directive(name, special.get(name, kind))
    for name, line in SPHINX_VERSIONS.items():
        directives.register_directive(name, type(f"_Version_{name}", (_Version,), {"line": line}))


_register()


def role_text(source: str) -> str | None:
    """What Sphinx shows of an interpreted text role docutils does not know (module
    docstring): ``":ref:`the folder <config-locations>`"`` -> ``"the folder"``,
    ``":py:func:`~os.path.join`"`` -> ``"join"``; ``None`` when ``source`` is no role."""
    found = _UNKNOWN_ROLE.fullmatch(source)
    if found is None:
        return None
    text = found["text"].lstrip("!")
    titled = _TARGET.fullmatch(text)
    if titled is not None and titled["title"]:
        text = titled["title"]
    elif titled is not None:  # `<target>` alone
        text = text.strip("<>")
    if text.startswith("~"):
        text = re.split(r"[.:]", text[1:])[-1]
    return text


_BARE_REF = re.compile(r":(?:std:)?ref:`(?P<label>[^<>`]+)`")


def _ref_title(tree: nodes.document, source: str) -> str | None:
    """The title Sphinx shows for ``:ref:`label``` (no title of its own) when ``label`` is a
    section of this page (``.. _label:`` above its heading): the section's title."""
    found = _BARE_REF.fullmatch(source)
    if found is None:
        return None
    target = tree.ids.get(tree.nameids.get(nodes.fully_normalize_name(found["label"])) or "")
    if not isinstance(target, nodes.section | nodes.document):
        return None
    title = target.next_node(nodes.title)
    return title.astext() if title is not None else None


def _unknown_roles_as_text(tree: nodes.document) -> None:
    for node in list(tree.findall(nodes.problematic)):
        source = node.astext()
        text = _ref_title(tree, source) or role_text(source)
        if text is not None:
            node.parent.replace(node, nodes.Text(text))


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
    _unknown_roles_as_text(tree)
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
