"""Ingestion: turn a source file into ParsedDocument records (one module per format).

``parse_file`` picks the parser from the file suffix through ``PARSERS``; ``SUPPORTED_SUFFIXES``
lists what it accepts (``.jsonl`` = BEIR corpus, ``.json`` = help cards).

A format's module (and the parsing library behind it: BeautifulSoup, pdfplumber, python-docx,
docutils) is imported on its first use, so commands that parse nothing (``search``, ``--help``)
start without them. ``FORMAT_MODULES`` names each suffix's module; each module's own
``SUFFIXES`` must agree with it (a test checks).

Every file is checked against the size limits of :mod:`kbsearch.ingest.limits` before it is
read; the formats of ``BOUNDED_FORMATS`` (archives and compressed streams: Word, PDF) also
take the limits and the document's time budget into their parser, which enforces them while
it reads.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, cast

from kbsearch.errors import IngestError, InvalidArgumentError
from kbsearch.ingest.inventory import InventoryRow, read_inventory, validate_periods
from kbsearch.ingest.limits import Budget, IngestLimits, check_size
from kbsearch.ingest.outline import DEEPEST_LEVEL
from kbsearch.records import ParsedDocument


class Parser(Protocol):
    def __call__(
        self, path: Path, *, section_level: int = DEEPEST_LEVEL
    ) -> list[ParsedDocument]: ...


FORMAT_MODULES: Mapping[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "mdx",
    ".rst": "rst",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "word",
    ".txt": "plaintext",
    ".jsonl": "beir",
    ".json": "cards",
}


class _Parsers(Mapping[str, Parser]):
    """Suffix -> the ``parse`` function of its format's module, imported on first access."""

    def __getitem__(self, suffix: str) -> Parser:
        module = importlib.import_module(f"kbsearch.ingest.{FORMAT_MODULES[suffix]}")
        return cast(Parser, module.parse)

    def __iter__(self) -> Iterator[str]:
        return iter(FORMAT_MODULES)

    def __len__(self) -> int:
        return len(FORMAT_MODULES)


PARSERS: Mapping[str, Parser] = _Parsers()
# formats whose ``parse`` also takes ``limits=`` and ``budget=`` (what they read expands)
BOUNDED_FORMATS = frozenset({"pdf", "word"})
SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(sorted(FORMAT_MODULES))


def preload() -> None:
    """Import every format's module (and the parsing library behind it) and load the language
    identifier now: what the first document a process parses pays, about 0.4 s of CPU and
    35 MB for all formats on the team's machine, so that a server pays it at start-up rather
    than in its first upload (``benchmarks/http_load.py``'s ``write_first_ms``).

    Raises:
        ImportError: a format's parsing library is not installed.
    """
    from kbsearch.text.language import prepare

    for module in sorted(set(FORMAT_MODULES.values())):
        importlib.import_module(f"kbsearch.ingest.{module}")
    prepare()


def parse_file(
    path: Path,
    *,
    section_level: int = DEEPEST_LEVEL,
    limits: IngestLimits | None = None,
    budget: Budget | None = None,
) -> list[ParsedDocument]:
    """Parse one source file into its documents (one, or one per row/card for BEIR corpora
    and card files).

    ``section_level`` (1-6) is the deepest heading level that opens a section (Markdown,
    MDX, reST, HTML, Word: :mod:`kbsearch.ingest.outline`); deeper headings stay as text.
    ``limits`` (default :class:`IngestLimits`): the size limits; ``budget``: the document's
    time budget, checked while a bounded format reads (default: none).

    Raises:
        LimitExceededError: the file is over a limit (an IngestError; the message names it).
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
    limits = limits or IngestLimits()
    try:
        check_size(path, limits)
    except OSError as exc:
        raise IngestError(f"{path}: cannot read file ({exc.strerror or exc})") from exc
    if FORMAT_MODULES[path.suffix.lower()] in BOUNDED_FORMATS:
        bounded: Any = parser  # pdf.parse / word.parse, which take these too
        documents: list[ParsedDocument] = bounded(
            path, section_level=section_level, limits=limits, budget=budget
        )
        return documents
    return parser(path, section_level=section_level)


__all__ = [
    "BOUNDED_FORMATS",
    "FORMAT_MODULES",
    "PARSERS",
    "SUPPORTED_SUFFIXES",
    "InventoryRow",
    "Parser",
    "parse_file",
    "read_inventory",
    "validate_periods",
]
