"""One indexing run of a knowledge base: the settings it runs with, and the run itself,
in place or (re-embedding) into a staged copy that replaces the index only when complete.

:meth:`kbsearch.knowledge_base.KnowledgeBase.index` is the entry point; these functions hold
its steps so that the facade stays a thin layer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from ..embedders import Embedder
from ..errors import (
    EmbeddingError,
    IndexingInterrupted,
    InvalidArgumentError,
    OutdatedPassagesError,
)
from ..ingest.limits import IngestLimits
from ..store import IndexSettings, Store
from ..store.settings import DEFAULT_SECTION_LEVEL, PASSAGE_RULE
from ..store.staging import staged_copy
from ..text.analysis import Analyzer
from .headings import embed_headings
from .indexer import Indexer
from .report import IndexReport, Settings
from .writer import DocumentWriter

Progress = Callable[[int, int], None]


def check_settings(settings: Settings, embedder: Embedder | None) -> None:
    """Refuse settings no index can be built with.

    Raises:
        InvalidArgumentError: unknown analyzer, section level outside 1..6, a passage budget
            under 32 tokens or over the embedder's token limit.
    """
    try:
        Analyzer(settings.analyzer, settings.heading_weight)
    except ValueError as exc:
        raise InvalidArgumentError(str(exc)) from None
    if settings.section_level not in range(1, 7):
        raise InvalidArgumentError("section level must be 1 to 6")
    if settings.passage_budget < 32:
        raise InvalidArgumentError("passage budget must be at least 32 tokens")
    if embedder and settings.passage_budget > embedder.max_tokens:
        raise InvalidArgumentError(
            f"passage budget {settings.passage_budget} exceeds the embedder's limit of "
            f"{embedder.max_tokens} tokens"
        )


def settings_record(
    settings: Settings, embedder: Embedder | None, spec: str | None
) -> IndexSettings:
    """The settings a new (or re-embedded) index records with its first document
    (``spec``: the embedder spec it was loaded from)."""
    if embedder is None:
        return IndexSettings(**asdict(settings))
    return IndexSettings(
        **asdict(settings),
        embedder=embedder.name,
        embedder_spec=spec or embedder.name,
        dim=embedder.dim,
        query_prefix=embedder.query_prefix,
        passage_prefix=embedder.passage_prefix,
    )


def plan_settings(
    current: IndexSettings | None,
    reembed: bool,
    embedder: Embedder | None,
    spec: str | None,
    analyzer: str | None,
    section_level: int | None,
    passage_budget: int | None,
) -> tuple[Settings, IndexSettings]:
    """The run's settings and the record it writes: an existing index keeps the settings
    it was built with; a new (or re-embedded) one takes the arguments given, else the
    previous or default values (the passage budget defaults to the embedder's limit; an index
    cut by an older passage rule takes today's section level).

    Raises:
        InvalidArgumentError: as :func:`check_settings`.
        OutdatedPassagesError: the index's passages were cut by an older rule and this is
            not a rebuild (``reembed``).
    """
    if current is not None and not reembed and current.chunking != PASSAGE_RULE:
        raise OutdatedPassagesError(
            "this index's passages were cut by an older rule (sections at heading level "
            f"{current.section_level} only); rebuild it from its sources with `kbsearch index"
            " PATH... --db DB --reembed` so that its passages follow the heading hierarchy"
        )
    if current is not None and not reembed:
        settings = Settings(
            analyzer=current.analyzer,
            section_level=current.section_level,
            passage_budget=current.passage_budget,
            overlap=current.overlap,
            heading_weight=current.heading_weight,
        )
        return settings, current
    previous = current or IndexSettings()
    if previous.chunking != PASSAGE_RULE:
        previous = replace(previous, section_level=DEFAULT_SECTION_LEVEL)
    settings = Settings(
        analyzer=analyzer or previous.analyzer,
        section_level=section_level or previous.section_level,
        passage_budget=passage_budget
        or (embedder.max_tokens if embedder else previous.passage_budget),
    )
    check_settings(settings, embedder)
    return settings, settings_record(settings, embedder, spec)


def run_index(
    store: Store,
    paths: Sequence[str | Path],
    settings: Settings,
    record: IndexSettings,
    embedder: Embedder | None,
    progress: Progress | None,
    limits: IngestLimits | None = None,
    **options: Any,
) -> IndexReport:
    """Index ``paths`` into ``store`` in place (see :class:`kbsearch.index.indexer.Indexer`;
    ``limits``: the ingest limits, default :class:`IngestLimits`).

    Raises:
        IndexingInterrupted: Ctrl-C; its ``report`` counts what was written (kept).
    """
    analyzer = Analyzer(settings.analyzer, settings.heading_weight)
    limits = limits or IngestLimits()
    indexer = Indexer(
        DocumentWriter(store, analyzer, embedder, settings, progress, record, limits=limits)
    )
    try:
        report = indexer.run(paths, **options)
        add_heading_vectors(store, embedder, report)
        return report
    except KeyboardInterrupt as exc:
        raise IndexingInterrupted(indexer.report) from exc


def reembed_into_copy(
    store: Store,
    paths: Sequence[str | Path],
    settings: Settings,
    record: IndexSettings,
    embedder: Embedder | None,
    progress: Progress | None,
    options: dict[str, Any],
    limits: IngestLimits | None = None,
) -> IndexReport:
    """Rebuild into a copy of the index (:mod:`kbsearch.store.staging`); the copy replaces
    the index only when every file was indexed, so a failing file or an interruption keeps
    the old index whole (``kept_previous_index`` in the report).

    Raises:
        IndexingInterrupted: Ctrl-C; the old index is kept.
    """
    with staged_copy(store) as staging:
        analyzer = Analyzer(settings.analyzer, settings.heading_weight)
        limits = limits or IngestLimits()
        indexer = Indexer(
            DocumentWriter(
                staging.copy, analyzer, embedder, settings, progress, record, limits=limits
            )
        )
        try:
            report = indexer.run(paths, prune=False, **options)
            add_heading_vectors(staging.copy, embedder, report)
        except KeyboardInterrupt as exc:
            indexer.report.kept_previous_index = True
            raise IndexingInterrupted(indexer.report) from exc
        if report.ok and report.passages:
            staging.commit()
        else:
            report.kept_previous_index = True
    return report


def add_heading_vectors(store: Store, embedder: Embedder | None, report: IndexReport) -> None:
    """After a run's passages are written: embed the headings the embedding cache lacks
    (:func:`kbsearch.index.headings.embed_headings`, distinct texts only, so an index built before
    heading vectors gets them on its next run) and, when any were added, bump the generation
    so that searches reload them. A heading the embedder refuses is a warning, not a failure
    (the passages are written; title scores are missing for it).

    Raises:
        StorageError: the embedding cache cannot be written.
    """
    if embedder is None or not store.database.index_settings():
        return
    public: list[bool] = []
    try:
        report.headings_embedded = embed_headings(store, embedder, public=public)
    except EmbeddingError as exc:
        report.warnings.append(("headings", f"heading vectors not embedded: {exc}"))
        return
    if report.headings_embedded:
        with store.database.transaction():
            store.database.bump_generation(public=any(public))
