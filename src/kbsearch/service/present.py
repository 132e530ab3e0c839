"""Results people can read: each hit, passage and document with its title, section, version,
effective dates, language and source, as JSON-ready dictionaries.

Everything here reads through one :class:`KnowledgeBase` inside one read transaction (see
:class:`kbsearch.service.engine.Engine`), so what a response shows belongs to one index
generation. Documents are filtered by audience before anything is shown or counted.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any

from ..knowledge_base import KnowledgeBase
from ..records import Document, Hit, Passage
from ..store import StoredDocument


def visible(document: Document, audience: str) -> bool:
    return audience == "staff" or document.access == "public"


def visible_documents(kb: KnowledgeBase, audience: str) -> list[StoredDocument]:
    """The stored document versions ``audience`` may see, by doc id then version."""
    return [d for d in kb.documents() if visible(d.document, audience)]


def display_source(source: str, roots: list[str]) -> str:
    """A URL as is; a path relative to the deepest folder holding all indexed files."""
    if source.startswith(("http://", "https://")):
        return source
    if roots:
        try:
            common = os.path.commonpath(roots)
            return os.path.relpath(source, common)
        except ValueError:
            pass
    return os.path.basename(source)


class Catalogue:
    """The documents of one generation, keyed by ``(doc_id, version)``, for labelling hits."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.stored = kb.documents()
        self.by_key = {(d.document.doc_id, d.document.version): d.document for d in self.stored}
        folders = [
            os.path.dirname(d.document.source)
            for d in self.stored
            if d.document.source and not d.document.source.startswith(("http://", "https://"))
        ]
        self.roots = sorted(set(folders))

    def document(self, doc_id: str, version: str) -> Document | None:
        return self.by_key.get((doc_id, version))

    def labels(self, doc_id: str, version: str) -> dict[str, Any]:
        """Title, language, access, effective dates (ISO or ``None``) and source."""
        doc = self.document(doc_id, version)
        if doc is None:
            return {}
        return {
            "title": doc.title,
            "language": doc.language,
            "access": doc.access,
            "effective_from": doc.effective_from.isoformat() if doc.effective_from else None,
            "effective_to": doc.effective_to.isoformat() if doc.effective_to else None,
            "source": display_source(doc.source, self.roots),
        }


def hit_dict(hit: Hit, catalogue: Catalogue) -> dict[str, Any]:
    """A hit as ``kbsearch search --json`` prints it, plus the document's labels."""
    out: dict[str, Any] = {
        "rank": hit.rank,
        "passage_id": hit.passage_id,
        "doc_id": hit.doc_id,
        "version": hit.version,
        "section": hit.section,
        "score": hit.score,
        "text": hit.text,
    }
    if hit.routes:
        out["routes"] = {r: {"rank": h.rank, "score": h.score} for r, h in hit.routes.items()}
    out.update(catalogue.labels(hit.doc_id, hit.version))
    return out


def passage_dict(passage: Passage, catalogue: Catalogue) -> dict[str, Any]:
    return asdict(passage) | catalogue.labels(passage.doc_id, passage.version)


def document_summary(stored: StoredDocument, catalogue: Catalogue) -> dict[str, Any]:
    doc = stored.document
    return {
        "doc_id": doc.doc_id,
        "version": doc.version,
        **catalogue.labels(doc.doc_id, doc.version),
        "owner": doc.owner,
        "doc_type": doc.doc_type,
        "format": doc.format,
        "passages": stored.passages,
    }
