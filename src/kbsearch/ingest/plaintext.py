"""Plain-text parser: paragraphs separated by blank lines, no sections."""

from __future__ import annotations

from pathlib import Path

from kbsearch.ingest.text import normalize, read_text, split_paragraphs
from kbsearch.records import Block, ParsedDocument

SUFFIXES = (".txt",)
MAX_TITLE_CHARS = 100


def parse(path: Path, *, section_level: int = 6) -> list[ParsedDocument]:
    """Parse one UTF-8 text file. The title is the first line when it is at most
    ``MAX_TITLE_CHARS`` long and more text follows it (that line then leaves the body), else
    the file stem. Blocks carry character offsets; ``section_level`` is unused.

    Raises:
        IngestError: unreadable file or not UTF-8.
    """
    source = read_text(path)
    stripped = source.lstrip()
    first_line = normalize(stripped.split("\n", 1)[0])
    rest_start = len(source) - len(stripped) + len(stripped.split("\n", 1)[0])
    body = source[rest_start:]
    title = path.stem
    offset = 0
    if first_line and len(first_line) <= MAX_TITLE_CHARS and normalize(body):
        title = first_line
        offset = rest_start
    else:
        body = source
    blocks = tuple(
        Block((), text, start=offset + start, end=offset + end)
        for text, start, end in split_paragraphs(body)
    )
    return [ParsedDocument(None, title, blocks, {})]
