"""The HTTP status of each library error: the API's (``app.py``) and the search page's."""

from __future__ import annotations

from .. import errors
from ..errors import (
    DocumentNotFoundError,
    SearchTimeout,
    UnsupportedFormatError,
    UploadTooLargeError,
)

STATUS = {
    errors.PassageNotFoundError: 404,
    DocumentNotFoundError: 404,
    errors.QueryError: 422,
    errors.InvalidArgumentError: 422,
    errors.InventoryError: 422,
    errors.IngestError: 422,
    errors.EmbeddingError: 422,
    UnsupportedFormatError: 415,
    UploadTooLargeError: 413,
    errors.EmbedderUnavailableError: 503,
    errors.BackendUnavailableError: 503,  # PartialWriteError too: Qdrant lags, SQLite is written
    errors.StorageError: 503,
}


def error_status(exc: errors.KbsearchError) -> int:
    """The HTTP status of a library error (:data:`STATUS`; 500 for one it does not list)."""
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


def status_of(exc: errors.KbsearchError | SearchTimeout) -> int:
    """:func:`error_status`, and 503 for a search over the time limit."""
    return 503 if isinstance(exc, SearchTimeout) else error_status(exc)
