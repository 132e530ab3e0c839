"""The embedded backend: one SQLite file (:class:`kbsearch.store.Store`) with in-memory
read-only snapshots for the routes.

A :class:`Snapshot` belongs to one index generation and holds what the in-memory routes read:
the impact index of each audience's FTS5 table (:mod:`kbsearch.retrieve.lexical.impact`) and the
dense matrix (:mod:`kbsearch.retrieve.dense`), each with its filter columns. Each part is built
once, under the snapshot's lock, from reads inside one read transaction that also checks the
generation, so a part can never mix two states of the file; threads share the parts read-only.
A write bumps the generation, and the next search builds a new snapshot, unless a server
builds it in the background meanwhile (:mod:`kbsearch.backends.background`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

import numpy as np

from ..errors import StaleSnapshot, StorageError
from ..filters import Audience, Filters
from ..index.headings import HeadingIndex, title_counts
from ..records import Document, Passage
from ..retrieve.backend import Background, TitleCounts
from ..retrieve.dense import DenseIndex
from ..retrieve.lexical.bm25 import BM25Explanation, explain_bm25
from ..retrieve.lexical.doclists import Doclists
from ..retrieve.lexical.impact import ImpactIndex
from ..retrieve.lexical.postings import TermIndex
from ..retrieve.lexical.query_terms import QueryTerms
from ..retrieve.lexical.rows import RowTable
from ..retrieve.lexical.sql import search_sql
from ..store import PassageRow, Store, fts_table

T = TypeVar("T")
_RETRIES = 5
_DOCUMENT_CACHE = 4096  # documents a generation keeps for the answer's span choice


class Snapshot:
    """The read-only parts of one index generation, built on first use (module docstring)."""

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self._parts: dict[object, object] = {}
        self._lock = threading.Lock()

    def part(self, key: object, build: Callable[[], T]) -> T:
        """The part named ``key``, built once by ``build`` (other threads wait for it)."""
        found = self._parts.get(key)
        if found is None:
            with self._lock:
                found = self._parts.get(key)
                if found is None:
                    found = self._parts[key] = build()
        return found  # type: ignore[return-value]


class SqliteBackend:
    """:class:`kbsearch.retrieve.backend.Backend` over a :class:`~kbsearch.store.Store`."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._snapshot: Snapshot | None = None
        self._lock = threading.Lock()
        self._local = threading.local()
        self._rows = RowTable()  # the passage rows lexical searches touched, every generation
        self._doclists = Doclists()  # the term doclists lexical searches read, every generation
        self._dense: dict[int, DenseIndex] = {}  # dim -> the newest dense index built

    # -- writes ---------------------------------------------------------------------------

    def generation(self) -> int:
        return self.store.database.generation()

    def write_document(
        self,
        document: Document,
        passages: Sequence[Passage],
        bodies: Sequence[str],
        vectors: np.ndarray | None,
    ) -> None:
        self.store.documents.write(document, passages, bodies, vectors)

    def delete_document(self, doc_id: str, version: str) -> None:
        self.store.documents.delete(doc_id, version)

    # -- snapshots ------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The snapshot this thread searches: the one set by :meth:`using`, else the one of
        the file's current generation (a new one after any write)."""
        pinned: Snapshot | None = getattr(self._local, "snapshot", None)
        if pinned is not None:
            return pinned
        return self.snapshot_at(self.store.database.generation())

    def snapshot_at(self, generation: int) -> Snapshot:
        """The shared snapshot of ``generation`` (made empty when new; one older than the
        shared one is made apart and not kept)."""
        current = self._snapshot
        if current is None or current.generation != generation:
            with self._lock:
                current = self._snapshot
                if current is None or current.generation < generation:
                    current = self._snapshot = Snapshot(generation)
                elif current.generation > generation:
                    current = Snapshot(generation)
        return current

    @contextmanager
    def using(self, snapshot: Snapshot | None) -> Iterator[None]:
        """Within: this thread's searches read ``snapshot`` (``None``: the current one). Its
        generation must be the one this thread's reads see (a pinned reader's,
        :mod:`kbsearch.store.pinning`), or its parts fail as stale."""
        previous = getattr(self._local, "snapshot", None)
        self._local.snapshot = snapshot
        try:
            yield
        finally:
            self._local.snapshot = previous

    @contextmanager
    def _read(self) -> Iterator[None]:
        """One read transaction on this thread's connection
        (:meth:`~kbsearch.store.Database.read_transaction`: the store is the only code that
        writes SQL)."""
        with self.store.database.read_transaction():
            yield

    def _part(self, key: object, load: Callable[[], T]) -> T:
        """A snapshot part, loaded in one read transaction at the snapshot's generation."""
        for _ in range(_RETRIES):
            snapshot = self.snapshot()

            def build(expected: int = snapshot.generation) -> T:
                with self._read():
                    if self.store.database.generation() != expected:
                        raise StaleSnapshot
                    return load()

            try:
                return snapshot.part(key, build)
            except StaleSnapshot:
                continue
        raise StorageError(f"{self.store.path} kept changing while a search read it; retry")

    def _reader(self, generation: int) -> Callable[[Callable[[], T]], T]:
        """Runs a read in one read transaction, checked to be at ``generation``.

        Raises:
            StaleSnapshot: the file has moved on (the caller retries, :meth:`_lexical`).
        """

        def read(load: Callable[[], T]) -> T:
            with self._read():
                if self.store.database.generation() != generation:
                    raise StaleSnapshot
                return load()

        return read

    def lexical_index(self, audience: str) -> TermIndex:
        """The lexical index of the audience's FTS5 table, read per term
        (:mod:`kbsearch.retrieve.lexical.postings`): O(1) to make per generation."""
        table = fts_table(audience)

        def load() -> TermIndex:
            generation = self.store.database.generation()
            read = self._reader(generation)
            languages = self.store.documents.languages(audience)
            return TermIndex(
                self.store, audience, generation, read, self._rows, languages, self._doclists
            )

        return self._part(("terms", table), load)

    def _lexical(self, audience: str, run: Callable[[TermIndex], T]) -> T:
        """``run(index)`` on the current lexical index, again on a newer one while the file
        moves on under its reads. Each try runs in one read transaction, so its per-term reads
        see one state whatever another connection writes meanwhile."""
        for _ in range(_RETRIES):
            try:
                with self._read():
                    return run(self.lexical_index(audience))
            except StaleSnapshot:
                continue
        raise StorageError(f"{self.store.path} kept changing while a search read it; retry")

    def impact_index(self, audience: str) -> ImpactIndex:
        """The whole-table in-memory lexical index of the audience's FTS5 table (reads every
        posting; for tools and as the reference of :class:`TermIndex`: searches do not use
        it)."""
        table = fts_table(audience)
        return self._part(("impact", table), lambda: ImpactIndex.load(self.store, audience))

    def dense_index(self, dim: int) -> DenseIndex:
        """The in-memory dense index (``dim`` columns: int8 codes and filter columns), made
        from the newest one built before by the rows written and deleted since
        (:meth:`DenseIndex.load`)."""

        def load() -> DenseIndex:
            previous = self._dense.get(dim)
            index = DenseIndex.load(self.store, dim, previous)
            if previous is None or previous.generation < index.generation:
                self._dense[dim] = index
            return index

        return self._part(("dense", dim), load)

    def _dense_read(self, dim: int, run: Callable[[DenseIndex], T]) -> T:
        """``run(index)`` on the current dense index, again on a newer one when the rows it
        rescores are gone from the file (another connection wrote meanwhile)."""
        for _ in range(_RETRIES):
            try:
                return run(self.dense_index(dim))
            except StaleSnapshot:
                continue
        raise StorageError(f"{self.store.path} kept changing while a search read it; retry")

    # -- reads ----------------------------------------------------------------------------

    def languages(self, audience: str) -> list[str]:
        key = ("languages", fts_table(audience))
        return self._part(key, lambda: self.store.documents.languages(audience))

    def passage_languages(self, passage_ids: Sequence[str], audience: str) -> dict[str, str]:
        return self.store.passages.languages_of(passage_ids, audience)

    def lexical_statistics(self, audience: str) -> TermIndex:
        return self.lexical_index(audience)

    def lexical_candidates(
        self, terms: QueryTerms, filters: Filters, depth: int
    ) -> list[tuple[str, float]]:
        def run(index: TermIndex) -> list[tuple[str, float]]:
            if not index.exact(terms):
                return search_sql(self.store, terms, filters, depth)
            return index.search_terms(terms, filters, depth)

        return self._lexical(str(filters.audience), run)

    def dense_candidates(
        self, vector: np.ndarray, filters: Filters, depth: int
    ) -> list[tuple[str, float]]:
        return self._dense_read(len(vector), lambda index: index.search(vector, filters, depth))

    def passages(
        self, passage_ids: Iterable[str], filters: Filters | None = None
    ) -> dict[str, PassageRow]:
        return self.store.passages.rows(passage_ids, filters)

    def explain_lexical(self, terms: QueryTerms, row: PassageRow, audience: str) -> BM25Explanation:
        with self._read():
            return explain_bm25(self.store, terms, row.row_id, audience)

    def dense_similarity(self, vector: np.ndarray, row: PassageRow) -> float | None:
        return self._dense_read(len(vector), lambda index: index.similarity(vector, row.row_id))

    # -- scoring given passages (score fusion) ---------------------------------------------

    def lexical_scores(
        self, terms: QueryTerms, audience: str, passage_ids: Sequence[str]
    ) -> dict[str, float]:
        staff = audience == Audience.STAFF  # the public index holds public passages only

        def run(index: TermIndex) -> dict[str, float]:
            found = index.row_ids_of(passage_ids)
            known = [p for p in passage_ids if p in found and (staff or found[p][1] == "public")]
            if not index.exact(terms):  # FTS5 must tokenize the query: ask it per passage
                rows = self.passages(known)
                return {
                    pid: self.explain_lexical(terms, rows[pid], audience).score
                    for pid in known
                    if pid in rows
                }
            rows_at = np.array([found[pid][0] for pid in known], dtype=np.int64)
            kept = index.scores_of(terms.kept, rows_at)
            if terms.kept and terms.clamped:  # a passage without kept terms: the clamped ones'
                kept = np.where(kept > 0, kept, index.scores_of(terms.clamped, rows_at))
            return dict(zip(known, kept.tolist(), strict=True))

        return self._lexical(audience, run)

    def dense_scores(self, vector: np.ndarray, passage_ids: Sequence[str]) -> dict[str, float]:
        return self._dense_read(len(vector), lambda index: index.scores_of(vector, passage_ids))

    def heading_index(self, dim: int) -> HeadingIndex:
        """The heading vectors of the index's embedder (:mod:`kbsearch.index.headings`), per
        generation; empty for an index built before heading vectors."""

        def load() -> HeadingIndex:
            settings = self.store.database.index_settings()
            name = settings.embedder if settings is not None and settings.embedder else ""
            return HeadingIndex.load(self.store, name, dim)

        return self._part(("headings", dim), load)

    def heading_scores(self, vector: np.ndarray, passage_ids: Sequence[str]) -> dict[str, float]:
        return self.heading_index(len(vector)).scores_of(vector, passage_ids)

    def title_counts(self, audience: str) -> TitleCounts:
        key = ("title_counts", fts_table(audience))
        return self._part(key, lambda: title_counts(self.store, audience))

    # -- what the judge and the presenter read ----------------------------------------------

    def term_presence(
        self, words: Sequence[Sequence[str]], row: PassageRow, audience: str
    ) -> tuple[bool, ...]:
        """From the postings of the audience's lexical index (each term's, cached)."""

        def run(index: TermIndex) -> tuple[bool, ...]:
            return tuple(any(index.holds(t, row.row_id) for t in group) for group in words)

        return self._lexical(audience, run)

    def background(self, audience: str) -> Background:
        """From the audience's vector moments, kept by every write
        (:mod:`kbsearch.store.moments`): O(dim^2) once per generation, no vector read."""
        settings = self.store.database.index_settings()
        dim = settings.dim if settings is not None else 0
        staff = audience == Audience.STAFF

        def load() -> Background:
            moments = self.store.moments.of(audience, dim)
            return Background.of_moments(moments, self.store.database.generation())

        return self._part(("background", staff), load)

    def documents(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Document]:
        """Kept in the snapshot's parts (up to ``_DOCUMENT_CACHE`` documents, then started
        over), so a warm search reads no document it read before at that generation."""
        wanted = set(keys)
        snapshot = self.snapshot()
        cache: dict[tuple[str, str], Document] = snapshot.part("documents", dict)
        missing = [k for k in wanted if k not in cache]
        if missing:
            read = self._reader(snapshot.generation)
            try:
                found = read(lambda: self.store.documents.of(missing))
            except StaleSnapshot:  # the file moved on: read it, keep nothing
                return self.store.documents.of(wanted)
            if len(cache) + len(found) > _DOCUMENT_CACHE:
                cache.clear()
            cache.update(found)
        return {k: cache[k] for k in wanted if k in cache}

    def public_folders(self) -> list[str]:
        return self._part("public_folders", self.store.documents.public_folders)
