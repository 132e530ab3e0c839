"""The inventory CSV: one row per document version with its metadata.

Columns (header row required, any order, extra columns ignored)::

    file, doc_id, title, version, effective_from, effective_to, owner, access, language,
    doc_type, format

Dates are ISO ``YYYY-MM-DD`` and inclusive; an empty date is an open end. An empty version is
``"1"``; an empty access or language is ``None`` (the indexer fills it in).
"""

from __future__ import annotations

import csv
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path, PurePath

from kbsearch.errors import InvalidArgumentError, InventoryError, shown_value
from kbsearch.filters import parse_day

COLUMNS = (
    "file",
    "doc_id",
    "title",
    "version",
    "effective_from",
    "effective_to",
    "owner",
    "access",
    "language",
    "doc_type",
    "format",
)
DEFAULT_VERSION = "1"


@dataclass(frozen=True)
class InventoryRow:
    """One inventory line. ``file`` is the relative path as written, normalised by
    :class:`pathlib.PurePath` (``./docs//a.md`` -> ``docs/a.md``)."""

    file: str
    doc_id: str
    title: str
    version: str
    effective_from: date | None
    effective_to: date | None
    owner: str
    access: str | None
    language: str | None
    doc_type: str
    format: str


def normalize_file_key(file: str) -> str:
    """The key under which a ``file`` value is stored (POSIX separators, no ``./``, Unicode
    NFC: a macOS-made tree names ``é`` as ``e`` + U+0301, a CSV usually as one letter)."""
    return unicodedata.normalize("NFC", PurePath(file.strip().replace("\\", "/")).as_posix())


def file_key(path: Path) -> Path:
    """``path`` with its name in Unicode NFC: how a file found on disk and an inventory row's
    file (:func:`normalize_file_key`) are compared, whichever form each is written in."""
    return Path(unicodedata.normalize("NFC", str(path)))


def _date(value: str, column: str, line: int) -> date | None:
    try:
        return parse_day(value.strip()) if value.strip() else None
    except InvalidArgumentError as exc:
        raise InventoryError(
            f"inventory line {line}: {column} {value!r} is not a date YYYY-MM-DD"
        ) from exc


def _row(raw: dict[str, str | None], line: int) -> InventoryRow:
    values = {k: (raw.get(k) or "").strip() for k in COLUMNS}
    if not values["file"] or not values["doc_id"]:
        raise InventoryError(f"inventory line {line}: 'file' and 'doc_id' must not be empty")
    start = _date(values["effective_from"], "effective_from", line)
    end = _date(values["effective_to"], "effective_to", line)
    if start and end and end < start:
        raise InventoryError(
            f"inventory line {line}: effective_to {end} is before effective_from {start}"
        )
    return InventoryRow(
        file=normalize_file_key(values["file"]),
        doc_id=values["doc_id"],
        title=values["title"],
        version=values["version"] or DEFAULT_VERSION,
        effective_from=start,
        effective_to=end,
        owner=values["owner"],
        access=values["access"] or None,
        language=values["language"].lower() or None,
        doc_type=values["doc_type"],
        format=values["format"],
    )


def read_inventory(path: Path) -> dict[str, InventoryRow]:
    """Read and validate an inventory CSV (UTF-8, BOM allowed).

    Returns the rows keyed by their normalised ``file`` value, in file order.

    Raises:
        InventoryError: unreadable file, missing or repeated columns, an empty file/doc_id,
            a malformed or reversed date, a repeated file or doc_id+version, or overlapping
            periods of one doc_id (see :func:`validate_periods`). Messages name the line and
            the value.
    """
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh)
            header = [h.strip() for h in reader.fieldnames or []]
            missing = [c for c in COLUMNS if c not in header]
            if missing:
                raise InventoryError(f"{path}: missing column(s): {', '.join(missing)}")
            twice = sorted({c for c in header if c and header.count(c) > 1})
            if twice:  # csv kept the last: access,...,access with public then staff
                named = ", ".join(shown_value(c) for c in twice[:5])
                raise InventoryError(f"{path}: column(s) {named} given twice; keep one of each")
            reader.fieldnames = header
            rows: dict[str, InventoryRow] = {}
            versions: dict[tuple[str, str], int] = {}
            for raw in reader:
                line = reader.line_num
                if not any((v or "").strip() for v in raw.values() if isinstance(v, str)):
                    continue
                row = _row(raw, line)
                key = (row.doc_id, row.version)
                if key in versions:
                    raise InventoryError(
                        f"inventory line {line}: duplicate doc_id+version "
                        f"{row.doc_id} v{row.version} (first on line {versions[key]})"
                    )
                if row.file in rows:
                    raise InventoryError(f"inventory line {line}: file {row.file!r} listed twice")
                versions[key] = line
                rows[row.file] = row
    except OSError as exc:
        raise InventoryError(f"{path}: cannot read inventory ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise InventoryError(f"{path}: inventory is not valid UTF-8") from exc
    except csv.Error as exc:
        raise InventoryError(f"{path}: malformed CSV ({exc})") from exc
    validate_periods(rows.values())
    return rows


def validate_periods(rows: Iterable[InventoryRow]) -> None:
    """Check that the versions of each doc_id have disjoint effective periods.

    Periods are inclusive; an open start/end extends to -inf/+inf. Consecutive periods
    (``effective_to`` = 2024-03-31, next ``effective_from`` = 2024-04-01) are fine.

    Raises:
        InventoryError: two versions of one doc_id are both in force on some day.
    """
    by_doc: dict[str, list[InventoryRow]] = {}
    for row in rows:
        by_doc.setdefault(row.doc_id, []).append(row)
    for doc_id, versions in by_doc.items():
        ordered = sorted(versions, key=lambda r: r.effective_from or date.min)
        latest = ordered[0]  # the version seen so far whose period ends last
        for cur in ordered[1:]:
            if (cur.effective_from or date.min) <= (latest.effective_to or date.max):
                raise InventoryError(
                    f"{doc_id}: versions {latest.version} and {cur.version} overlap "
                    f"({_period(latest)} and {_period(cur)})"
                )
            if (cur.effective_to or date.max) > (latest.effective_to or date.max):
                latest = cur


def _period(row: InventoryRow) -> str:
    return period_text(row.effective_from, row.effective_to)


def period_text(start: date | None, end: date | None) -> str:
    """An effective period in words: ``2026-03-01 to open``, or ``undated (in force at any
    time)`` when neither bound is set, not ``open to open``."""
    if start is None and end is None:
        return "undated (in force at any time)"
    return f"{start or 'open'} to {end or 'open'}"
