"""MDX parser: Markdown with JSX, read as Markdown once the MDX syntax is stripped.

Outside fenced code blocks: ``import``/``export`` statements are removed (a statement that
opens more braces, brackets or parentheses than it closes runs on until they balance); JSX
comments ``{/* ... */}`` and expressions ``{...}`` are removed; JSX component tags
(``<Tabs>``, ``<Note type="info" />``, capitalised or dotted names) are removed while the text
between them stays. Lower-case HTML tags are left to the Markdown parser. Blocks carry no
character offsets (the stripped text is not the file's).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from kbsearch.ingest import markdown
from kbsearch.ingest.outline import DEEPEST_LEVEL
from kbsearch.ingest.text import read_text
from kbsearch.records import ParsedDocument

SUFFIXES = (".mdx",)
_ESM = re.compile(r"^(import|export)\b")
_FENCE = re.compile(r"^\s*(```|~~~)")
_JSX_COMMENT = re.compile(r"\{/\*.*?\*/\}", re.DOTALL)
_JSX_TAG = re.compile(r"</?[A-Z][\w.]*(?:\s(?:[^<>{}]|\{[^{}]*\})*)?/?>|</?>")
_EXPRESSION = re.compile(r"\{[^{}]*\}")


def _balance(line: str) -> int:
    return sum(line.count(c) for c in "{[(") - sum(line.count(c) for c in "}])")


def strip_mdx(source: str) -> str:
    """``source`` with the MDX syntax removed (see the module docstring); line count kept."""
    out: list[str] = []
    in_fence = False
    open_statement = 0
    for line in source.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            out.append(line)
            continue
        if in_fence:
            out.append(line)
            continue
        if open_statement > 0:
            open_statement += _balance(line)
            out.append("")
            continue
        if _ESM.match(line):
            open_statement = max(0, _balance(line))
            out.append("")
            continue
        out.append(line)
    text = "\n".join(out)
    pieces = re.split(r"(^\s*(?:```|~~~).*?^\s*(?:```|~~~)[^\n]*$)", text, flags=re.M | re.S)
    for i in range(0, len(pieces), 2):  # even pieces lie outside fenced code
        piece = _JSX_COMMENT.sub("", pieces[i])
        piece = _JSX_TAG.sub("", piece)
        previous = None
        while previous != piece:  # nested expressions, innermost first
            previous, piece = piece, _EXPRESSION.sub("", piece)
        pieces[i] = piece
    return "".join(pieces)


def parse(path: Path, *, section_level: int = DEEPEST_LEVEL) -> list[ParsedDocument]:
    """Parse one MDX file into a single ParsedDocument (see the module docstring).

    Raises:
        IngestError: unreadable file, not UTF-8, or malformed front matter.
    """
    source = read_text(path)
    front = ""
    match = re.match(r"\A---\n.*?\n---\n", source, re.DOTALL)
    if match:  # the YAML front matter is kept as written
        front, source = match.group(0), source[match.end() :]
    doc = markdown.parse_text(front + strip_mdx(source), path, section_level=section_level)
    blocks = tuple(replace(b, start=None, end=None) for b in doc.blocks)
    return [replace(doc, blocks=blocks)]
