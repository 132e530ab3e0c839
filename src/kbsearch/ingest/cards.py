"""Help-card parser: a JSON list of objects with ``id``, ``reference``, ``family`` and
``text`` (the hybrid-search tutorial's format), and optionally ``title``. One document per
card."""

from __future__ import annotations

import json
from pathlib import Path

from kbsearch.errors import IngestError, shown_value
from kbsearch.ingest.text import normalize, read_text
from kbsearch.records import Block, ParsedDocument

SUFFIXES = (".json",)
FIELDS = ("id", "reference", "family", "text")
# optional card fields: document metadata, below the inventory's (as front matter)
OPTIONAL = ("title", "access", "language", "version", "effective_from", "effective_to",
            "owner", "doc_type")  # fmt: skip


def parse(path: Path, *, section_level: int = 6) -> list[ParsedDocument]:
    """Parse a cards file: doc_id = ``id``, title = ``reference`` (unless the card has a
    ``title``), metadata ``family`` and the :data:`OPTIONAL` fields the card has; each
    non-empty line of ``text`` one block (section ``()``: a card is one passage under its
    title).

    Raises:
        IngestError: unreadable file, invalid JSON (or numbers too long, or nesting too deep
            for Python to read), not a list of objects, a card missing a field, an id that is
            not a non-empty string or a whole number, a repeated id, a ``reference``,
            ``family`` or ``text`` that is not a string, an optional field that is not
            text or a whole number, or a key given twice with two values.
    """
    text = read_text(path)

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        found: dict[str, object] = {}
        for key, value in items:  # json keeps the last: "access" staff, then public
            if key in found and found[key] != value:
                raise IngestError(
                    f"{path}: a card gives {shown_value(key)} twice, {shown_value(found[key])}"
                    f" then {shown_value(value)}; keep one"
                )
            found[key] = value
        return found

    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        raise IngestError(f"{path}: invalid JSON at line {exc.lineno} ({exc.msg})") from exc
    except RecursionError as exc:
        raise IngestError(f"{path}: JSON nested too deeply to read") from exc
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise IngestError(f"{path}: unreadable JSON value ({_short(exc)})") from exc
    if not isinstance(data, list):
        raise IngestError(f"{path}: expected a JSON list of help cards {list(FIELDS)}")
    docs: list[ParsedDocument] = []
    seen: set[str] = set()
    for index, card in enumerate(data):
        if not isinstance(card, dict) or any(f not in card for f in FIELDS):
            raise IngestError(f"{path}: card {index} needs the fields {', '.join(FIELDS)}")
        doc_id = card_id(card["id"], path, index)
        if doc_id in seen:
            raise IngestError(f"{path}: card {index} repeats the id {doc_id!r}")
        seen.add(doc_id)
        reference, family, body = (text_field(card, name, path, index) for name in FIELDS[1:])
        lines = (normalize(line) for line in body.split("\n"))
        blocks = tuple(Block((), line) for line in lines if line)
        metadata = {"family": normalize(family)} | optional_fields(card, path, index)
        docs.append(ParsedDocument(doc_id, normalize(reference), blocks, metadata))
    return docs


JSON_TYPES = ((bool, "true"), (int, "a number"), (float, "a number"), (list, "a list"),
              (dict, "an object"))  # fmt: skip


def json_type(value: object) -> str:
    """What ``value`` was in JSON, in words (``a list``, ``null``...); bool before int."""
    if value is None:
        return "null"
    if value is False:
        return "false"
    return next((words for kind, words in JSON_TYPES if isinstance(value, kind)), "a value")


def text_field(card: dict[str, object], name: str, path: Path, index: int) -> str:
    """``card[name]``, a required text field (``reference``, ``family``, ``text``).

    Raises:
        IngestError: the value is not a JSON string (``["r"]`` was indexed as the title
            ``['r']``, ``42`` as the text ``42``).
    """
    value = card[name]
    if not isinstance(value, str):
        raise IngestError(f"{path}: card {index}: {name} must be text, not {json_type(value)}")
    return value


def optional_fields(card: dict[str, object], path: Path, index: int) -> dict[str, str]:
    """The :data:`OPTIONAL` fields ``card`` has, as text (``null`` or empty: absent).

    Raises:
        IngestError: a value that is not text or a whole number.
    """
    found: dict[str, str] = {}
    for name in OPTIONAL:
        value = card.get(name)
        if value is None or value == "":
            continue
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise IngestError(f"{path}: card {index}: {name} must be text or a whole number")
        found[name] = normalize(str(value))
    return found


MAX_ID_CHARS = 200


def card_id(value: object, path: Path, index: int) -> str:
    """A card (or BEIR row) id as text: a non-empty string or a whole number (not ``true``,
    ``null``, a list, a fraction or ``NaN``), at most ``MAX_ID_CHARS`` characters.

    Raises:
        IngestError: any other value.
    """
    if isinstance(value, str) and value.strip():
        text = value.strip()
    elif isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
    else:
        shown = _short(json.dumps(value)) if not isinstance(value, float) else repr(value)
        raise IngestError(
            f"{path}: card/row {index} has the id {shown}; an id is a non-empty string or a "
            "whole number"
        )
    if len(text) > MAX_ID_CHARS:
        raise IngestError(f"{path}: card/row {index} has an id of {len(text)} characters (max 200)")
    return text


def _short(value: object, limit: int = 80) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
