"""Text helpers shared by the format parsers: reading files and normalising extracted text."""

from __future__ import annotations

import re
from pathlib import Path

from kbsearch.errors import IngestError
from kbsearch.text.analysis import clean_text, controls_as_spaces

_SPACES = re.compile(r"\s+")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n")


def normalize(text: str) -> str:
    """:func:`kbsearch.text.analysis.clean_text` (NFKC, invisible characters dropped, control
    characters made spaces: the cleaning queries get too), then collapse whitespace runs to
    one space, strip."""
    return _SPACES.sub(" ", clean_text(text)).strip()


def normalize_lines(text: str) -> str:
    """Like :func:`normalize` but keeps line breaks (code blocks, preformatted text): NFKC,
    invisible characters dropped, control characters made spaces, trailing spaces and
    leading/trailing blank lines removed."""
    text = clean_text(text)
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    return "\n".join(lines).strip("\n")


def split_paragraphs(text: str) -> list[tuple[str, int, int]]:
    """Split raw text at blank lines. Returns ``(normalised paragraph, start, end)`` with
    character offsets into ``text``; empty paragraphs are left out."""
    out: list[tuple[str, int, int]] = []
    pos = 0
    for match in [*_PARAGRAPH_BREAK.finditer(text), None]:
        end = match.start() if match else len(text)
        chunk = text[pos:end]
        cleaned = normalize(chunk)
        if cleaned:
            lead = len(chunk) - len(chunk.lstrip())
            out.append((cleaned, pos + lead, pos + len(chunk.rstrip())))
        if match:
            pos = match.end()
    return out


def read_bytes(path: Path) -> bytes:
    """The file's bytes. Raises IngestError when it cannot be read."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise IngestError(f"{path}: cannot read file ({exc.strerror or exc})") from exc


def read_text(path: Path) -> str:
    """The file decoded as UTF-8 (a BOM is allowed), its control characters made spaces
    (:func:`~kbsearch.text.analysis.controls_as_spaces`: before a parser sees them, as
    CommonMark's replaces a NUL with U+FFFD). Raises IngestError when it cannot be read or is
    not UTF-8."""
    data = read_bytes(path)
    try:
        return controls_as_spaces(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise IngestError(
            f"{path}: not valid UTF-8 (byte {exc.start}); re-save the file as UTF-8"
        ) from exc
