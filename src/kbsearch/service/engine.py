"""The knowledge base a server shares between its threads.

Reads run on a fixed pool of worker threads, each with its own :class:`KnowledgeBase` (its own
SQLite connection) sharing one loaded embedder; every read runs inside one SQLite read
transaction, so all it sees (ranking, passages, documents) belongs to one index generation,
whatever a writer commits meanwhile. Writes run one at a time on their own thread and
connection. A read that takes longer than the time limit is answered with
:class:`SearchTimeout` (the thread finishes it in the background).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from ..embedders import Embedder
from ..knowledge_base import KnowledgeBase, open_kb

T = TypeVar("T")


class SearchTimeout(Exception):
    """A read ran over the configured time limit."""


class Engine:
    """One knowledge base file served to many threads.

    ``workers`` read threads; ``time_limit`` seconds per read. Opening checks the file and
    loads the embedder once (so a broken index fails at start, not on the first request).

    Raises:
        KnowledgeBaseNotFoundError, SchemaError, EmbedderMismatchError,
        EmbedderUnavailableError: from :func:`kbsearch.open_kb` and the embedder.
    """

    def __init__(
        self,
        db: str | Path,
        *,
        embedder: Embedder | str | None = None,
        workers: int = 4,
        time_limit: float = 5.0,
    ) -> None:
        self.db = Path(db)
        self.time_limit = time_limit
        self.workers = workers
        self._local = threading.local()
        self._query_vectors: dict[str, Any] = {}
        self._reads = ThreadPoolExecutor(workers, thread_name_prefix="kbsearch-read")
        # SQLite connections belong to the thread that opened them: the writer's is opened
        # (and closed) on the write thread
        self._writes = ThreadPoolExecutor(1, thread_name_prefix="kbsearch-write")
        try:
            self._writer_kb = self._writes.submit(open_kb, self.db, embedder=embedder).result()
            # loaded once, shared by every thread
            self.embedder = self._writes.submit(self._writer_kb.embedder).result()
        except BaseException:
            self._writes.shutdown()
            self._reads.shutdown()
            raise

    # -- threads ---------------------------------------------------------------------------

    def _reader(self) -> KnowledgeBase:
        kb: KnowledgeBase | None = getattr(self._local, "kb", None)
        if kb is None:
            kb = open_kb(self.db, embedder=self.embedder)
            # one query-vector cache for every thread (it is keyed by embedder and query text,
            # and a dict's get and set are atomic), so a query is encoded once per process,
            # not once per thread
            if isinstance(getattr(kb, "_query_cache", None), dict):
                kb._query_cache = self._query_vectors
            self._local.kb = kb
        return kb

    def read(self, fn: Callable[[KnowledgeBase], T]) -> T:
        """``fn(kb)`` on this thread's knowledge base, inside one read transaction."""
        kb = self._reader()
        connection = kb.store.connection
        connection.execute("BEGIN")
        try:
            return fn(kb)
        finally:
            connection.execute("COMMIT")

    def write(self, fn: Callable[[KnowledgeBase], T]) -> T:
        """``fn(kb)`` on the writer's knowledge base (call from the write thread only)."""
        return fn(self._writer_kb)

    async def run_read(self, fn: Callable[[KnowledgeBase], T]) -> T:
        """Run :meth:`read` on a worker thread.

        Raises:
            SearchTimeout: it took longer than ``time_limit`` seconds.
        """
        future = asyncio.get_running_loop().run_in_executor(self._reads, self.read, fn)
        try:
            return await asyncio.wait_for(future, self.time_limit)
        except TimeoutError:
            raise SearchTimeout(f"the search took longer than {self.time_limit:g} s") from None

    async def run_write(self, fn: Callable[[KnowledgeBase], T]) -> T:
        """Run :meth:`write` on the single write thread (writes queue, one at a time)."""
        return await asyncio.get_running_loop().run_in_executor(self._writes, self.write, fn)

    def _close_reader(self, barrier: threading.Barrier) -> None:
        kb: KnowledgeBase | None = getattr(self._local, "kb", None)
        if kb is not None:
            kb.close()
            self._local.kb = None
        barrier.wait(timeout=10)  # holds this thread so each worker gets one closing task

    def close(self) -> None:
        """Close every connection (each on its own thread) and stop the threads."""
        barrier = threading.Barrier(self.workers)
        closing = [self._reads.submit(self._close_reader, barrier) for _ in range(self.workers)]
        for task in closing:
            task.exception()
        self._reads.shutdown(wait=True)
        self._writes.submit(self._writer_kb.close).result()
        self._writes.shutdown(wait=True)
