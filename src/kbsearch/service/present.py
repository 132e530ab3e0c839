"""Results people can read: each hit, passage and document with its title, section, version,
effective dates, language and source, as JSON-ready dictionaries.

Everything here reads through one :class:`KnowledgeBase` inside one read transaction (see
:class:`kbsearch.service.engine.Engine`), so what a response shows belongs to one index
generation. Documents are filtered by audience before anything is shown or counted.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from ..filters import Audience
from ..knowledge_base import KnowledgeBase
from ..present.snippets import make_snippet, trigram_scores
from ..present.sources import public_root_of, shown_source, uploads_folder
from ..records import Document, Hit, Passage
from ..retrieve.query import Query
from ..store import StoredDocument
from ..text.matching import match_spans, query_keys, sentence_spans


def visible_documents(
    kb: KnowledgeBase, audience: str, doc_id: str | None = None
) -> list[StoredDocument]:
    """The stored document versions ``audience`` may see (of ``doc_id`` only, read by its
    key, when given), by doc id then version."""
    seer = Audience.parse(audience)
    return [d for d in kb.documents(doc_id) if seer.sees(d.document.access)]


class Catalogue:
    """The documents of one generation, keyed by ``(doc_id, version)``, for labelling hits:
    read through the backend protocol as hits name them (:meth:`load`), never the whole
    documents table, and kept; :meth:`of` shares one per knowledge base and generation."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.backend = kb.backend
        self._sources = kb.store.documents.sources  # the store's, not kb's: no cycle to kb
        self.by_key: dict[tuple[str, str], Document | None] = {}
        self._lock = threading.Lock()
        # the folders of public documents only, uploads left out (kbsearch.present.sources)
        self.uploads = uploads_folder(kb.store.path)
        self.common = public_root_of(kb.backend.public_folders(), self.uploads)

    def load(self, keys: Iterable[tuple[str, str]]) -> None:
        """Read the documents among ``keys`` not read yet, in one call (call it inside the
        read transaction of the generation this catalogue belongs to)."""
        missing = [k for k in dict.fromkeys(keys) if k not in self.by_key]
        if missing:
            found = self.backend.documents(missing)
            with self._lock:
                self.by_key.update({k: found.get(k) for k in missing})

    @classmethod
    def of(cls, kb: KnowledgeBase) -> Catalogue:
        """``kb``'s catalogue at the generation this thread reads, built once per generation
        (listing every document costs more than the rest of a search's labels). The two
        newest generations are kept: while a server publishes a new snapshot, searches on the
        old one and on the new one alternate (a server's snapshot builder builds it first)."""
        with kb.store.database.read_transaction():  # the generation and the documents: one state
            generation = kb.store.database.generation()
            with _CATALOGUES_LOCK:
                found = _CATALOGUES.get(kb, {}).get(generation)
            if found is not None:
                return found
            catalogue = cls(kb)
        with _CATALOGUES_LOCK:
            kept = _CATALOGUES.setdefault(kb, {})
            kept[generation] = catalogue
            for old in sorted(kept)[:-_GENERATIONS]:
                del kept[old]
        return catalogue

    def sources(self) -> list[str]:
        """Every stored document's source (O(documents): for scrubbing an error message of
        server paths, not for a search; call it inside a read transaction)."""
        return list(self._sources().values())

    def document(self, doc_id: str, version: str) -> Document | None:
        key = (doc_id, version)
        if key not in self.by_key:
            self.load([key])
        return self.by_key.get(key)

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
            "source": shown_source(doc.source, self.common, self.uploads),
        }


_CATALOGUES: weakref.WeakKeyDictionary[KnowledgeBase, dict[int, Catalogue]] = (
    weakref.WeakKeyDictionary()
)
_GENERATIONS = 2  # catalogues kept per knowledge base: the one served and the one built next
_CATALOGUES_LOCK = threading.Lock()


def heading_length(text: str, title: str, section: str) -> int:
    """Characters of the title and heading lines a passage's text starts with (0 if not)."""
    prefix = f"{title}\n{section}\n" if section else f"{title}\n"
    return len(prefix) if text.startswith(prefix) else 0


def snippet_of(
    kb: KnowledgeBase, query: str | Query, text: str, title: str, section: str, language: str
) -> dict[str, Any]:
    """The part of ``text`` that matches ``query`` with match offsets (see
    :func:`kbsearch.present.snippets.make_snippet`), taken from the body after the title and heading
    lines (shown apart on every result); for a body sharing no word with the query, the
    sentence sharing most of its character trigrams
    (:func:`kbsearch.present.snippets.trigram_scores`). Nothing is embedded (``kb`` is not
    read): a snippet costs work linear in the passage's length, however many hits a page has.
    ``start``/``end`` are offsets in ``text``."""
    analysed = Query.of(query)
    languages = [language] if language else ["en", "fr"]
    skip = heading_length(text, title, section)
    body = text[skip:] if text[skip:].strip() else text
    shift = skip if body is not text else 0
    scores = None
    matches = match_spans(body, query_keys(analysed.text, languages), languages)
    if not matches:
        sentences = [body[s:e] for s, e in sentence_spans(body)]
        scores = trigram_scores(sentences, analysed.text)
    snippet = make_snippet(body, analysed.text, languages, sentence_scores=scores, matches=matches)
    return snippet.to_dict() | {"start": snippet.start + shift, "end": snippet.end + shift}


def hit_dict(
    hit: Hit,
    catalogue: Catalogue,
    kb: KnowledgeBase | None = None,
    query: str | Query | None = None,
) -> dict[str, Any]:
    """A hit as ``kbsearch search --json`` prints it, plus the document's labels and, with
    ``kb`` and ``query`` (its search's :class:`~kbsearch.retrieve.query.Query`, whose
    vector a dense-only snippet reuses), its snippet."""
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
    labels = catalogue.labels(hit.doc_id, hit.version)
    out.update(labels)
    if kb is not None and query is not None:
        out["snippet"] = snippet_of(
            kb, query, hit.text, labels.get("title", ""), hit.section, labels.get("language", "")
        )
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
