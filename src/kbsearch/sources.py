"""How a document's source is shown to a reader (search hits, answers' citations, passages,
document lists): a URL as is; a file path relative to the deepest folder holding every public
document, never the server's absolute path.

Only public documents' folders count: a staff document's path must not move what the public
sees (nor show that a staff write happened).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache

from .records import Document

URL_PREFIXES = ("http://", "https://")


def common_root(roots: list[str]) -> str | None:
    """The deepest folder holding all of ``roots`` (``None``: none, no common one, or only the
    filesystem's root, relative to which a path would show the server's whole layout)."""
    if not roots:
        return None
    try:
        common = os.path.commonpath(roots)
    except ValueError:
        return None
    return None if os.path.dirname(common) == common else common


def public_roots(documents: Iterable[Document]) -> list[str]:
    """The folders of the public documents read from files, sorted, once each."""
    folders = {
        os.path.dirname(d.source)
        for d in documents
        if d.access == "public" and d.source and not d.source.startswith(URL_PREFIXES)
    }
    return sorted(folders)


def public_root(documents: Iterable[Document]) -> str | None:
    """The deepest folder holding every public document's file (see :func:`shown_source`)."""
    return common_root(public_roots(documents))


@lru_cache(maxsize=4096)
def shown_source(source: str, common: str | None) -> str:
    """``source`` as a reader sees it: a URL as is, else the path relative to ``common``
    (:func:`public_root`), else the file name (also for a file outside ``common``: a ``..``
    path would show the server's folders)."""
    # cached: the same documents' labels come back page after page (path arithmetic per hit
    # was a few per cent of a served search)
    if source.startswith(URL_PREFIXES):
        return source
    if common is not None:
        try:
            shown = os.path.relpath(source, common)
        except ValueError:
            shown = os.pardir
        if shown != os.pardir and not shown.startswith(os.pardir + os.sep):
            return shown
    return os.path.basename(source)
