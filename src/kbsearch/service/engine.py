"""The knowledge base a server shares between its threads.

Reads run on a fixed pool of worker threads sharing one :class:`KnowledgeBase` (one SQLite
connection per thread, one snapshot per index generation, one loaded embedder); every read
runs inside one SQLite read transaction, so all it sees (ranking, passages, documents) belongs
to one index generation, whatever a writer commits meanwhile. Writes run one at a time on
their own thread. A read that takes longer than the time limit is answered with
:class:`SearchTimeout` (the thread finishes it in the background).

With the embedded SQLite backend, reads are served from the newest built snapshot and its
pinned reader while a background thread builds the next generation
(:mod:`kbsearch.backends.background`): a read never waits for a rebuild of this process's
write; one that finds another process's newer write in the file (``kbsearch serve
--processes N``) waits for its build, so it reads that write. A write returns once
its generation serves (so the writer reads what it wrote); a write that may hide passages
from the public withdraws the old snapshot first. A read given a key (the API's searches) is
remembered for the generation that served it (:class:`GenerationResults`): the same request
on the same generation is answered with the same result, without searching again (a public
one also after staff-only writes, which change nothing it reads).
"""

from __future__ import annotations

import asyncio
import ctypes
import sqlite3
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from ..backends.background import BackgroundSnapshots
from ..backends.sqlite import SqliteBackend
from ..embedders import Embedder, default_token_count
from ..errors import SearchTimeout, StorageError
from ..filters import AUDIENCES
from ..ingest import preload
from ..ingest.limits import IngestLimits
from ..knowledge_base import KnowledgeBase, open_kb
from ..store.failures import storage_error
from .present import Catalogue

T = TypeVar("T")


def _libc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` (``None`` elsewhere)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    return trim


_MALLOC_TRIM = _libc_trim()


def release_free_memory() -> None:
    """Hand the heap pages freed since the last call back to the system (glibc's
    ``malloc_trim(0)``; nothing elsewhere). A write parses, splits and embeds a whole document
    (a 2,000-section upload: ~120 MB of temporary buffers); glibc keeps such freed memory in
    its arenas for the process's life, so without this the server's resident size only grew
    with each large write (the demo served at 273 MB, then 392 MB after one such upload and
    its deletion)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


View = tuple[str, int]  # what a kept result was read in: GenerationResults


class GenerationResults:
    """The results of keyed reads, the ``size`` last used, each kept for the *view* it was
    read in: ``("all", generation)``, or ``("public", public generation)`` for a read of
    the public audience's (:meth:`kbsearch.store.Database.public_generation`: a staff-only
    write leaves it, so a public read's kept result outlives it, and the public cannot time
    when one happened). A read is a function of its key and the view it reads, so a kept
    result is the one the read would give again. A read of a generation older than the
    newest one read is neither answered nor kept (a snapshot that no longer serves, or a
    file set back by a restore). Shared by the read threads; a result is never copied, so
    it must not be changed. A demo search's result holds ~16 KiB (tracemalloc): 4 MiB for
    the default 256."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._newest: int | None = None
        self._results: OrderedDict[tuple[View, Hashable], object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, generation: int, view: View, key: Hashable) -> tuple[bool, object]:
        """``(True, result)`` when ``key`` was read in ``view``, else ``(False, None)``."""
        with self._lock:
            if self._newest is not None and generation < self._newest:
                return False, None
            if (view, key) not in self._results:
                return False, None
            self._results.move_to_end((view, key))
            return True, self._results[(view, key)]

    def put(self, generation: int, view: View, key: Hashable, result: object) -> None:
        """Keep ``result`` of ``key`` read in ``view`` at ``generation``."""
        with self._lock:
            if self._newest is not None and generation < self._newest:
                return  # a read of a generation that no longer serves
            if self._newest is None or generation > self._newest:
                self._newest = generation
                for kept in [k for k in self._results if k[0] != view and k[0][0] == "all"]:
                    del self._results[kept]  # every audience's but the public's is stale
            self._results[(view, key)] = result
            self._results.move_to_end((view, key))
            while len(self._results) > self.size:
                self._results.popitem(last=False)


class Engine:
    """One knowledge base file served to many threads.

    One :class:`KnowledgeBase` serves every thread: its store opens one SQLite connection
    per thread and its searches share one read-only snapshot per index generation.
    ``workers`` read threads; ``time_limit`` seconds per read; ``ingest_limits``: what every
    write applies (:mod:`kbsearch.ingest.limits`: among them ``max_seconds``, so one upload
    holds the single write thread about that long at most). Opening checks the file and
    loads the embedder once (so a broken index fails at start, not on the first request).
    ``background``: snapshots are built on a background thread, and the write thread loads
    the parsers first (:meth:`_prepare_writes`), so the first upload costs what later
    ones do (at 1M passages, 1.6 s against at most 0.7 s for the next 58 at load 8).

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
        background: bool = True,
        ingest_limits: IngestLimits | None = None,
    ) -> None:
        self.db = Path(db)
        self.damage: StorageError | None = None  # the first damaged page a read met
        self.time_limit = time_limit
        self.workers = workers
        self.kb = open_kb(self.db, embedder=embedder, ingest_limits=ingest_limits)
        self.snapshots: BackgroundSnapshots | None = None
        try:
            self.embedder = self.kb.embedder()  # loaded once, shared by every thread
            if background and isinstance(self.kb.backend, SqliteBackend):
                self.snapshots = BackgroundSnapshots(self.kb.backend, self._warm, time_limit)
                self.snapshots.start()
        except BaseException:
            self.kb.close()
            raise
        self.results = GenerationResults()
        self._reads = ThreadPoolExecutor(workers, thread_name_prefix="kbsearch-read")
        self._writes = ThreadPoolExecutor(1, thread_name_prefix="kbsearch-write")
        if background:  # the parsers load on the write thread, ahead of the first upload
            self._writes.submit(self._prepare_writes)

    def _prepare_writes(self) -> None:
        """What the first write would load (on the write thread): every format's parser, the
        language identifier and, for an index without an embedder, the default embedder's
        token counter that cuts its passages."""
        preload()
        if self.embedder is None:
            default_token_count()

    def _warm(self) -> None:
        """Build every part a search reads (on the snapshot builder's thread), score fusion's
        too (title counts, heading vectors) and the hits' document labels, so no search
        builds one inline."""
        backend = self.kb.backend
        assert isinstance(backend, SqliteBackend)
        for audience in AUDIENCES:
            backend.lexical_index(audience)
            backend.languages(audience)
            backend.title_counts(audience)
        if self.embedder is not None:
            self.kb.abstention.prepare()
            backend.heading_index(self.embedder.dim)
        Catalogue.of(self.kb)

    def read(
        self,
        fn: Callable[[KnowledgeBase], T],
        key: Callable[[], Hashable] | None = None,
        audience: str | None = None,
    ) -> T:
        """``fn(kb)`` inside one read transaction: everything it reads (ranking, passages,
        documents) comes from one generation of the file (the served snapshot's).

        ``key()``: all that ``fn``'s result depends on besides the generation (its
        arguments, the day of a search without ``as_of``); the result of a read from the
        served snapshot is then kept in :attr:`results`, and a read of the same key on the
        same generation returns it, ``fn`` not called. Asked before and after ``fn``: a
        result whose key changed meanwhile (the day, at midnight) is not kept. An error is
        never kept. ``audience``: ``"public"`` when ``fn`` reads only what the public
        audience sees; its result is then kept across staff-only writes too
        (:class:`GenerationResults`).

        Raises:
            StorageError: the file cannot be read (a damaged page: :attr:`damage` keeps the
                first, for :meth:`check`), for a SQLite error about the file that the
                snapshot's reader let through untranslated.
        """
        with self._file_errors():
            if self.snapshots is None:
                with self.kb.store.database.read_transaction():
                    return fn(self.kb)
            with (
                self.snapshots.reading() as generation,
                self.kb.store.database.read_transaction(),
            ):
                if key is None or generation is None:
                    return fn(self.kb)
                database = self.kb.store.database
                view = ("public", database.public_generation()) if audience == "public" else None
                view = view or ("all", generation)
                asked = key()
                kept, found = self.results.get(generation, view, asked)
                if kept:
                    return found  # type: ignore[return-value]
                result = fn(self.kb)
                if key() == asked:
                    self.results.put(generation, view, asked, result)
                return result

    @contextmanager
    def _file_errors(self) -> Iterator[None]:
        """A SQLite error about the file as a :class:`StorageError`; a damaged page, whether
        the store or this translated it, kept in :attr:`damage`."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise self._storage_error(exc) from exc
        except StorageError as exc:
            if isinstance(exc.__cause__, sqlite3.DatabaseError):
                self._storage_error(exc.__cause__)
            raise

    def _storage_error(self, exc: sqlite3.DatabaseError) -> StorageError:
        """``exc`` as the store names it (:func:`kbsearch.store.failures.storage_error`); a
        damaged page kept in :attr:`damage`."""
        error = storage_error(self.db, exc, 0) or StorageError(f"cannot read {self.db}: {exc}")
        name = getattr(exc, "sqlite_errorname", "")
        if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) and self.damage is None:
            self.damage = error
        return error

    def check(self) -> int:
        """The health probe: the generation, read from the file, and every table's first
        pages readable, on a new connection (:meth:`~kbsearch.store.Database.check_tables`:
        the served snapshot and the threads' connections hold what they read in memory); and
        no read met a damaged page since the start.

        Raises:
            StorageError: the file cannot be read, or a read met a damaged page.
        """
        if self.damage is not None:
            raise self.damage
        with self._file_errors():
            return self.kb.store.database.check_tables()

    def write(
        self, fn: Callable[[KnowledgeBase], T], hides: Callable[[KnowledgeBase], bool] | None = None
    ) -> T:
        """``fn(kb)`` (call from the write thread only: one writer at a time); returns once
        the new generation serves (or after ``time_limit`` seconds of building it).

        ``hides(kb)``, asked first: whether the write may hide passages the public sees now;
        then the old snapshot stops serving before the write (module docstring).
        """
        try:
            with self._file_errors():
                if self.snapshots is None:
                    return fn(self.kb)
                with self.snapshots.writing():
                    if hides is not None and hides(self.kb):
                        with self.snapshots.withdrawn():
                            result = fn(self.kb)
                    else:
                        result = fn(self.kb)
                    generation = self.kb.store.database.generation()
                    self.snapshots.wait_for(generation, self.time_limit)
                return result
        finally:
            release_free_memory()

    async def run_read(
        self,
        fn: Callable[[KnowledgeBase], T],
        key: Callable[[], Hashable] | None = None,
        audience: str | None = None,
    ) -> T:
        """Run :meth:`read` on a worker thread (``key``, ``audience``: as :meth:`read`'s).

        Raises:
            SearchTimeout: it took longer than ``time_limit`` seconds.
        """
        future = asyncio.get_running_loop().run_in_executor(
            self._reads, self.read, fn, key, audience
        )
        try:
            return await asyncio.wait_for(future, self.time_limit)
        except TimeoutError:
            raise SearchTimeout(f"the search took longer than {self.time_limit:g} s") from None

    async def run_check(self) -> int:
        """Run :meth:`check` on a worker thread (within the time limit, as a read)."""
        future = asyncio.get_running_loop().run_in_executor(self._reads, self.check)
        try:
            return await asyncio.wait_for(future, self.time_limit)
        except TimeoutError:
            message = f"the health check took longer than {self.time_limit:g} s"
            raise SearchTimeout(message) from None

    async def run_write(
        self, fn: Callable[[KnowledgeBase], T], hides: Callable[[KnowledgeBase], bool] | None = None
    ) -> T:
        """Run :meth:`write` on the single write thread (writes queue, one at a time)."""
        return await asyncio.get_running_loop().run_in_executor(self._writes, self.write, fn, hides)

    def close(self) -> None:
        """Stop the threads, then close every connection."""
        self._reads.shutdown(wait=True)
        self._writes.shutdown(wait=True)
        if self.snapshots is not None:
            self.snapshots.close()
        self.kb.close()
