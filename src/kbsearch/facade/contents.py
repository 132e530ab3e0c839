"""The facade's reading part: what a knowledge base holds (a passage by id, a document's
passages, the documents, statistics, the settings) and its backup
(:class:`~kbsearch.knowledge_base.KnowledgeBase` holds one and hands these calls to it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..backends.qdrant.target import SETTINGS_KEY as QDRANT_SETTINGS_KEY
from ..errors import PassageNotFoundError, shown_value
from ..filters import Audience, Filters
from ..present.sources import public_root_of, shown_source, uploads_folder
from ..records import DEFAULT_AUDIENCE, Document, Hit, Passage
from ..retrieve.backend import Backend
from ..store import Store, StoredDocument
from ..store.backup import Backup, write_backup
from ..text.analysis import is_text

SHOWN_IDS = 10  # passage ids named in the error for a document id given as a passage id


class Contents:
    """Reading a knowledge base's contents from its store (and, for what a search's filters
    leave out, from its backend)."""

    def __init__(self, store: Store, backend: Backend) -> None:
        self.store = store
        self.backend = backend

    @property
    def settings(self) -> dict[str, Any]:
        return self.store.database.settings()

    def get_passage(self, passage_id: str, audience: str = DEFAULT_AUDIENCE) -> Passage:
        """One passage by id, if ``audience`` may see it (any version).

        Raises:
            PassageNotFoundError: missing or hidden (one message for both).
        """
        audience = Audience.parse(audience)
        if not isinstance(passage_id, str) or not is_text(passage_id):
            raise PassageNotFoundError(f"no passage {shown_value(passage_id)} for this audience")
        row = self.store.passages.rows([passage_id]).get(passage_id)
        if row is None or (audience != Audience.STAFF and row.access != "public"):
            raise self.not_found(passage_id, audience)
        return row.passage

    def document_passages(self, document: str, audience: str = DEFAULT_AUDIENCE) -> list[Passage]:
        """The passages ``audience`` may see of ``document``: a document id (every version) or
        ``DOC_ID@vVERSION``; empty when there are none or ``document`` is not of that form."""
        audience = Audience.parse(audience)
        if not isinstance(document, str) or "#" in document or not is_text(document):
            return []
        doc_id, at, version = document.partition("@")
        if at and not version.startswith("v"):
            return []
        return self.store.passages.of_document(doc_id, version[1:] if at else None, str(audience))

    def not_found(self, passage_id: str, audience: str, what: str = "") -> PassageNotFoundError:
        """The error for a passage ``audience`` cannot see; when ``passage_id`` names a
        document it can see, the error says so and lists the passage ids (issue 14 item 14)."""
        ids = [p.passage_id for p in self.document_passages(passage_id, audience)]
        if not ids:
            return PassageNotFoundError(
                f"no passage {shown_value(passage_id)} for this audience{what}"
            )
        more = f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else ""
        return PassageNotFoundError(
            f"{shown_value(passage_id)} is a document id, not a passage id; its passages: "
            f"{', '.join(ids[:SHOWN_IDS])}{more}"
        )

    def excluded(self, passage_id: str, filters: Filters) -> PassageNotFoundError:
        """The error for a passage ``filters`` leave out: when the audience sees it on that
        day in another language than the language filter's, the filter is named (the
        passage's language is no secret: the audience may see it); else one message for
        missing and hidden passages."""
        if filters.language is not None:
            unfiltered = replace(filters, language=None)
            row = self.backend.passages([passage_id], unfiltered).get(passage_id)
            if row is not None:
                return PassageNotFoundError(
                    f"passage {shown_value(passage_id)} is in {row.language}: the language filter"
                    f" ({filters.language}) leaves it out"
                )
        dated = self.out_of_force(passage_id, filters)
        if dated is not None:
            return dated
        return self.not_found(passage_id, filters.audience, dated_message(filters))

    def out_of_force(self, passage_id: str, filters: Filters) -> PassageNotFoundError | None:
        """The error naming the day, when ``filters`` would let this audience see the passage
        on a day its version is in force but not on ``filters.day``; else ``None`` (the
        check runs the backend's filters on a day in force, so a hidden passage says nothing)."""
        bounds = self.store.passages.in_force_bounds(passage_id)
        if bounds is None or (bounds[0] is None and bounds[1] is None):
            return None
        in_force_day = bounds[0] or bounds[1]
        moved = replace(filters, as_of=in_force_day)
        if self.backend.passages([passage_id], moved).get(passage_id) is None:
            return None
        start, end = bounds
        if start and end:
            span = f"from {start} to {end}"
        else:
            span = f"from {start} on" if start else f"until {end}"
        return PassageNotFoundError(
            f"passage {shown_value(passage_id)} is not in force on {filters.day}: its version"
            f" is in force {span} (ask with as_of a day in that range)"
        )

    def cited(self, hits: Sequence[Hit]) -> dict[tuple[str, str], Document]:
        """The documents an answer may cite (``hits``'), by ``(doc_id, version)``, read from the
        backend, each with the source a search hit shows, never the server's absolute path
        (:mod:`kbsearch.present.sources`); a document gone is absent. Call it in the read
        transaction of the search."""
        keys = list(dict.fromkeys((h.doc_id, h.version) for h in hits))
        found = self.backend.documents(keys) if keys else {}
        if not found:
            return {}
        uploads = uploads_folder(self.store.path)
        common = public_root_of(self.backend.public_folders(), uploads)
        return {
            key: replace(d, source=shown_source(d.source, common, uploads))
            for key, d in found.items()
        }

    def documents(self, doc_id: str | None = None) -> list[StoredDocument]:
        """Every stored document version (O(documents)), or only the versions of ``doc_id``
        (by its key: O(its versions)), by doc id then version, with their passage counts."""
        if doc_id is None:
            return self.store.documents.all()
        found = self.store.documents.about([doc_id], [])
        return [found[key] for key in sorted(found)]

    def stats(self) -> dict[str, Any]:
        docs = self.store.documents.all()
        by: dict[str, dict[str, int]] = {"access": {}, "language": {}, "format": {}}
        for d in docs:
            for field_name in by:
                value = str(getattr(d.document, field_name))
                by[field_name][value] = by[field_name].get(value, 0) + 1
        return {
            "path": str(self.store.path),
            "bytes": self.store.path.stat().st_size,
            "documents": len(docs),
            "passages": self.store.passages.count(),
            "vectors": self.store.vectors.count(),
            "settings": self.settings,
            **{f"documents_by_{k}": v for k, v in by.items()},
        }

    def backup(self, destination: str | Path) -> Backup:
        """Write a consistent copy of the knowledge base to ``destination`` and of its upload
        store to the copy's own (:func:`~kbsearch.present.sources.uploads_folder` of
        ``destination``), the copy's uploaded documents naming their files there
        (:func:`kbsearch.store.backup.write_backup`). The copy does not share the index's
        Qdrant copy (a write to it would change the original's points): it is a SQLite index
        (``detached`` when a Qdrant target was left out; ``kbsearch sync --qdrant-path``
        gives it its own).

        Raises:
            InvalidArgumentError: ``destination`` exists and is not a SQLite file.
            StorageError: the copy cannot be written.
        """
        return write_backup(
            self.store.database,
            self.store.documents,
            uploads_folder(self.store.path),
            destination,
            uploads_folder(destination),
            without_meta=(QDRANT_SETTINGS_KEY,),
        )


def dated_message(filters: Filters) -> str:
    """What a not-found message adds to "for this audience": the date, when one was given."""
    return " and date" if filters.as_of is not None else ""
