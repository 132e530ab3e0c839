"""The exceptions kbsearch raises. The CLI turns each into one line and a non-zero exit."""

from __future__ import annotations


class KbsearchError(Exception):
    """Base class of every error kbsearch raises on purpose."""


class QueryError(KbsearchError, ValueError):
    """The query cannot be searched: empty, only punctuation, or too long."""


class InvalidArgumentError(KbsearchError, ValueError):
    """An argument is out of range or malformed (k <= 0, a bad date, an unknown audience...)."""


class OptionConflictError(InvalidArgumentError):
    """Arguments that cannot go together, each valid alone: fusion settings for a route that
    is not fused, RRF's settings with a score fusion. The CLI treats it as a usage error."""


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
