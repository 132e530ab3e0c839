"""The facade's indexing part: :meth:`KnowledgeBase.index <kbsearch.knowledge_base.
KnowledgeBase.index>` and :meth:`~kbsearch.knowledge_base.KnowledgeBase.delete`
(:class:`~kbsearch.knowledge_base.KnowledgeBase` holds one and hands the calls to it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..backends.factory import LocalIndexes, mirrored, mirrored_deletes
from ..errors import DocumentNotFoundError, InvalidArgumentError, ReadOnlyIndexError, shown_value
from ..filters import AUDIENCES, Audience
from ..index.embedder_slot import EmbedderSlot
from ..index.indexer import IndexReport, expand_paths, load_inventory
from ..index.run import plan_settings, reembed_into_copy, run_index
from ..ingest.limits import IngestLimits
from ..present.sources import uploads_folder
from ..store import Store
from ..store.upload_files import UploadFiles


@dataclass(frozen=True)
class IndexOptions:
    """The options of one :meth:`KnowledgeBase.index <kbsearch.knowledge_base.KnowledgeBase.
    index>` call (its keyword arguments).

    ``takeover``: a doc id and version already stored from another file is replaced by
    the one found now instead of being refused (the HTTP API's ``PUT /documents``).

    ``analyzer``, ``passage_budget`` and ``section_level`` apply when the index is new
    (or re-embedded); an existing index keeps the settings it was built with.
    ``reembed`` rebuilds the index from ``paths`` with this knowledge base's embedder:
    documents not under ``paths`` are not kept. It builds the new index in a copy that
    replaces the old one only when every file was indexed (else ``kept_previous_index``
    is set in the report and the old index is unchanged). The settings are recorded with
    the first document, in its transaction. ``default_access`` labels documents that
    have no label; the index remembers it, and ``None`` uses the remembered one (``staff``
    for a new index). ``ingest_limits`` (:mod:`kbsearch.ingest.limits`): a file over one is
    refused (in the report's ``failed``) and what is indexed of it stays as it was.
    """

    inventory: str | Path | None
    default_access: str | None
    prune: bool
    lang: str | None
    reembed: bool
    analyzer: str | None
    passage_budget: int | None
    section_level: int | None
    progress: Callable[[int, int], None] | None
    takeover: bool
    ingest_limits: IngestLimits


class Indexing:
    """Indexes into one knowledge base: its store, its backend (a Qdrant copy is synced after
    the SQLite write) and its embedder."""

    def __init__(self, store: Store, backend: LocalIndexes, embedders: EmbedderSlot) -> None:
        self.store = store
        self.backend = backend
        self._embedders = embedders

    def delete(self, doc_id: str, version: str | None, audience: str) -> list[str]:
        """Remove ``doc_id`` (``version``, or every version) as ``audience`` sees it, each
        version in one transaction through the backend (a Qdrant copy loses the version's
        points, then the others are re-weighted if the average length moved:
        :func:`~kbsearch.backends.factory.mirrored_deletes`), then its uploaded file
        (:mod:`kbsearch.store.upload_files`); the versions removed, sorted.

        Raises:
            DocumentNotFoundError: no such document, or none visible to ``audience`` (one
                message for missing and hidden); or no such version of one it sees.
            InvalidArgumentError: an empty ``version`` (``None`` is every version), as the
                HTTP API's ``version=`` says it, whatever the document.
            ReadOnlyIndexError: the file is read-only.
            StorageError: the index or the upload store cannot be written.
            PartialWriteError: SQLite no longer holds a version but Qdrant failed
                (``kbsearch sync`` repairs).
        """
        if version is not None and not version.strip():
            raise InvalidArgumentError(
                "version is empty; leave it out to remove every version, or give a value"
            )
        seer = Audience.parse(audience)
        found = self.store.documents.about([doc_id], []) if isinstance(doc_id, str) else {}
        seen = sorted(v for (_, v), d in found.items() if seer.sees(d.document.access))
        if not seen:
            raise DocumentNotFoundError(f"no document {shown_value(doc_id)} for this audience")
        versions = [v for v in seen if version in (None, v)]
        if not versions:
            raise DocumentNotFoundError(
                f"document {shown_value(doc_id)} has no version {shown_value(version)}"
            )
        self._writable()
        files = UploadFiles(uploads_folder(self.store.path))
        with mirrored_deletes(self.backend):  # SQLite first, each version; a Qdrant copy after
            for v in versions:  # the index first, then the uploaded file (in step through a crash)
                with files.removing(self.store.documents, doc_id, v):
                    self.backend.delete_document(doc_id, v)
        return versions

    def _writable(self) -> None:
        """Raises ReadOnlyIndexError when the file cannot be written."""
        if self.store.database.read_only:
            raise ReadOnlyIndexError(
                f"{self.store.path} is read-only; it can be searched, but indexing needs write"
                f" access (chmod u+w {self.store.path})"
            )

    def index(self, paths: Sequence[str | Path], o: IndexOptions) -> IndexReport:
        """Index ``paths`` with the options ``o``: :meth:`kbsearch.knowledge_base.KnowledgeBase.
        index`."""
        if o.default_access is not None and o.default_access not in AUDIENCES:
            raise InvalidArgumentError(f"unknown access label {shown_value(o.default_access)}")
        self._writable()
        # an upload a crash cut short is finished or undone before anything else is written
        UploadFiles(uploads_folder(self.store.path)).recover(self.store.documents)
        current = self.store.database.index_settings()
        embedder = self._embedders.for_indexing(current is None or o.reembed, o.reembed)
        spec = self._embedders.recorded_spec(embedder) if embedder is not None else None
        settings, record = plan_settings(
            current, o.reembed, embedder, spec, o.analyzer, o.section_level, o.passage_budget
        )
        if o.reembed:  # everything that can fail up front is checked before anything goes
            expand_paths(paths)
            load_inventory(o.inventory)
        options: dict[str, Any] = {
            "inventory": o.inventory,
            "default_access": o.default_access,
            "lang": o.lang,
            "takeover": o.takeover,
        }
        with mirrored(self.backend):  # SQLite first; a Qdrant copy is synced after
            if o.reembed:  # the search snapshot follows the generation the staged copy bumps
                return reembed_into_copy(self.store, paths, settings, record, embedder,
                                         o.progress, options, o.ingest_limits)  # fmt: skip
            return run_index(self.store, paths, settings, record, embedder, o.progress,
                             o.ingest_limits, prune=o.prune, **options)  # fmt: skip
