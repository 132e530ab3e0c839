"""Indexing: parsed documents -> passages -> the store (the indexer and its writer, the run
and its settings, heading vectors, the embedder checked against the index)."""
