"""The facade's indexing side: :meth:`KnowledgeBase.index <kbsearch.knowledge_base.
KnowledgeBase.index>` (:class:`~kbsearch.knowledge_base.KnowledgeBase` inherits it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..backends.factory import LocalIndexes, mirrored
from ..errors import InvalidArgumentError, ReadOnlyIndexError
from ..filters import AUDIENCES
from ..index.embedder_slot import EmbedderSlot
from ..index.indexer import IndexReport, expand_paths, load_inventory
from ..index.run import plan_settings, reembed_into_copy, run_index
from ..ingest.limits import IngestLimits
from ..present.sources import uploads_folder
from ..store import Store
from ..store.upload_files import UploadFiles


class Indexing:
    """:meth:`index` (the attributes are the knowledge base's)."""

    store: Store
    backend: LocalIndexes
    _embedders: EmbedderSlot
    ingest_limits: IngestLimits  # what index() applies unless told otherwise

    def index(
        self,
        paths: Sequence[str | Path],
        *,
        inventory: str | Path | None = None,
        default_access: str | None = None,
        prune: bool = False,
        lang: str | None = None,
        reembed: bool = False,
        analyzer: str | None = None,
        passage_budget: int | None = None,
        section_level: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        takeover: bool = False,
        ingest_limits: IngestLimits | None = None,
    ) -> IndexReport:
        """Index files and folders (see :mod:`kbsearch.index.indexer`).

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
        for a new index). ``ingest_limits`` (default: this knowledge base's ``ingest_limits``,
        :mod:`kbsearch.ingest.limits`): a file over one is refused (in the report's
        ``failed``) and what is indexed of it stays as it was.

        Raises:
            InvalidArgumentError: unknown access label or analyzer, budget too small.
            EmbedderMismatchError: another embedder built this index (use ``reembed``).
            IngestError: a path does not exist. Per-document failures are in the report.
            ReadOnlyIndexError, DatabaseLockedError, StorageFullError: the file cannot be
                written (what was written before stays).
            SettingsConflictError: another run recorded other settings meanwhile.
            IndexingInterrupted: Ctrl-C (a KeyboardInterrupt); its ``report`` counts what was
                written.
        """
        if default_access is not None and default_access not in AUDIENCES:
            raise InvalidArgumentError(f"unknown access label {default_access!r}")
        if self.store.read_only:
            raise ReadOnlyIndexError(
                f"{self.store.path} is read-only; it can be searched, but indexing needs write"
                f" access (chmod u+w {self.store.path})"
            )
        # an upload a crash cut short is finished or undone before anything else is written
        UploadFiles(uploads_folder(self.store.path)).recover(self.store)
        current = self.store.index_settings()
        embedder = self._embedders.for_indexing(current is None or reembed, reembed)
        spec = self._embedders.recorded_spec(embedder) if embedder is not None else None
        settings, record = plan_settings(
            current, reembed, embedder, spec, analyzer, section_level, passage_budget
        )
        if reembed:  # everything that can fail up front is checked before anything goes
            expand_paths(paths)
            load_inventory(inventory)
        options: dict[str, Any] = {
            "inventory": inventory,
            "default_access": default_access,
            "lang": lang,
            "takeover": takeover,
        }
        limits = ingest_limits or self.ingest_limits
        with mirrored(self.backend):  # SQLite first; a Qdrant copy is synced after
            if reembed:  # the search snapshot follows the generation the staged copy bumps
                return reembed_into_copy(self.store, paths, settings, record, embedder,
                                         progress, options, limits)  # fmt: skip
            return run_index(self.store, paths, settings, record, embedder, progress,
                             limits, prune=prune, **options)  # fmt: skip
