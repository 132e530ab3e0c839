"""How a document's source is shown to a reader (search hits, answers' citations, passages,
document lists): a URL as is; a file path relative to the deepest folder holding every public
document, never the server's absolute path; a file uploaded to a server (kept under
:func:`uploads_folder`) as ``uploads/<doc_id>/v<version>/<name>``.

Only public documents' indexed folders count: a staff document's path must not move what the
public sees (nor show that a staff write happened), and neither does an upload (the uploads
folder sits beside the index file, wherever that is: counting it would shift every other
document's path, or show the server's folders above both).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache

from ..records import Document

URL_PREFIXES = ("http://", "https://")
UPLOADS_SUFFIX = ".uploads"
UPLOADS_SHOWN = "uploads"


def uploads_folder(db: str | os.PathLike[str]) -> str:
    """The folder where a server keeps the files uploaded to the index file ``db``:
    ``<db>.uploads`` beside it (absolute)."""
    path = os.path.abspath(os.fspath(db))
    return path + UPLOADS_SUFFIX


def _under(path: str, folder: str | None) -> bool:
    return folder is not None and path.startswith(folder + os.sep)


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


def public_roots(documents: Iterable[Document], uploads: str | None = None) -> list[str]:
    """The folders of the public documents read from files, sorted, once each; files under
    ``uploads`` (:func:`uploads_folder`) left out."""
    folders = {
        os.path.dirname(d.source)
        for d in documents
        if d.access == "public" and d.source and not d.source.startswith(URL_PREFIXES)
    }
    return outside_uploads(sorted(folders), uploads)


def outside_uploads(folders: Iterable[str], uploads: str | None = None) -> list[str]:
    """``folders`` (of files) without those of files under ``uploads`` (the folder itself
    and those under it), in order."""
    return [f for f in folders if f != uploads and not _under(f, uploads)]


def public_root(documents: Iterable[Document], uploads: str | None = None) -> str | None:
    """The deepest folder holding every public document's indexed file (see
    :func:`shown_source`; uploads left out)."""
    return common_root(public_roots(documents, uploads))


def public_root_of(folders: Iterable[str], uploads: str | None = None) -> str | None:
    """:func:`public_root` from the public documents' file folders (a backend's
    ``public_folders()``), uploads left out."""
    return common_root(outside_uploads(folders, uploads))


@lru_cache(maxsize=4096)
def shown_source(source: str, common: str | None, uploads: str | None = None) -> str:
    """``source`` as a reader sees it: a URL as is; a file under ``uploads``
    (:func:`uploads_folder`) as ``uploads/`` and its path there; else the path relative to
    ``common`` (:func:`public_root`), else the file name (also for a file outside ``common``:
    a ``..`` path would show the server's folders)."""
    # cached: the same documents' labels come back page after page (path arithmetic per hit
    # was a few per cent of a served search)
    if source.startswith(URL_PREFIXES):
        return source
    if uploads is not None and _under(source, uploads):
        return os.path.join(UPLOADS_SHOWN, os.path.relpath(source, uploads))
    if common is not None:
        try:
            shown = os.path.relpath(source, common)
        except ValueError:
            shown = os.pardir
        if shown != os.pardir and not shown.startswith(os.pardir + os.sep):
            return shown
    return os.path.basename(source)
