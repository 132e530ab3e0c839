"""MkDocs' indented blocks unfolded, so that their body is read as Markdown, not as code;
container fences (``:::tip``) read as their title.

Python-Markdown's admonitions (``!!! note "Title"``), collapsible details (``??? info``,
``???+ tip "Title"``) and Material for MkDocs' content tabs (``=== "Docker run"``) hold a body
indented by four spaces under their marker line. CommonMark, which knows none of them, reads
that body as an indented code block: its links, emphasis and fences kept as written, its
paragraphs run together, and the marker (``!!! note``) as a line of text. :func:`unfold` rewrites
the source the way MkDocs renders it: the marker line becomes its title (a paragraph; empty
when it has none) and the body loses the four spaces, so that it is read as the Markdown it is,
nested blocks included. The number of lines is kept, so that the parser's line map still points
into the file. A title runs from the first quote to the last (``!!! info "The "server""``).
Lines inside a fenced code block are never a marker; a bare ``!!!``, ``???`` or
``===`` (a setext heading's underline) is no marker either.

The container fences of Docusaurus, VitePress and Pandoc (``:::tip Title``, ``:::note[Title]``,
``::: details Click me``, ``::: {.warning}``, then ``:::``) hold a body that is not indented,
which CommonMark reads right; their fence lines are text to it, so each becomes its title, or
an empty line.
"""

from __future__ import annotations

import re

_MARKER = re.compile(
    r"^(?P<indent>[ ]*)(?:(?:!!!|\?\?\?\+?)(?:[ ]+[\w-]+)+(?:[ ]+\"(?P<typed>.*)\")?"
    r"|(?:!!!|\?\?\?\+?|===\+?)[ ]+\"(?P<title>.*)\")[ ]*$"
)
_CONTAINER = re.compile(
    r"^(?P<indent>[ ]*):{3,}[ ]*(?:[A-Za-z][\w-]*)?(?:[ ]*\[(?P<bracket>[^\]]*)\])?"
    r"(?:[ ]+(?P<rest>[^\s{][^{}]*?))?[ ]*(?:\{[^{}]*\})?[ ]*$"
)
_FENCE = re.compile(r"^[ ]*(`{3,}|~{3,})")  # at any depth: a list item's fence too
_BODY_INDENT = 4


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def unfold(source: str) -> str:
    """``source`` with each admonition, details or tab marker replaced by its title and the
    body under it dedented by four spaces, and each container fence line by its title (see
    the module docstring); as many lines."""
    if not any(m in source for m in ("!!!", "???", "===", ":::")):
        return source
    out: list[str] = []
    markers: list[int] = []  # the indentation of each open marker, outermost first
    fence: str | None = None  # the open fence's backticks or tildes
    for line in source.split("\n"):
        expanded = line.expandtabs(_BODY_INDENT) if line.startswith("\t") else line
        if expanded.strip():
            while markers and _indent(expanded) < markers[-1] + _BODY_INDENT:
                markers.pop()
        cut = min(_BODY_INDENT * len(markers), _indent(expanded))
        text = expanded[cut:] if markers else line
        opened = _FENCE.match(text)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
        elif opened:
            fence = opened.group(1)
        elif (marker := _MARKER.match(text)) is not None:
            title = marker.group("typed") or marker.group("title") or ""
            markers.append(_indent(expanded))
            text = f"{marker.group('indent')}{title}" if title.strip() else ""
        elif (container := _CONTAINER.match(text)) is not None:
            title = container.group("bracket") or container.group("rest") or ""
            text = f"{container.group('indent')}{title}" if title.strip() else ""
        out.append(text)
    return "\n".join(out)
