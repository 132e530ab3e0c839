"""Replacing one document version from an uploaded file (``PUT /documents/{doc_id}``).

The file is kept under ``<db>.uploads/<doc_id>/v<version>/<name>`` (its lasting source) and
indexed through :meth:`KnowledgeBase.index` with a one-row inventory holding the metadata, so
it is parsed, split, embedded and written in one transaction like any indexed file (a ``/``
in the id percent-encoded in the folder's name). When the
file cannot be indexed (or written: a full disk) the stored version and its previous upload
stay as they were; a crash at any point is finished or undone on the next start
(:mod:`kbsearch.store.upload_files`, which keeps the files and the index in step).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import (
    IngestError,
    InvalidArgumentError,
    UnsupportedFormatError,
    UploadTooLargeError,
    shown_value,
)
from ..filters import parse_day
from ..index.indexer import IndexReport
from ..ingest import SUPPORTED_SUFFIXES
from ..ingest.fields import MAX_FIELD_CHARS, check_fields
from ..ingest.limits import MAX_UPLOAD_BYTES, byte_size
from ..ingest.metadata import format_name, known_language
from ..knowledge_base import KnowledgeBase
from ..present.sources import UPLOADS_SHOWN, uploads_folder
from ..store.upload_files import INVENTORY, UploadFiles, file_errors

# one file, one document: the BEIR corpus (.jsonl) and card (.json) formats hold many
SINGLE_DOCUMENT_SUFFIXES = tuple(s for s in SUPPORTED_SUFFIXES if s not in (".jsonl", ".json"))
SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
MAX_NAME_CHARS = 200  # an upload's file name: the store adds suffixes, file systems allow 255


@dataclass(frozen=True)
class Upload:
    """A document version to write: its file and the metadata the inventory would hold."""

    doc_id: str
    filename: str
    content: bytes
    version: str = "1"
    title: str = ""
    access: str = "staff"
    language: str = ""
    effective_from: str = ""
    effective_to: str = ""
    owner: str = ""
    doc_type: str = ""

    def check(self) -> None:
        """Raises:
        UnsupportedFormatError: a suffix kbsearch does not index as one document.
        UploadTooLargeError: over ``MAX_UPLOAD_BYTES``.
        InvalidArgumentError: a file name over ``MAX_NAME_CHARS``, a title, owner or
            doc_type over its ``MAX_FIELD_CHARS`` or holding a control character, a
            malformed id, version, access label or date
            (:func:`~kbsearch.ingest.fields.check_fields`, as ``kbsearch index`` applies them
            to front matter and inventories), a language kbsearch does not know (the
            language detector's; ``""`` detects it).
        """
        suffix = Path(self.filename).suffix.lower()
        if suffix not in SINGLE_DOCUMENT_SUFFIXES:
            raise UnsupportedFormatError(
                f"unsupported format {shown_value(suffix or '(no suffix)')}; upload one of "
                f"{', '.join(SINGLE_DOCUMENT_SUFFIXES)}"
            )
        if len(self.content) > MAX_UPLOAD_BYTES:
            raise UploadTooLargeError(f"file over {byte_size(MAX_UPLOAD_BYTES)}")
        if len(Path(self.filename).name) > MAX_NAME_CHARS:
            raise InvalidArgumentError(
                f"the file name is {len(Path(self.filename).name)} characters long; at most"
                f" {MAX_NAME_CHARS}"
            )
        check_fields(
            doc_id=self.doc_id,
            version=self.version,
            access=self.access,
            texts={name: getattr(self, name) for name in MAX_FIELD_CHARS},
        )
        if self.language:
            known_language(self.language)
        start = parse_day(self.effective_from or None)
        end = parse_day(self.effective_to or None)
        check_fields(effective_from=start, effective_to=end)


# the metadata an upload sets (a form field each); one left out takes its default, not the
# previous version's value
METADATA = ("title", "access", "language", "effective_from", "effective_to", "owner", "doc_type")
DATES = ("effective_from", "effective_to")


@dataclass(frozen=True)
class WriteResult:
    doc_id: str
    version: str
    status: str  # "added", "updated" or "unchanged"
    passages: int
    metadata: dict[str, str | None]  # as stored: defaults and detected language applied


def uploads_dir(kb: KnowledgeBase) -> Path:
    return Path(uploads_folder(kb.store.path))


def upload_files(kb: KnowledgeBase) -> UploadFiles:
    """``kb``'s upload store (:mod:`kbsearch.store.upload_files`)."""
    return UploadFiles(uploads_folder(kb.store.path))


def recover_uploads(kb: KnowledgeBase) -> list[str]:
    """At a server's start: every upload or deletion a crash cut short finished or undone, and
    every version folder made to hold just the file the index names
    (:meth:`UploadFiles.recover <kbsearch.store.upload_files.UploadFiles.recover>` with
    ``sweep``); the ``doc_id@version`` settled. Nothing for a read-only index."""
    if kb.store.database.read_only:
        return []
    return upload_files(kb).recover(kb.store.documents, sweep=True)


def write_upload(kb: KnowledgeBase, upload: Upload) -> WriteResult:
    """Index ``upload`` as ``doc_id`` version ``version``, replacing that version atomically:
    its stored file and the index change together or not at all, through a crash or a full
    disk too (:mod:`kbsearch.store.upload_files`).

    Raises:
        UnsupportedFormatError, UploadTooLargeError, InvalidArgumentError: see
            :meth:`Upload.check`.
        IngestError: the file cannot be parsed or holds no text (nothing changed).
        StorageFullError, StorageError: the file or the index cannot be written (nothing
            changed).
    """
    upload.check()
    name = SAFE_NAME.sub("-", Path(upload.filename).name).strip("-.") or "document"
    if not name.lower().endswith(Path(upload.filename).suffix.lower()):
        name += Path(upload.filename).suffix.lower()
    files = upload_files(kb)
    with files.replacing(
        kb.store.documents, upload.doc_id, upload.version, name, upload.content
    ) as target:
        report = _index(kb, upload, target)
    status = "added" if report.added else "updated" if report.updated else "unchanged"
    (stored,) = (d for d in kb.documents(upload.doc_id) if d.document.version == upload.version)
    fields = stored.document.to_dict()
    # an open bound is null, as GET /documents/{doc_id} gives it
    metadata = {name: (str(fields[name]) or None) if name in DATES else str(fields[name])
                for name in METADATA}  # fmt: skip
    return WriteResult(upload.doc_id, upload.version, status, stored.passages, metadata)


def _index(kb: KnowledgeBase, upload: Upload, target: Path) -> IndexReport:
    """Index ``target`` (in place, its previous version kept aside) with ``upload``'s
    metadata.

    Raises:
        IngestError: it cannot be indexed; StorageFullError, StorageError: see
            :meth:`KnowledgeBase.index`.
    """
    name = target.name
    inventory = target.parent / INVENTORY
    with file_errors():
        _write_inventory(inventory, upload, target)
    report = kb.index([target], inventory=inventory, default_access=upload.access, takeover=True)
    problems = report.failed + report.warnings
    if report.failed or not (report.added or report.updated or report.unchanged):
        reason = problems[0][1] if problems else "no document in this file"
        reason = _scrub(reason, target)
        raise IngestError(f"{name}: {reason.removeprefix(f'{name}: ')}")
    return report


def _scrub(reason: str, target: Path) -> str:
    """``reason`` without the server's folders (nobody's business): ``target`` (an upload's
    file) named by its file name, and another upload's path as readers see it
    (``uploads/DOC/vN/NAME``: :func:`~kbsearch.present.sources.shown_source`).
    Whatever form the message gives a path in (as given, e.g. relative to the server's
    working directory, absolute or resolved), the longest forms are replaced first, so that
    no folder above a relative path is left behind."""
    uploads = target.parent.parent.parent
    replacements = {str(form): target.name for form in _forms(target)}
    replacements |= {f"{form}/": f"{UPLOADS_SHOWN}/" for form in _forms(uploads)}
    for path in sorted(replacements, key=len, reverse=True):
        reason = reason.replace(path, replacements[path])
    return reason


def _forms(path: Path) -> set[Path]:
    """``path`` as given, absolute and resolved (links followed)."""
    return {path, path.absolute(), path.resolve()}


def _write_inventory(path: Path, upload: Upload, target: Path) -> None:
    """A one-row inventory for ``target`` (its ``file`` relative to the CSV's folder)."""
    relative = target.relative_to(path.parent)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(
            ["file", "doc_id", "title", "version", "effective_from", "effective_to",
             "owner", "access", "language", "doc_type", "format"]
        )  # fmt: skip
        writer.writerow(
            [relative.as_posix(), upload.doc_id, upload.title, upload.version,
             upload.effective_from, upload.effective_to, upload.owner, upload.access,
             upload.language, upload.doc_type, format_name(target)]
        )  # fmt: skip


def hides_public(kb: KnowledgeBase, upload: Upload) -> bool:
    """Whether writing ``upload`` may hide passages the public sees now: a staff version of
    a document that has a public version (conservative: any version of that id)."""
    return upload.access != "public" and any(
        d.document.access == "public" for d in kb.documents(upload.doc_id)
    )
