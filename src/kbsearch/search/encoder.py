"""Query vectors for the dense route: the index's embedder, a per-process cache, a lock.

Embedders are not assumed to be thread-safe, so encoding runs under a lock; the cache is a
plain dict replaced (never cleared in place) when it grows past 1,024 queries.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..analysis import query_words
from ..embedders import Embedder
from ..errors import InvalidArgumentError, QueryError

CACHE_SIZE = 1024


class QueryEncoder:
    """Encodes queries with ``embedder()`` (``None``: the index has no vectors).

    ``indexed()`` tells whether the knowledge base was ever indexed (an empty one finds
    nothing in any route).
    """

    def __init__(
        self, embedder: Callable[[], Embedder | None], indexed: Callable[[], bool], path: Path
    ) -> None:
        self.embedder = embedder
        self.indexed = indexed
        self.path = path
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def available(self) -> bool:
        return self.embedder() is not None

    def vector(self, query: str) -> np.ndarray:
        """The query's vector, shape ``(dim,)``, L2-normalised (cached per process).

        Raises:
            QueryError: the query is empty or over the embedder's token limit.
            InvalidArgumentError: the index has no vectors.
        """
        embedder = self.embedder()
        if embedder is None:
            raise InvalidArgumentError(
                f"{self.path} has no vectors (built with --embedder none): search it with"
                " --route lexical, or re-embed it with --reembed --embedder SPEC"
            )
        query_words(query)
        key = f"{embedder.name}\x00{query}"
        found = self._cache.get(key)
        if found is None:
            with self._lock:
                count = embedder.token_count(query, "query")
                if count > embedder.max_tokens:
                    raise QueryError(
                        f"query of {count} tokens exceeds the embedder's limit of "
                        f"{embedder.max_tokens} tokens"
                    )
                found = embedder.encode_queries([query])[0]
            if len(self._cache) >= CACHE_SIZE:
                self._cache = {}
            self._cache[key] = found
        return found

    def clear(self) -> None:
        """Forget cached query vectors (so a timed search includes query encoding)."""
        self._cache = {}
