"""Documents an indexing run refuses before writing anything: a doc id and version already
indexed from another file, and versions of one document whose effective periods overlap
(checked against the whole index, not only this run)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kbsearch.ingest.metadata import overlaps, period
from kbsearch.records import Document, ParsedDocument
from kbsearch.store import StoredDocument


@dataclass(frozen=True)
class ResolvedDocument:
    """A document resolved this run, not yet written."""

    source: Path
    document: Document
    parsed: ParsedDocument
    defaulted: bool


def refuse_claims(
    candidates: list[ResolvedDocument],
    stored: dict[tuple[str, str], StoredDocument],
    parsed_ok: set[str],
) -> tuple[list[ResolvedDocument], list[tuple[str, str]]]:
    """Refuse a document whose doc_id+version is stored from another file that still
    exists and was not re-read this run (re-read files that no longer yield it gave it
    up)."""
    kept: list[ResolvedDocument] = []
    refused: list[tuple[str, str]] = []
    for cand in candidates:
        old = stored.get((cand.document.doc_id, cand.document.version))
        other = old.document.source if old else ""
        moved = other in parsed_ok or not Path(other).exists()
        if old and other != str(cand.source) and not moved:
            refused.append(
                (
                    str(cand.source),
                    f"doc id {cand.document.doc_id!r} version {cand.document.version} is already "
                    f"indexed from {other}; give one of the files its own doc_id (front matter "
                    "`doc_id:` or the inventory), or delete the other file and re-run with --prune",
                )
            )
            continue
        kept.append(cand)
    return kept, refused


def refuse_overlaps(
    candidates: list[ResolvedDocument],
    stored: dict[tuple[str, str], StoredDocument],
    leaving: set[tuple[str, str]],
) -> tuple[list[ResolvedDocument], list[tuple[str, str]]]:
    """Refuse a version whose effective period overlaps another version of its doc_id,
    stored (unless ``leaving``: pruned by this run) or earlier in this run."""
    versions: dict[str, dict[str, Document]] = {}
    for (doc_id, version), d in stored.items():
        if (doc_id, version) not in leaving:
            versions.setdefault(doc_id, {})[version] = d.document
    kept: list[ResolvedDocument] = []
    refused: list[tuple[str, str]] = []
    for cand in candidates:
        doc = cand.document
        others = versions.setdefault(doc.doc_id, {})
        clash = next(
            (o for v, o in sorted(others.items()) if v != doc.version and overlaps(doc, o)),
            None,
        )
        if clash is not None:
            same_file = " (from the same file: re-run with --prune to remove it)"
            refused.append(
                (
                    str(cand.source),
                    f"{doc.doc_id}: version {doc.version} ({period(doc)}) overlaps version "
                    f"{clash.version} ({period(clash)}, from {clash.source})"
                    f"{same_file if clash.source == doc.source else ''}; give the versions "
                    "effective_from/effective_to dates that do not overlap",
                )
            )
            continue
        others[doc.version] = doc
        kept.append(cand)
    return kept, refused
