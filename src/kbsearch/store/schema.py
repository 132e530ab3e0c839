"""The tables of a knowledge base file: the schema's SQL and its version (a file of another
version is refused by :class:`kbsearch.store.database.Database`)."""

from __future__ import annotations

# the counts kept by every write (:mod:`kbsearch.store.counts`)
COUNTS_TABLE = "collection_counts"
COUNTS_SQL = (
    f"CREATE TABLE IF NOT EXISTS {COUNTS_TABLE} (audience TEXT NOT NULL, kind TEXT NOT NULL,"
    " key TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (audience, kind, key)) WITHOUT ROWID"
)

# the vector moments kept by every write, per audience (:mod:`kbsearch.store.moments`)
MOMENTS_TABLE = "vector_moments"
MOMENTS_SQL = (
    f"CREATE TABLE IF NOT EXISTS {MOMENTS_TABLE} (audience TEXT PRIMARY KEY,"
    " dim INTEGER NOT NULL, n INTEGER NOT NULL, total BLOB NOT NULL, second BLOB NOT NULL)"
)

NEXT_ROW_META = "next_row"  # meta key: the lowest passage row id never used in this file
SCHEMA_VERSION = 2  # 2: public_fts, the public passages' own FTS5 index
FTS_TOKENIZE = "unicode61 remove_diacritics 2"

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    doc_id TEXT NOT NULL, version TEXT NOT NULL, title TEXT NOT NULL,
    language TEXT NOT NULL, access TEXT NOT NULL,
    effective_from TEXT, effective_to TEXT,
    owner TEXT NOT NULL DEFAULT '', doc_type TEXT NOT NULL DEFAULT '',
    format TEXT NOT NULL DEFAULT '', source TEXT NOT NULL DEFAULT '',
    content_hash TEXT NOT NULL,
    UNIQUE (doc_id, version)
);
CREATE TABLE IF NOT EXISTS passages (
    id INTEGER PRIMARY KEY,
    passage_id TEXT NOT NULL UNIQUE,
    document INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    doc_id TEXT NOT NULL, version TEXT NOT NULL, section TEXT NOT NULL,
    kind TEXT NOT NULL, text TEXT NOT NULL, ordinal INTEGER NOT NULL,
    page INTEGER, char_start INTEGER, char_end INTEGER, token_count INTEGER NOT NULL,
    -- filter columns copied from the document so a filtered search needs no join
    access TEXT NOT NULL, language TEXT NOT NULL,
    effective_from TEXT, effective_to TEXT
);
CREATE INDEX IF NOT EXISTS passages_document ON passages(document);
-- an indexing run reads the stored versions of the files it read, not every document
CREATE INDEX IF NOT EXISTS documents_source ON documents(source);
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(body, tokenize='{FTS_TOKENIZE}');
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts_vocab USING fts5vocab(passages_fts, 'row');
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts_instance
    USING fts5vocab(passages_fts, 'instance');
-- the public passages again, so a public search's BM25 statistics (N, avgdl, df) count only
-- what the public may see: staff-only text cannot move a public score or explanation
CREATE VIRTUAL TABLE IF NOT EXISTS public_fts USING fts5(body, tokenize='{FTS_TOKENIZE}');
CREATE VIRTUAL TABLE IF NOT EXISTS public_fts_vocab USING fts5vocab(public_fts, 'row');
CREATE VIRTUAL TABLE IF NOT EXISTS public_fts_instance USING fts5vocab(public_fts, 'instance');
CREATE TABLE IF NOT EXISTS vectors (
    id INTEGER PRIMARY KEY REFERENCES passages(id) ON DELETE CASCADE,
    vector BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS embedding_cache (
    embedder TEXT NOT NULL, role TEXT NOT NULL, text_hash TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (embedder, role, text_hash)
) WITHOUT ROWID;
-- per audience, what a snapshot and the page read instead of every passage (store/counts.py)
{COUNTS_SQL};
-- per audience, the vectors' count, sum and sum of outer products (store/moments.py)
{MOMENTS_SQL};
"""
