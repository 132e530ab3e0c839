"""The exceptions kbsearch raises. The CLI turns each into one line and a non-zero exit."""

from __future__ import annotations

from collections.abc import Sequence


def install_hint(extra: str) -> str:
    """How to install the optional ``extra`` (an extra pyproject.toml declares), both ways:
    by name once kbsearch is installed, from a wheel or a checkout (pip resolves the name to
    the installed copy), and from a checkout's folder.

    Raises:
        ValueError: ``extra`` is not one of kbsearch's extras (a bug in the caller).
    """
    if extra not in EXTRAS:
        raise ValueError(f"no extra {extra!r}: kbsearch's extras are {', '.join(EXTRAS)}")
    return f"pip install 'kbsearch[{extra}]'; in a checkout: pip install '.[{extra}]'"


SHOWN_CHARS = 40  # of a value a caller sent, quoted in an error message


def shown_value(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for an error message that quotes input: a text (or a repr) over
    ``limit`` characters cut to its first ``limit``, an ellipsis and its length
    (``'aaaa…' (30,000 characters)``), so that a 30,000-character value is not echoed whole
    (by the API, the MCP tools or the CLI)."""
    whole = repr(value)
    text = value if isinstance(value, str) else whole
    if len(text) <= limit:
        return whole
    cut = repr(text[:limit])
    head = f"{cut[:-1]}…{cut[-1]}" if isinstance(value, str) else f"{text[:limit]}…"
    return f"{head} ({len(text):,} characters)"


SHOWN_NAMES = 5  # of the names a caller sent (unknown parameters), listed in an error message


def shown_names(names: Sequence[str], limit: int = SHOWN_NAMES) -> str:
    """Names a caller sent (query parameters, form fields) for an error message, comma-joined:
    each as sent when it is printable and at most :data:`SHOWN_CHARS` long, else as
    :func:`shown_value` shows it; the first ``limit``, then ``and N more``."""
    shown = [
        n if len(n) <= SHOWN_CHARS and n.isprintable() and n.strip() == n and n else shown_value(n)
        for n in names[:limit]
    ]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(shown) + more


# the extras of pyproject.toml's [project.optional-dependencies] (tests/errors_test.py checks)
EXTRAS = ("dev", "qdrant", "rank", "rerank", "serve", "st", "test")


class KbsearchError(Exception):
    """Base class of every error kbsearch raises on purpose."""


class QueryError(KbsearchError, ValueError):
    """The query cannot be searched: empty, only punctuation, or too long."""


class InvalidArgumentError(KbsearchError, ValueError):
    """An argument is out of range or malformed (k <= 0, a bad date, an unknown audience...)."""


class OptionConflictError(InvalidArgumentError):
    """Arguments that cannot go together, each valid alone: fusion settings for a route that
    is not fused, RRF's settings with a score fusion. The CLI treats it as a usage error."""


class UnknownLanguageError(InvalidArgumentError):
    """A language filter naming a language none of the passages the audience may see is in
    (``--lang de`` on an index without German); its message lists those it holds. The CLI
    treats it as a usage error."""


class NoVectorsError(InvalidArgumentError):
    """The index has no vectors (built with ``--embedder none``) and the request needs them.
    Its message names no command-line option (an HTTP or MCP caller reads it); ``cli``, when
    given, is the message for the command line, which says how to re-embed the index."""

    def __init__(self, message: str, cli: str = "") -> None:
        super().__init__(message)
        self.cli = cli or message


class KnowledgeBaseNotFoundError(KbsearchError, FileNotFoundError):
    """The database file does not exist; run `kbsearch index` first."""


class StorageError(KbsearchError):
    """The database file cannot be created, opened or written (a folder, no permission...)."""


class DatabaseLockedError(StorageError):
    """Another writer held the database longer than the busy timeout."""


class ReadOnlyIndexError(StorageError):
    """The database file is read-only: it can be searched, not written."""


class StorageFullError(StorageError):
    """The disk (or SQLite's page limit) is full; the last write was rolled back."""


class SettingsConflictError(StorageError):
    """Another run recorded different index settings (another embedder...) meanwhile."""


class OutdatedPassagesError(SettingsConflictError):
    """The index's passages were cut by an older rule than this version's; adding documents
    cut by the new rule would mix the two, so the index must be rebuilt (``--reembed``)."""


class IndexingInterrupted(KeyboardInterrupt):
    """Ctrl-C during indexing; ``report`` counts what was written before it (kept)."""

    def __init__(self, report: object) -> None:
        super().__init__("indexing interrupted")
        self.report = report


class SchemaError(KbsearchError):
    """The database was written by another schema version or is not a kbsearch index."""


class EmbedderMismatchError(KbsearchError):
    """The index was built with another embedder than the one asked for."""


class EmbedderUnavailableError(KbsearchError):
    """The embedder cannot be loaded (missing package, missing or corrupt model files)."""


class EmbeddingError(KbsearchError, ValueError):
    """An embedder returned vectors of the wrong shape or with non-finite values,
    or a text exceeds the embedder's token limit."""


class IngestError(KbsearchError):
    """A source file cannot be turned into passages (unreadable, corrupt, no text)."""


class LimitExceededError(IngestError):
    """A source file is over an ingest limit (its size, what it expands to, its pages, its
    passages, the time it takes: :mod:`kbsearch.ingest.limits`); it is refused whole and
    nothing of it is written. The message names the limit."""


class InventoryError(KbsearchError, ValueError):
    """The inventory CSV is malformed: missing columns, duplicate doc_id+version, bad dates."""


class PassageNotFoundError(KbsearchError, LookupError):
    """No passage with that id is visible to this audience (it may not exist)."""


class FusionError(KbsearchError, ValueError):
    """A ranked list handed to fusion has duplicate ids or non-finite scores."""


class EvaluationError(KbsearchError, ValueError):
    """A question set, qrels or run is malformed (duplicate ids in a run, unknown format...)."""


class ServerStartError(KbsearchError):
    """``kbsearch serve`` or ``mcp`` cannot start: the ``serve`` extra is not installed, or
    the address cannot be listened on (the port is in use, the host is not this machine's)."""


class BackendUnavailableError(KbsearchError):
    """A search backend cannot be reached or its package is not installed (Qdrant server
    down, ``qdrant-client`` / ``qdrant-edge-py`` missing, a collection of another shape)."""


class PartialWriteError(BackendUnavailableError):
    """A write reached the system of record but only part of it reached a mirror backend;
    the message says how far it got and that ``kbsearch sync`` repairs it."""


class ModelFormatError(KbsearchError, ValueError):
    """A shipped model file (e.g. the learned fusion's trees) is malformed or unsupported."""


class RerankerUnavailableError(KbsearchError):
    """A reranker cannot be loaded: its package is not installed (``kbsearch[rerank]``), its
    model folder is missing, or the folder holds no model it can read."""


class DocumentNotFoundError(KbsearchError, LookupError):
    """No document with that id is visible to this audience (it may not exist)."""


class UnsupportedFormatError(KbsearchError):
    """The uploaded file's format is not one kbsearch indexes as a single document."""


class UploadTooLargeError(KbsearchError):
    """The uploaded file is larger than the server accepts."""


# Internal signals, caught inside kbsearch (never raised to a caller as they are): not
# KbsearchError, so that no "except KbsearchError" turns them into a user's error.


class SearchTimeout(Exception):
    """A read ran over the configured time limit."""


class StaleSnapshot(Exception):
    """The file moved to another generation while a snapshot part was being built."""


class _IndexChanged(Exception):
    """A ranked passage was removed by another writer before its row was read."""
