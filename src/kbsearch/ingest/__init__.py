"""Ingestion: turn a source file into ParsedDocument records (one module per format).

``parse_file`` picks the parser from the file suffix through ``PARSERS``; ``SUPPORTED_SUFFIXES``
lists what it accepts (``.jsonl`` = BEIR corpus, ``.json`` = help cards).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from kbsearch.errors import IngestError, InvalidArgumentError
from kbsearch.ingest import beir, cards, html, markdown, mdx, pdf, plaintext, rst, word
from kbsearch.ingest.inventory import InventoryRow, read_inventory, validate_periods
from kbsearch.records import ParsedDocument


class Parser(Protocol):
    def __call__(self, path: Path, *, section_level: int = 2) -> list[ParsedDocument]: ...


PARSERS: Mapping[str, Parser] = {
    suffix: module.parse
    for module in (markdown, mdx, rst, html, pdf, word, plaintext, beir, cards)
    for suffix in module.SUFFIXES
}
SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(sorted(PARSERS))


def parse_file(path: Path, *, section_level: int = 2) -> list[ParsedDocument]:
    """Parse one source file into its documents (one, or one per row/card for BEIR corpora
    and card files).

    ``section_level`` (1-6) is the heading level that opens a section in Markdown and HTML.

    Raises:
        IngestError: unsupported suffix, missing or unreadable file, corrupt content, or a
            PDF with no extractable text. The message starts with the path.
        InvalidArgumentError: ``section_level`` outside 1..6.
    """
    if not 1 <= section_level <= 6:
        raise InvalidArgumentError(f"section_level must be 1..6, got {section_level}")
    path = Path(path)
    parser = PARSERS.get(path.suffix.lower())
    if parser is None:
        raise IngestError(
            f"{path}: unsupported file type {path.suffix or '(none)'!r}; "
            f"supported: {', '.join(SUPPORTED_SUFFIXES)}"
        )
    if not path.is_file():
        raise IngestError(f"{path}: no such file")
    return parser(path, section_level=section_level)


__all__ = [
    "PARSERS",
    "SUPPORTED_SUFFIXES",
    "InventoryRow",
    "Parser",
    "parse_file",
    "read_inventory",
    "validate_periods",
]
