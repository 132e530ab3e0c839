"""Error messages as a caller may read them: no server path. The index file is "the index",
its uploads folder ``uploads``, and an indexed file is named as search hits show its source
(:func:`kbsearch.present.sources.shown_source`: relative to the public documents' common folder)."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import StorageError
from ..present.sources import UPLOADS_SHOWN, shown_source, uploads_folder
from .engine import Engine
from .present import Catalogue

INDEX_SHOWN = "the index"
QDRANT_SHOWN = "the Qdrant shard"


def _forms(path: str | Path) -> set[str]:
    """``path`` as given, absolute and resolved (links followed)."""
    given = Path(path)
    return {str(given), str(given.absolute()), str(given.resolve())}


def path_replacements(
    db: str | Path, catalogue: Catalogue | None, qdrant_path: str | None = None
) -> dict[str, str]:
    """``{server path: what a caller reads instead}`` for the index file ``db``, its uploads
    folder, its Qdrant Edge shard folder ``qdrant_path`` and (given the ``catalogue``) every
    indexed document's source file."""
    shown = {form: INDEX_SHOWN for form in _forms(db)}
    shown |= {form: UPLOADS_SHOWN for form in _forms(uploads_folder(db))}
    if qdrant_path is not None:
        shown |= {form: QDRANT_SHOWN for form in _forms(qdrant_path)}
    if catalogue is not None:
        for source in catalogue.sources():
            if source and os.path.isabs(source):
                visible = shown_source(source, catalogue.common, catalogue.uploads)
                shown |= {form: visible for form in _forms(source)}
    return shown


def without_paths(message: str, replacements: dict[str, str]) -> str:
    """``message`` with each path of ``replacements`` replaced, the longest first (a
    document under the uploads folder before the folder, the folder before the index file
    whose name it extends)."""
    for path in sorted(replacements, key=len, reverse=True):
        if path in message:
            message = message.replace(path, replacements[path])
    return message


async def shown_error(engine: Engine, exc: BaseException) -> str:
    """``exc``'s message on one line, without server paths (:func:`without_paths`; the
    Qdrant Edge shard's folder too); the documents' sources read from the served generation
    when the message may name one (not for a storage error: the file may not be
    readable)."""
    message = " ".join(str(exc).split())  # one line, whatever an engine's message held
    if os.sep not in message:
        return message
    catalogue = None
    if not isinstance(exc, StorageError):
        try:
            catalogue = await engine.run_read(Catalogue.of)
        except Exception:  # the message without the sources' paths replaced, rather than none
            catalogue = None
    target = getattr(engine.kb.backend, "target", None)
    shard = getattr(target, "path", None)
    return without_paths(message, path_replacements(engine.db, catalogue, shard))
