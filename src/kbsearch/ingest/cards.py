"""Help-card parser: a JSON list of objects with ``id``, ``reference``, ``family`` and
``text`` (the hybrid-search tutorial's format). One document per card."""

from __future__ import annotations

import json
from pathlib import Path

from kbsearch.errors import IngestError
from kbsearch.ingest.text import normalize, read_text
from kbsearch.records import Block, ParsedDocument

SUFFIXES = (".json",)
FIELDS = ("id", "reference", "family", "text")


def parse(path: Path, *, section_level: int = 2) -> list[ParsedDocument]:
    """Parse a cards file: doc_id = ``id``, title = ``reference``, metadata ``family``, each
    non-empty line of ``text`` one block (section ``()``).

    Raises:
        IngestError: unreadable file, invalid JSON, not a list of objects, a card missing a
            field, or a repeated id.
    """
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise IngestError(f"{path}: invalid JSON at line {exc.lineno} ({exc.msg})") from exc
    if not isinstance(data, list):
        raise IngestError(f"{path}: expected a JSON list of help cards {list(FIELDS)}")
    docs: list[ParsedDocument] = []
    seen: set[str] = set()
    for index, card in enumerate(data):
        if not isinstance(card, dict) or any(f not in card for f in FIELDS):
            raise IngestError(f"{path}: card {index} needs the fields {', '.join(FIELDS)}")
        doc_id = str(card["id"])
        if doc_id in seen:
            raise IngestError(f"{path}: card {index} repeats the id {doc_id!r}")
        seen.add(doc_id)
        lines = (normalize(line) for line in str(card["text"]).split("\n"))
        blocks = tuple(Block((), line) for line in lines if line)
        metadata = {"family": normalize(str(card["family"]))}
        docs.append(ParsedDocument(doc_id, normalize(str(card["reference"])), blocks, metadata))
    return docs
