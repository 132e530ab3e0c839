"""BEIR ``corpus.jsonl`` parser: one JSON object a line with ``_id``, ``text`` and an optional
``title`` (https://github.com/beir-cellar/beir, data format). One document per row."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from kbsearch.errors import IngestError
from kbsearch.ingest.cards import card_id, json_type
from kbsearch.ingest.text import normalize
from kbsearch.jsonl import json_lines
from kbsearch.records import Block, ParsedDocument

SUFFIXES = (".jsonl",)


def _blocks(text: str) -> tuple[Block, ...]:
    """Each non-empty line of the row's text is a paragraph block (section ``()``)."""
    return tuple(Block((), para) for para in map(normalize, text.split("\n")) if para)


def iter_corpus(path: Path) -> Iterator[ParsedDocument]:
    """Yield the documents of a BEIR corpus one by one (constant memory).

    A row whose text is empty but whose title is not gets its title as its only block.

    Raises:
        IngestError: unreadable file, invalid JSON, a row without ``_id`` or ``text``, an
            ``_id`` that is not a string or whole number, a ``text`` or ``title`` that is not
            a JSON string (or null), or a repeated ``_id`` (the message names the line).
    """
    seen: set[str] = set()

    def bad_line(number: int, exc: ValueError | RecursionError) -> IngestError:
        if isinstance(exc, json.JSONDecodeError):
            return IngestError(f"{path}:{number}: invalid JSON ({exc.msg})")
        return IngestError(f"{path}:{number}: unreadable JSON value")

    try:
        for number, row in json_lines(path, bad_line, encoding="utf-8-sig"):
            if not isinstance(row, dict) or "_id" not in row or "text" not in row:
                raise IngestError(f"{path}:{number}: a BEIR row needs '_id' and 'text'")
            doc_id = card_id(row["_id"], path, number)
            if doc_id in seen:
                raise IngestError(f"{path}:{number}: duplicate _id {doc_id!r}")
            seen.add(doc_id)
            for name in ("text", "title"):  # ["a"] was indexed as the text "['a']"
                if not isinstance(row.get(name), str | None):
                    kind = json_type(row[name])
                    raise IngestError(f"{path}:{number}: {name} must be text, not {kind}")
            title = normalize(row.get("title") or "") or None
            blocks = _blocks(row["text"] or "")
            if not blocks and title:
                blocks = (Block((), title),)
            yield ParsedDocument(doc_id, title, blocks, {})
    except OSError as exc:
        raise IngestError(f"{path}: cannot read file ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise IngestError(f"{path}: not valid UTF-8") from exc


def parse(path: Path, *, section_level: int = 6) -> list[ParsedDocument]:
    """All documents of a BEIR corpus as a list (see :func:`iter_corpus`)."""
    return list(iter_corpus(path))
