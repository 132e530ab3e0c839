"""Retrieval: one query -> one ranked candidate list per route (the route registry, the query
encoder, dense and lexical search, cross-language rules) over the Backend protocol."""
