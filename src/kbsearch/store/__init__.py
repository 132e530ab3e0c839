"""The SQLite store of one knowledge base file: the only code that writes SQL.

One file in WAL mode holds documents, passages, the FTS5 indexes, the passage vectors, an
embedding cache and a ``meta`` table with the schema version, a generation counter and the
settings the index was built with. The package is split by job:

- :mod:`.database`: the file, one connection per thread, transactions, meta, settings,
  tracing, backup (``store.database``); :mod:`.schema`: its tables;
- :mod:`.settings`: :class:`IndexSettings`, the frozen record of the settings;
- :mod:`.documents`: writing a document version atomically, reading documents
  (``store.documents``);
- :mod:`.passages`: reading passages (``store.passages``);
- :mod:`.columns`: the passage filter columns and their SQL condition;
- :mod:`.counts`: the per-audience counts kept by every write (``store.counts``);
- :mod:`.moments`: the per-audience vector moments kept by every write (``store.moments``);
- :mod:`.fts`: FTS5 search, statistics and postings (``store.fts``);
- :mod:`.vectors`: passage vectors and the embedding cache (``store.vectors``);
- :mod:`.point_ids`: the passage row of each Qdrant point id (``store.point_ids``);
- :mod:`.pinning`: pinned readers, which keep seeing one state while others write
  (``store.pins``);
- :mod:`.staging`: re-embedding into a copy that replaces the index only when complete;
- :mod:`.upload_files`: the files uploaded beside the index, kept in step with it through a
  crash or a full disk (a journal per change, settled by what the index holds).
"""

from __future__ import annotations

from pathlib import Path

from .columns import PassageColumns
from .counts import Counts
from .database import Database, Tracer
from .documents import Documents, StoredDocument
from .fts import FTS_TABLES, Fts, FtsPostings, fts_table
from .moments import Moments, VectorMoments
from .passages import PassageRow, Passages
from .pinning import PinnedReads
from .point_ids import PointIds
from .schema import FTS_TOKENIZE, SCHEMA_VERSION
from .settings import NO_EMBEDDER, IndexSettings
from .vectors import Vectors, VectorTable


class Store:
    """One knowledge base file: its :class:`Database` (the SQLite connections, one per
    thread; transactions, meta, settings) and the table groups that each hold it:
    ``documents``, ``passages``, ``counts``, ``moments``, ``fts``, ``vectors``, ``point_ids``
    and ``pins``.

    ``tracer``: see :class:`Database`.

    Raises:
        KnowledgeBaseNotFoundError: the file is missing and ``create`` is false.
        StorageError: the path is a folder or its folder does not exist.
        SchemaError: the file is not a kbsearch index of this schema version.
    """

    def __init__(
        self, path: str | Path, *, create: bool = False, tracer: Tracer | None = None
    ) -> None:
        self.database = Database(path, create=create, tracer=tracer)
        self.counts = Counts(self.database)
        self.moments = Moments(self.database)
        self.documents = Documents(self.database, self.counts)
        self.passages = Passages(self.database, self.counts)
        self.fts = Fts(self.database)
        self.vectors = Vectors(self.database)
        self.point_ids = PointIds(self.database)
        self.pins = PinnedReads(self.database)

    @property
    def path(self) -> Path:
        """The database file."""
        return self.database.path

    def close(self) -> None:
        """Close every connection (:meth:`Database.close`)."""
        self.database.close()


__all__ = [
    "FTS_TABLES",
    "FTS_TOKENIZE",
    "NO_EMBEDDER",
    "SCHEMA_VERSION",
    "Counts",
    "Database",
    "Documents",
    "Fts",
    "FtsPostings",
    "IndexSettings",
    "Moments",
    "PassageColumns",
    "Passages",
    "PinnedReads",
    "PassageRow",
    "Store",
    "StoredDocument",
    "VectorMoments",
    "VectorTable",
    "Vectors",
    "fts_table",
]
