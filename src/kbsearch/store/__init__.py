"""The SQLite store of one knowledge base file: the only code that writes SQL.

One file in WAL mode holds documents, passages, the FTS5 indexes, the passage vectors, an
embedding cache and a ``meta`` table with the schema version, a generation counter and the
settings the index was built with. The package is split by job:

- :mod:`.schema`: the file, one connection per thread, transactions, meta, settings;
- :mod:`.settings`: :class:`IndexSettings`, the frozen record of the settings;
- :mod:`.documents`: writing a document version atomically, reading passages;
- :mod:`.columns`: the passage filter columns and their SQL condition;
- :mod:`.fts`: FTS5 search, statistics and postings;
- :mod:`.vectors`: passage vectors and the embedding cache;
- :mod:`.pinning`: pinned readers, which keep seeing one state while others write;
- :mod:`.staging`: re-embedding into a copy that replaces the index only when complete;
- :mod:`.upload_files`: the files uploaded beside the index, kept in step with it through a
  crash or a full disk (a journal per change, settled by what the index holds).
"""

from __future__ import annotations

from .columns import PassageColumns
from .documents import DocumentStore, PassageRow, StoredDocument
from .fts import FTS_TABLES, FtsPostings, FtsStore, fts_table
from .pinning import PinnedReads
from .schema import FTS_TOKENIZE, SCHEMA_VERSION
from .settings import NO_EMBEDDER, IndexSettings
from .vectors import VectorStore, VectorTable


class Store(DocumentStore, FtsStore, VectorStore, PinnedReads):
    """Owns the SQLite connections of one knowledge base file (one per thread).

    Raises:
        KnowledgeBaseNotFoundError: the file is missing and ``create`` is false.
        StorageError: the path is a folder or its folder does not exist.
        SchemaError: the file is not a kbsearch index of this schema version.
    """


__all__ = [
    "FTS_TABLES",
    "FTS_TOKENIZE",
    "NO_EMBEDDER",
    "SCHEMA_VERSION",
    "FtsPostings",
    "IndexSettings",
    "PassageColumns",
    "PassageRow",
    "Store",
    "StoredDocument",
    "VectorTable",
    "fts_table",
]
