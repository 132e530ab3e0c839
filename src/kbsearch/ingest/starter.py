"""A starter inventory for a folder (``kbsearch inventory --init FOLDER``): one row per
document the folder's files hold, with what kbsearch would read from them today, ready to be
edited (access labels, versions, effective dates) and passed back with ``--inventory``."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from kbsearch.errors import InvalidArgumentError, KbsearchError
from kbsearch.ingest import parse_file
from kbsearch.ingest.discovery import discover
from kbsearch.ingest.inventory import COLUMNS
from kbsearch.ingest.metadata import resolve_document


def starter_inventory(folder: str | Path) -> tuple[str, list[tuple[str, str]]]:
    """The CSV text of a starter inventory for ``folder`` (paths relative to it) and the files
    that could not be read, as ``(file, reason)``. An empty access cell means the index's
    default label; files that hold several documents (help cards, BEIR corpora) or whose front
    matter gives their ``doc_id`` are left out, since their ids come from the file (they are
    indexed from it, inventory or not).

    Raises:
        InvalidArgumentError: ``folder`` is not a folder.
        IngestError: nothing in it can be indexed.
    """
    root = Path(folder)
    if not root.is_dir():
        raise InvalidArgumentError(f"{folder}: not a folder")
    found = discover([root])
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    skipped: list[tuple[str, str]] = []
    base = root.resolve()
    for path, path_id in found.files.items():
        relative = path.relative_to(base).as_posix()
        try:
            parsed = parse_file(path)
            if len(parsed) != 1:
                reason = f"holds {len(parsed)} documents, with their own ids"
                skipped.append((relative, reason if parsed else "holds no document"))
                continue
            if parsed[0].doc_id:
                skipped.append((relative, "holds its own document id (front matter)"))
                continue
            document, defaulted = resolve_document(
                parsed[0], path, None, path_id=path_id, default_access="staff", lang=None
            )
        except KbsearchError as exc:
            skipped.append((relative, str(exc).removeprefix(f"{path}: ")))
            continue
        writer.writerow(
            {
                "file": relative,
                "doc_id": document.doc_id,
                "title": document.title,
                "version": document.version,
                "effective_from": document.effective_from or "",
                "effective_to": document.effective_to or "",
                "owner": document.owner,
                "access": "" if defaulted else document.access,
                "language": document.language,
                "doc_type": document.doc_type,
                "format": document.format,
            }
        )
    return out.getvalue(), skipped
