"""The file tasks that the CLI and the HTTP service run on top of the facade, so that neither
holds logic of its own: index into a file (a new file is removed again when its first run
fails), back up with the overwrite checks, verify and repair a Qdrant copy. Evaluating a
knowledge base on a question set is :mod:`kbsearch.tasks.evaluate`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..backends.factory import Mirrored
from ..errors import InvalidArgumentError, KbsearchError
from ..index.indexer import IndexReport
from ..knowledge_base import KnowledgeBase, open_kb
from ..present.sources import uploads_folder
from ..store.backup import Backup
from ..store.staging import discard_if_empty

if TYPE_CHECKING:
    from ..backends.qdrant.mirror import DriftReport
    from ..backends.qdrant.target import QdrantTarget

Progress = Callable[[int, int], None]


def index_files(
    db: str | Path,
    paths: Sequence[str | Path],
    *,
    embedder: str | None = None,
    progress: Progress | None = None,
    qdrant: QdrantTarget | None = None,
    **options: object,
) -> IndexReport:
    """Index ``paths`` into the knowledge base file ``db``, creating it when missing.

    ``options`` are :meth:`KnowledgeBase.index`'s (``inventory``, ``default_access``,
    ``prune``, ``lang``, ``reembed``, ``analyzer``, ``passage_budget``); ``qdrant``: keep a
    Qdrant copy there (recorded in the index). A run that creates ``db`` and fails (or is
    interrupted) before writing anything leaves no file behind; one that wrote documents
    keeps them.

    Raises:
        KbsearchError: as :func:`open_kb` and :meth:`KnowledgeBase.index`.
        IndexingInterrupted: Ctrl-C during indexing; its ``report`` counts what was written.
        KeyboardInterrupt: Ctrl-C before any document (loading the embedder, listing files).
    """
    new_file = not Path(db).exists()
    try:
        with open_kb(db, create=True, embedder=embedder, qdrant=qdrant) as kb:
            return kb.index(paths, progress=progress, **options)  # type: ignore[arg-type]
    except (KbsearchError, KeyboardInterrupt):
        if new_file:
            discard_if_empty(Path(db))
        raise


def _copy(db: str | Path, kb: KnowledgeBase) -> Mirrored:
    if not isinstance(kb.backend, Mirrored):
        raise InvalidArgumentError(
            f"{db} has no Qdrant copy; give --qdrant-url URL or --qdrant-path DIR"
        )
    return kb.backend


def verify_copy(db: str | Path, qdrant: QdrantTarget | None = None) -> DriftReport:
    """Compare ``db``'s Qdrant copy (``qdrant``, else the recorded one) with the SQLite file.

    Raises:
        InvalidArgumentError: the index has no Qdrant copy and none is given.
        KbsearchError: as :func:`open_kb`.
    """
    with open_kb(db, qdrant=qdrant) as kb:
        return _copy(db, kb).verify()


def sync_copy(
    db: str | Path, qdrant: QdrantTarget | None = None
) -> tuple[DriftReport, int, DriftReport]:
    """Record ``qdrant`` (when given) as ``db``'s copy and repair its drift: ``(the drift
    found, points deleted or written, the drift left)``.

    Raises:
        InvalidArgumentError: the index has no Qdrant copy and none is given.
        PartialWriteError: Qdrant failed half-way (run it again).
    """
    with open_kb(db, qdrant=qdrant) as kb:
        copy = _copy(db, kb)
        copy.record()
        report, changed = copy.sync()
        return report, changed, copy.verify()


def backup(db: str | Path, destination: str | Path, *, force: bool = False) -> Backup:
    """Write a consistent copy of ``db`` to ``destination`` (SQLite's online backup) and of
    its uploaded files to the copy's uploads folder (:meth:`KnowledgeBase.backup`); what was
    copied (``detached``: the copy left out the index's Qdrant target, it is a SQLite index).

    Raises:
        InvalidArgumentError: ``destination`` is ``db`` itself, or it or its uploads folder
            exists and not ``force``.
        KbsearchError: as :func:`open_kb` and :meth:`KnowledgeBase.backup`.
    """
    if Path(destination).resolve() == Path(db).resolve():
        raise InvalidArgumentError("backup destination is the database itself")
    if Path(destination).exists() and not force:
        raise InvalidArgumentError(f"{destination} exists; pass --force to overwrite it")
    copy_uploads = Path(uploads_folder(destination))
    if (copy_uploads.exists() or copy_uploads.is_symlink()) and not force:
        raise InvalidArgumentError(f"{copy_uploads} exists; pass --force to overwrite it")
    with open_kb(db) as kb:
        return kb.backup(destination)
