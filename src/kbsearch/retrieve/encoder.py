"""Query vectors for the dense route: the index's embedder, a per-process cache, a lock.

Embedders are not assumed to be thread-safe, so encoding runs under a lock, unless the
embedder says ``thread_safe = True`` (the ONNX Runtime one: ``InferenceSession.run`` may be
called from several threads, so two queries encode on two cores at once). The cache holds the
last 1,024 query vectors, least recently used dropped first, shared by every thread: repeated
queries (a help centre's traffic repeats) skip the encoder (~11 ms of CPU per 20-token query
for e5-int8, ``InferenceSession.run`` alone, on the shared 2 cores: docs/benchmarks.md,
"Query encoding").
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import numpy as np

from ..embedders import Embedder
from ..errors import NoVectorsError, QueryError
from ..text.analysis import QUERY_CACHE, clean_text, query_words

CACHE_SIZE = QUERY_CACHE  # query vectors kept (1.5 KB each at 384 dimensions)


class QueryEncoder:
    """Encodes queries with ``embedder()`` (``None``: the index has no vectors).

    ``indexed()`` tells whether the knowledge base was ever indexed (an empty one finds
    nothing in any route); ``configured()``, whether it has an embedder, without loading it.
    """

    def __init__(
        self,
        embedder: Callable[[], Embedder | None],
        indexed: Callable[[], bool],
        path: Path,
        configured: Callable[[], bool] | None = None,
    ) -> None:
        self.embedder = embedder
        self.indexed = indexed
        self.path = path
        self._configured = configured
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._lock = threading.Lock()

    def available(self) -> bool:
        """Whether queries can be encoded: ``configured()`` when given (it tells without
        loading the model), else whether ``embedder()`` gives one."""
        if self._configured is not None:
            return self._configured()
        return self.embedder() is not None

    def vector(self, query: str) -> np.ndarray:
        """The query's vector, shape ``(dim,)``, L2-normalised (cached per process), of the
        query cleaned as documents are (:func:`kbsearch.text.analysis.clean_text`).

        Raises:
            QueryError: the query is empty or over the embedder's token limit.
            NoVectorsError: the index has no vectors.
        """
        embedder = self.embedder()
        if embedder is None:
            raise NoVectorsError(  # no file path, no option: an API caller may read it
                "this index has no vectors: search route=lexical",
                cli="this index has no vectors (built with --embedder none): search --route"
                " lexical, or re-embed it: kbsearch index PATH... --db DB --reembed (the"
                " default embedder; --embedder SPEC for another)",
            )
        query_words(query)
        query = clean_text(query)
        key = f"{embedder.name}\x00{query}"
        with self._cache_lock:
            found = self._cache.get(key)
            if found is not None:
                self._cache.move_to_end(key)
                return found
        guard: AbstractContextManager[object] = (
            nullcontext() if getattr(embedder, "thread_safe", False) else self._lock
        )
        with guard:
            count = embedder.token_count(query, "query")
            if count > embedder.max_tokens:
                raise QueryError(
                    f"query of {count} tokens exceeds the embedder's limit of "
                    f"{embedder.max_tokens} tokens"
                )
            found = embedder.encode_queries([query])[0]
        with self._cache_lock:
            self._cache[key] = found
            self._cache.move_to_end(key)
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return found

    def clear(self) -> None:
        """Forget cached query vectors (so a timed search includes query encoding)."""
        with self._cache_lock:
            self._cache.clear()
