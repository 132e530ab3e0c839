"""The knowledge base a server shares between its threads.

Reads run on a fixed pool of worker threads sharing one :class:`KnowledgeBase` (one SQLite
connection per thread, one snapshot per index generation, one loaded embedder); every read
runs inside one SQLite read transaction, so all it sees (ranking, passages, documents) belongs
to one index generation, whatever a writer commits meanwhile. Writes run one at a time on
their own thread. A read that takes longer than the time limit is answered with
:class:`SearchTimeout` (the thread finishes it in the background).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from ..embedders import Embedder
from ..knowledge_base import KnowledgeBase, open_kb

T = TypeVar("T")


class SearchTimeout(Exception):
    """A read ran over the configured time limit."""


class Engine:
    """One knowledge base file served to many threads.

    One :class:`KnowledgeBase` serves every thread: its store opens one SQLite connection
    per thread and its searches share one read-only snapshot per index generation.
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
        self.kb = open_kb(self.db, embedder=embedder)
        try:
            self.embedder = self.kb.embedder()  # loaded once, shared by every thread
        except BaseException:
            self.kb.close()
            raise
        self._reads = ThreadPoolExecutor(workers, thread_name_prefix="kbsearch-read")
        self._writes = ThreadPoolExecutor(1, thread_name_prefix="kbsearch-write")

    def read(self, fn: Callable[[KnowledgeBase], T]) -> T:
        """``fn(kb)`` inside one read transaction of this thread's connection: everything it
        reads (ranking, passages, documents) comes from one generation of the file."""
        with self.kb.store.read_transaction():
            return fn(self.kb)

    def write(self, fn: Callable[[KnowledgeBase], T]) -> T:
        """``fn(kb)`` (call from the write thread only: one writer at a time)."""
        return fn(self.kb)

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

    def close(self) -> None:
        """Stop the threads, then close every connection."""
        self._reads.shutdown(wait=True)
        self._writes.shutdown(wait=True)
        self.kb.close()
