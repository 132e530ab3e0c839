"""The PDF parser's limits (:mod:`kbsearch.ingest.limits`): the page count, read from the page
tree before any page is parsed, and a ceiling on the bytes pdfminer's Flate decoder produces.

pdfminer.six (20260107) decodes a ``/FlateDecode`` stream with ``zlib.decompress(data)``, all
of it at once and with no bound, and offers no setting to limit it (pypdf added one in 2025:
py-pdf/pypdf#3430; pdfminer has none). So while one PDF is read, :func:`bounded_streams` hands
pdfminer's stream module a stand-in for ``zlib`` whose ``decompress`` (and ``decompressobj``,
used on damaged streams) decompresses at most what is left of ``max_uncompressed_bytes`` for
the whole document, then refuses. A lock keeps two PDFs from being read at once in one
process, so each is held to its own ceiling and the real module is always put back.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from io import BufferedReader
from pathlib import Path
from typing import Any

import pdfplumber
from pdfminer import pdftypes
from pdfminer.pdftypes import resolve1

from kbsearch.errors import LimitExceededError
from kbsearch.ingest.limits import IngestLimits, over_uncompressed

_LOCK = threading.Lock()
_STEP = 1 << 20  # bytes decoded per step


class _Ceiling:
    """The decoded bytes one document has left."""

    def __init__(self, path: Path, limits: IngestLimits) -> None:
        self.path, self.limits, self.left = path, limits, limits.max_uncompressed_bytes
        self.exceeded = False

    def take(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            self.exceeded = True
            raise self.refusal()

    def refusal(self) -> LimitExceededError:
        return over_uncompressed(self.path, "its streams decode past the limit", self.limits)


class _Decompressor:
    """``zlib.decompressobj()`` whose output counts against the ceiling."""

    def __init__(self, ceiling: _Ceiling) -> None:
        self._ceiling = ceiling
        self._inner = zlib.decompressobj()

    def decompress(self, data: bytes, max_length: int = 0) -> bytes:
        bound = self._ceiling.left + 1
        out = self._inner.decompress(data, min(max_length, bound) if max_length else bound)
        self._ceiling.take(len(out))
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _BoundedZlib:
    """What pdfminer's stream decoder sees as ``zlib`` while one document is read."""

    error = zlib.error

    def __init__(self, ceiling: _Ceiling) -> None:
        self._ceiling = ceiling

    def decompress(self, data: bytes, *args: Any) -> bytes:
        """As :func:`zlib.decompress` (trailing bytes after the stream ignored, a truncated
        stream is :class:`zlib.error`), but at most the ceiling's bytes.

        Raises:
            LimitExceededError: the document's streams decode past the ceiling.
        """
        inner = zlib.decompressobj()
        parts: list[bytes] = []
        pending = data
        while pending and not inner.eof:  # a step at a time: the refusal comes at the limit
            part = inner.decompress(pending, _STEP)
            self._ceiling.take(len(part))
            parts.append(part)
            pending = inner.unconsumed_tail
        if not inner.eof:
            raise zlib.error("Error -5 while decompressing data: incomplete or truncated stream")
        return b"".join(parts)

    def decompressobj(self, *args: Any) -> _Decompressor:
        return _Decompressor(self._ceiling)


@contextmanager
def bounded_streams(path: Path, limits: IngestLimits) -> Iterator[_Ceiling]:
    """While inside: pdfminer decodes at most ``max_uncompressed_bytes`` of Flate streams
    (together) for this document; the ceiling's ``exceeded`` says whether it refused (the
    refusal may reach the caller wrapped in pdfplumber's or pdfminer's own exceptions)."""
    ceiling = _Ceiling(path, limits)
    with _LOCK:
        real = pdftypes.zlib
        pdftypes.zlib = _BoundedZlib(ceiling)  # type: ignore[assignment]
        try:
            yield ceiling
        finally:
            pdftypes.zlib = real


def declared_pages(document: Any) -> int | None:
    """The page count the PDF's page tree declares (``/Count``), ``None`` when unreadable."""
    try:
        tree = resolve1(document.catalog.get("Pages"))
        count = resolve1(tree.get("Count")) if isinstance(tree, dict) else None
    except Exception:  # noqa: BLE001 - a damaged tree: pdfplumber's own reading decides
        return None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def over_pages(path: Path, pages: int | None, limits: IngestLimits) -> LimitExceededError:
    """The refusal of a PDF of ``pages`` pages (``None``: more than the limit)."""
    count = f"{pages} pages" if pages is not None else f"more than {limits.max_pages} pages"
    return LimitExceededError(
        f"{path}: refused: it has {count}, over the limit of {limits.max_pages} (max_pages);"
        " nothing of it was indexed"
    )


def open_pdf(stream: BufferedReader, path: Path, limits: IngestLimits) -> pdfplumber.PDF:
    """pdfplumber's PDF of ``stream`` (``path``'s bytes), refused before any page is parsed
    when its page tree declares more than ``max_pages`` pages; pdfplumber is asked to load at
    most one page more (its own ``pages`` option), so a tree that understates its count is
    refused there. The caller owns ``stream``: a refused PDF is not closed, since pdfplumber's
    ``close`` would walk every page of the tree.

    Raises:
        LimitExceededError: over ``max_pages``.
    """
    pdf = pdfplumber.open(stream, pages=list(range(1, limits.max_pages + 2)))
    declared = declared_pages(pdf.doc)
    if declared is not None and declared > limits.max_pages:
        raise over_pages(path, declared, limits)
    if len(pdf.pages) > limits.max_pages:
        raise over_pages(path, None, limits)
    return pdf
