"""Serving searches from a complete snapshot while the next one is built in the background.

Without it, the first search after a write builds the new generation's in-memory parts (the
impact index, the dense matrix) inline: 0.6 s on SciFact, about 4 s at 100k passages, for
that search and every one queued behind the part's lock. A server instead keeps answering from
the newest *served* snapshot, a complete older generation:

    served: Snapshot(G) + a pinned reader at G   <- every read: ranking AND rows from G
    write commits G+1 -> refresh() -> builder thread: pinned reader at G+1, build the parts
                                    -> publish: served = G+1 (one assignment under a lock)
                                    -> G's reader closes when its last search ends

A search reads the served snapshot's parts *and* reads its rows, documents and counts through
the snapshot's pinned reader (:mod:`kbsearch.store.pinning`), so every response is one
generation, old or new, never a mix. Nothing a search does waits for a build.

Privacy: a write that may take passages away from the public (a public document replaced by
a staff one) runs inside :meth:`BackgroundSnapshots.withdrawn`: the old snapshot stops serving
*before* the write commits, and until the new generation is published searches read the
current file (building inline, as without this module). So a passage that is staff in the
file is never served to the public from an older snapshot. A write from another process is
not known in advance.

Another process's write (``kbsearch serve --processes N``, ``kbsearch index`` on a served
file): a read that finds a newer generation in the file than the served one, while this
process is not writing, waits for the builder to publish it (at most ``follow`` seconds; then
it reads the current file, as while withdrawn). So a write answered by one process is seen by
every read that starts after it on any other, a staff version that replaced a public one
included, at the cost of one build for the reads that meet it. A read that starts while this
process writes does not wait: that write has not been answered yet, and its generation
serves before it is.
"""

from __future__ import annotations

import math
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..store.failures import storage_error
from .sqlite import Snapshot, SqliteBackend


@dataclass(eq=False)
class Served:
    """A built snapshot, its pinned reader, and the searches using it now."""

    snapshot: Snapshot
    reader: sqlite3.Connection
    users: int = 0
    retired: bool = False

    @property
    def generation(self) -> int:
        return self.snapshot.generation


class BackgroundSnapshots:
    """Serves ``backend``'s searches from the newest built snapshot (module docstring).

    ``warm()`` builds the parts a search needs (called inside the snapshot being built, on the
    builder thread). :meth:`start` builds the first snapshot in the calling thread (so a
    broken index fails at start), then starts the builder thread. ``follow``: seconds a read
    waits for a generation another process wrote (module docstring).
    """

    def __init__(
        self, backend: SqliteBackend, warm: Callable[[], object], follow: float = 5.0
    ) -> None:
        self.backend = backend
        self.store = backend.store
        self.warm = warm
        self.follow = follow
        self._writing = 0  # this process's writes under way (:meth:`writing`)
        self._served: Served | None = None
        self._floor: float = 0  # the oldest generation that may be published
        self._lock = threading.Condition()
        self._wake = threading.Event()
        self._stopped = False
        self._thread: threading.Thread | None = None
        self.builds = 0  # snapshots published (tests, metrics)
        self.failure: BaseException | None = None  # the last build's error, if it failed
        self._attempt = -1  # the generation the builder last started on
        self._failed = -1  # the last generation whose build failed

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Build and publish the first snapshot, then start the builder thread.

        Raises:
            StorageError and what ``warm`` raises: the first snapshot cannot be built (a
                damaged file among them).
        """
        try:
            self._build()
        except sqlite3.DatabaseError as exc:
            error = storage_error(self.store.path, exc, self.store.database.timeout)
            if error is None:
                raise
            raise error from exc
        self._thread = threading.Thread(target=self._loop, name="kbsearch-snapshot", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the builder and close the served snapshot's reader."""
        self._stopped = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            served, self._served = self._served, None
            if served is not None:
                self._retire(served)

    # -- reads -----------------------------------------------------------------------------

    @property
    def generation(self) -> int | None:
        """The served generation (``None`` while none serves)."""
        served = self._served
        return None if served is None else served.generation

    @contextmanager
    def reading(self) -> Iterator[int | None]:
        """Within: this thread reads the served snapshot and its pinned reader; yields its
        generation (``None``: none serves now, so reads see the file's current state). A
        newer generation in the file wakes the builder; a read waits for it only when another
        process wrote it (:meth:`_take`)."""
        served = self._take(self.store.database.generation())  # this thread's own connection
        if served is None:
            yield None
            return
        try:
            with self.store.pins.reading_from(served.reader), self.backend.using(served.snapshot):
                yield served.generation
        finally:
            with self._lock:
                served.users -= 1
                if served.retired and served.users == 0:
                    self.store.pins.close_reader(served.reader)

    def _take(self, current: int) -> Served | None:
        """The snapshot a read starting now uses (its users counted), ``current`` being the
        file's generation: the served one; for a newer ``current`` written by another process,
        the one the builder publishes for it within :attr:`follow` seconds, else ``None`` (the
        read sees the file)."""
        with self._lock:
            served = self._served
            if served is not None and current != served.generation:
                self._wake.set()
                if current > served.generation and not self._writing:

                    def built() -> bool:
                        now = self._served
                        return now is None or now.generation >= current or self._failed >= current

                    self._lock.wait_for(built, self.follow)
                    served = self._served
                    if served is not None and served.generation < current:
                        served = None  # not built in time, or its build failed
            if served is not None:
                served.users += 1
            return served

    # -- writes ----------------------------------------------------------------------------

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Around this process's write, until its generation serves: reads meanwhile use the
        served snapshot without waiting for the new one (module docstring)."""
        with self._lock:
            self._writing += 1
        try:
            yield
        finally:
            with self._lock:
                self._writing -= 1

    def refresh(self) -> None:
        """Ask the builder to build the file's current generation (returns at once)."""
        self._wake.set()

    def wait_for(self, generation: int, timeout: float) -> bool:
        """Wait until ``generation`` (or a newer one) serves; ``False`` after ``timeout``
        seconds or when a build failed meanwhile."""
        self._wake.set()

        def served() -> bool:  # generation 0 (an index never written) serves too
            current = self.generation
            return current is not None and current >= generation

        with self._lock:
            return (
                self._lock.wait_for(lambda: served() or self._failed >= generation, timeout)
                and served()
            )

    @contextmanager
    def withdrawn(self) -> Iterator[None]:
        """Around a write that may hide passages from the public: the old snapshot stops
        serving before it, and none older than the file after it is published."""
        with self._lock:
            self._floor = math.inf
            served, self._served = self._served, None
            if served is not None:
                self._retire(served)
        try:
            yield
        finally:
            with self._lock:
                self._floor = self.store.database.generation()
            self._wake.set()

    # -- the builder -----------------------------------------------------------------------

    def _retire(self, served: Served) -> None:
        """(Under the lock.) Close ``served``'s reader now, or when its last search ends."""
        served.retired = True
        if served.users == 0:
            self.store.pins.close_reader(served.reader)

    def _loop(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stopped:
                return
            try:
                self._build()
                self.failure = None
            except Exception as exc:  # keep serving the old snapshot; the next write retries
                self.failure = exc
                self._failed = self._attempt
                print(f"kbsearch: building the search snapshot failed: {exc}", file=sys.stderr)
                with self._lock:
                    self._lock.notify_all()

    def _build(self) -> None:
        """Build the file's current generation behind a new pinned reader and publish it."""
        reader = self.store.pins.open_reader()
        try:
            with self.store.pins.reading_from(reader):
                generation = self._attempt = self.store.database.generation()
                if generation == self.generation:
                    self.store.pins.close_reader(reader)
                    return
                snapshot = self.backend.snapshot_at(generation)
                with self.backend.using(snapshot):
                    self.warm()
        except BaseException:
            self.store.pins.close_reader(reader)
            raise
        with self._lock:
            current = self._served
            if generation < self._floor or (current and current.generation >= generation):
                self.store.pins.close_reader(reader)  # withdrawn meanwhile, or already newer
            else:
                self._served = Served(snapshot, reader)
                self.builds += 1
                if current is not None:
                    self._retire(current)
            self._lock.notify_all()
        if self.store.database.generation() != generation:  # written meanwhile: build again
            self._wake.set()
        else:
            self._repin(generation)

    def _repin(self, generation: int) -> None:
        """Once the WAL is wholly checkpointed, move the served snapshot to a new pinned reader
        of the same generation: begun after the checkpoint, it reads the database file, so
        the next write may start the WAL over (else, with a pinned reader always open, the WAL
        grows by every write: ~285 KB per 2,000-word upload, measured)."""
        try:
            if not self.store.pins.checkpoint():
                return
        except sqlite3.Error:  # a read-only file or medium: no WAL to start over
            return
        reader = self.store.pins.open_reader()
        with self.store.pins.reading_from(reader):
            same = self.store.database.generation() == generation
        with self._lock:
            current = self._served
            if not same or current is None or current.generation != generation:
                self.store.pins.close_reader(reader)
                return
            self._served = Served(current.snapshot, reader)
            self._retire(current)
