"""The reranking stage and its rerankers."""
