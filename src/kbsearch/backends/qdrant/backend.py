"""The Qdrant backend: the SQLite file stays the system of record, Qdrant ranks the candidates.

A search node holds no copy of the collection: it reads the rows of the passages it names, one
term's FTS5 statistics at a time, and the collection statistics recorded at the last sync
(:mod:`.statistics`), never a whole table (the embedded backend's in-memory indexes are built
only for tools that ask for them: :meth:`QdrantBackend.dense_index`, ``impact_index``).

:class:`QdrantBackend` implements :class:`kbsearch.retrieve.backend.Backend`. Documents, versions,
passages, the FTS5 statistics the query terms are prepared with, explanations and the
embedding cache stay in SQLite (:class:`kbsearch.backends.sqlite.SqliteBackend`); the lexical
and dense candidates come from a Qdrant collection (:mod:`.collection`) holding one point per
passage, queried with the filters inside the query (:func:`.filters.to_qdrant`):

- lexical (:mod:`.lexical`): the query terms (kept and clamped) as a sparse vector against
  ``bm25_public`` for the public audience, ``bm25`` for staff; BM25 with Qdrant's IDF
  (:mod:`.sparse`), so scores differ from FTS5's on terms frequent in the collection;
- dense: cosine on ``dense``; exact up to :data:`.target.EXACT_UP_TO` passages and HNSW
  above by default (``exact=True``: always exact; ``False``: always HNSW, with ``hnsw_ef``).

Writes go to SQLite first, then to Qdrant (:func:`.mirror.write_points`). :meth:`verify` and
:meth:`sync` compare and repair the collection against SQLite.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence

import numpy as np

from ...errors import PartialWriteError
from ...filters import Audience, Filters
from ...index.headings import heading_scores_of
from ...records import Document, Passage, PassageRow
from ...retrieve.backend import Background, LexicalStatistics, TitleCounts
from ...retrieve.dense import DenseIndex
from ...retrieve.lexical.bm25 import BM25Explanation
from ...retrieve.lexical.impact import ImpactIndex
from ...retrieve.lexical.query_terms import QueryTerms
from ...store import Store
from ..sqlite import SqliteBackend
from .collection import Collection, engine_errors, engine_message
from .dense import dense_candidates, dense_scores
from .expected import expected_passages, points_of
from .lexical import lexical_candidates, lexical_scores
from .mirror import (
    BATCH_SIZE,
    DriftReport,
    ExpectedPassage,
    delete_version,
    reweigh,
    sync,
    verify,
    write_points,
)
from .names import passage_ids_of, passage_key
from .points import PassagePoint, passage_points
from .sparse import LengthStatistics, SparseWeights
from .statistics import CollectionStatistics, FtsStatistics
from .target import EXACT_UP_TO, HNSW_EF, SETTINGS_KEY, QdrantTarget

Ranking = list[tuple[str, float]]


class QdrantBackend:
    """:class:`kbsearch.retrieve.backend.Backend` on SQLite + a Qdrant collection (module
    docstring). ``collection`` is created on first use with the index's dimension."""

    def __init__(
        self,
        store: Store,
        collection: Collection,
        *,
        exact: bool | None = None,
        hnsw_ef: int | None = None,
        batch_size: int = BATCH_SIZE,
        target: QdrantTarget | None = None,
    ) -> None:
        self.sqlite = SqliteBackend(store)
        self.target = target
        self.store = store
        self.collection = collection
        self.exact = exact
        self.hnsw_ef = hnsw_ef
        self.batch_size = batch_size
        self._ensured = False
        self._statistics: CollectionStatistics | None = None
        self._statistics_lock = threading.Lock()

    # -- the collection ---------------------------------------------------------------------

    def dimension(self) -> int | None:
        """The index's dense dimension (``None`` for a lexical-only index)."""
        settings = self.store.database.index_settings()
        return settings.dim if settings is not None and settings.has_vectors else None

    def _collection(self, dim: int | None = None) -> Collection:
        """The collection, created (or checked) with the index's dimension on first use.

        Raises:
            BackendUnavailableError: Qdrant cannot be reached, or holds another dimension.
        """
        if not self._ensured:
            with engine_errors("be reached"):
                self.collection.ensure(dim if dim is not None else self.dimension())
            self._ensured = True
        return self.collection

    def lengths(self) -> LengthStatistics:
        """The current average passage lengths of every passage and of public ones (FTS5's
        own totals, the statistics the embedded backend scores with)."""

        def average(audience: str) -> float:
            rows, tokens = self.store.fts.statistics(audience)
            return tokens / rows if rows else 0.0

        return LengthStatistics(average(Audience.STAFF), average(Audience.PUBLIC))

    def record(self) -> None:
        """Store :attr:`target` in the index's ``meta`` table (later opens find the collection)."""
        if self.target is not None:
            with self.store.database.transaction():
                self.store.database.set_meta(SETTINGS_KEY, json.dumps(self.target.settings()))

    # -- writes -----------------------------------------------------------------------------

    def generation(self) -> int:
        return self.sqlite.generation()

    def write_document(
        self,
        document: Document,
        passages: Sequence[Passage],
        bodies: Sequence[str],
        vectors: np.ndarray | None,
    ) -> None:
        """SQLite first, then Qdrant in batches; the version's stale points are deleted.

        Raises:
            BackendUnavailableError: Qdrant cannot be reached (nothing is written).
            PartialWriteError: Qdrant failed after SQLite committed (``sync`` repairs).
        """
        dim = None if vectors is None else int(vectors.shape[1])
        collection = self._collection(dim or self.dimension())  # reached before SQLite is written
        self.sqlite.write_document(document, passages, bodies, vectors)
        self.record_point_ids([p.passage_id for p in passages])
        sparse = [SparseWeights.from_body(b) for b in bodies]
        points = passage_points(document, list(passages), sparse, vectors)
        stale = (document.doc_id, document.version)
        write_points(collection, points, self.lengths(), self.batch_size, stale=stale)

    def delete_document(self, doc_id: str, version: str) -> None:
        """SQLite first, then every point of the version (O(its points); the others are
        re-weighted by :meth:`sync_deletes`, :func:`kbsearch.backends.factory.mirrored_deletes`).

        Raises:
            BackendUnavailableError: Qdrant cannot be reached (nothing is deleted).
            PartialWriteError: Qdrant failed after SQLite committed (``sync`` repairs).
        """
        collection = self._collection()  # reached before SQLite is written
        stored = self.store.documents.about([doc_id], []).get((doc_id, version))
        ids = (
            []
            if stored is None
            else [p.passage_id for p in self.store.passages.in_document(stored.row_id)]
        )
        self.sqlite.delete_document(doc_id, version)
        self.store.point_ids.forget([passage_key(p) for p in ids])
        delete_version(collection, doc_id, version)

    def record_point_ids(self, passage_ids: Sequence[str] | None = None) -> None:
        """Record the point id -> passage row of ``passage_ids`` (``None``: every passage) in
        SQLite (:mod:`kbsearch.store.point_ids`), so searches read no payload from Qdrant."""
        wanted = [e.passage_id for e in self.expected()] if passage_ids is None else passage_ids
        for start in range(0, len(wanted), 5000):
            rows = self.store.passages.rows(wanted[start : start + 5000])
            self.store.point_ids.record((passage_key(pid), row.row_id) for pid, row in rows.items())

    def passage_ids_of(self, point_ids: Sequence[str]) -> dict[str, str]:
        """``{point id: passage id}`` (:func:`.names.passage_ids_of`: SQLite's table, else
        the points' payload)."""
        return passage_ids_of(self.store, self.collection, point_ids)

    # -- reads ------------------------------------------------------------------------------

    def statistics(self) -> CollectionStatistics:
        """The collection statistics of the generation this thread reads: those the last
        sync recorded, else (the file written since without a sync) computed from the tables
        (:mod:`.statistics`); kept per generation."""
        generation = self.store.database.generation()
        found = self._statistics
        if found is not None and found.generation == generation:
            return found
        with self._statistics_lock:
            found = self._statistics
            if found is None or found.generation != generation:
                recorded = CollectionStatistics.recorded(self.store)
                if recorded is None or recorded.generation != generation:
                    recorded = CollectionStatistics.compute(self.store, self.dimension() or 0)
                found = recorded
                if self._statistics is None or found.generation >= self._statistics.generation:
                    self._statistics = found
        return found

    def save_statistics(self) -> None:
        """Compute the collection statistics of the file's current generation and record them
        (:mod:`.statistics`), so search nodes read no whole table."""
        statistics = CollectionStatistics.compute(self.store, self.dimension() or 0)
        statistics.save(self.store)
        self._statistics = statistics

    def languages(self, audience: str) -> list[str]:
        return list(self.statistics().audiences[_audience(audience)].document_languages)

    def passage_languages(self, passage_ids: Sequence[str], audience: str) -> dict[str, str]:
        return self.store.passages.languages_of(passage_ids, _audience(audience))

    def lexical_statistics(self, audience: str) -> LexicalStatistics:
        """FTS5's statistics (they prepare the query terms as in the embedded backend), read
        a term at a time."""
        name = _audience(audience)
        passages, _ = self.store.fts.statistics(name)
        languages = list(self.statistics().audiences[name].passage_languages)
        return FtsStatistics(self.store, name, passages, languages)

    def lexical_candidates(self, terms: QueryTerms, filters: Filters, depth: int) -> Ranking:
        """:func:`.lexical.lexical_candidates` (Qdrant's BM25, point ids named by SQLite);
        only passages SQLite holds (:meth:`_held`)."""
        found = lexical_candidates(self._collection(), terms, filters, depth, self.passage_ids_of)
        return self._held(found)

    def exact_search(self) -> bool:
        """Whether dense search is exact: :attr:`exact` when given, else whether the
        collection holds at most :data:`.target.EXACT_UP_TO` passages (the count the last
        sync recorded, :meth:`statistics`; no table read)."""
        if self.exact is not None:
            return self.exact
        return self.statistics().audiences[Audience.STAFF.value].titles.passages <= EXACT_UP_TO

    def dense_candidates(self, vector: np.ndarray, filters: Filters, depth: int) -> Ranking:
        """:func:`.dense.dense_candidates`: exact or HNSW by :meth:`exact_search`; only
        passages SQLite holds: an exact search's are checked (:meth:`_held`), an HNSW
        search's already are (rescored from SQLite's vectors, :func:`.dense.rescored`)."""
        exact = self.exact_search()
        found = dense_candidates(
            self._collection(len(vector)),
            self.store,
            vector,
            filters,
            depth,
            exact=exact,
            hnsw_ef=None if exact else self.hnsw_ef or HNSW_EF,
        )
        return self._held(found) if exact else found

    def _held(self, ranking: Ranking) -> Ranking:
        """``ranking`` without the passages SQLite (as this thread reads it) does not hold: a
        point a failed delete left (``sync`` removes it) or a write added after this reader's
        transaction began (such a passage made every search of it fail)."""
        if not ranking:
            return ranking
        held = self.store.passages.languages_of([pid for pid, _ in ranking], Audience.STAFF)
        return [(pid, score) for pid, score in ranking if pid in held]

    def dense_index(self, dim: int) -> DenseIndex:
        """The embedded in-memory matrix (for tools that read it; searches use Qdrant)."""
        return self.sqlite.dense_index(dim)

    def impact_index(self, audience: str) -> ImpactIndex:
        """The embedded in-memory lexical index (FTS5's scores, for comparison tools)."""
        return self.sqlite.impact_index(audience)

    def passages(
        self, passage_ids: Iterable[str], filters: Filters | None = None
    ) -> dict[str, PassageRow]:
        return self.sqlite.passages(passage_ids, filters)

    def explain_lexical(self, terms: QueryTerms, row: PassageRow, audience: str) -> BM25Explanation:
        """FTS5's term-by-term BM25 (the system of record's; Qdrant's IDF differs, see
        :mod:`.sparse`)."""
        return self.sqlite.explain_lexical(terms, row, audience)

    def dense_similarity(self, vector: np.ndarray, row: PassageRow) -> float | None:
        return self.dense_scores(vector, [row.passage.passage_id]).get(row.passage.passage_id)

    def lexical_scores(
        self, terms: QueryTerms, audience: str, passage_ids: Sequence[str]
    ) -> dict[str, float]:
        """:func:`.lexical.lexical_scores`: Qdrant's BM25 of the given passages, as
        :meth:`lexical_candidates` scores them."""
        return lexical_scores(self._collection(), terms, audience, passage_ids, self.passage_ids_of)

    def dense_scores(self, vector: np.ndarray, passage_ids: Sequence[str]) -> dict[str, float]:
        """The embedded backend's cosines, from SQLite (:func:`.dense.dense_scores`)."""
        return dense_scores(self.store, vector, passage_ids)

    def heading_scores(self, vector: np.ndarray, passage_ids: Sequence[str]) -> dict[str, float]:
        settings = self.store.database.index_settings()
        name = settings.embedder if settings is not None and settings.embedder else ""
        return heading_scores_of(self.store, name, vector, passage_ids)

    def title_counts(self, audience: str) -> TitleCounts:
        return self.statistics().audiences[_audience(audience)].titles

    def term_presence(
        self, words: Sequence[Sequence[str]], row: PassageRow, audience: str
    ) -> tuple[bool, ...]:
        """From FTS5's instances of each term in the row (one term's postings at a time)."""
        name = _audience(audience)
        return tuple(
            any(self.store.fts.term_frequency(t, row.row_id, name) > 0 for t in group)
            for group in words
        )

    def background(self, audience: str) -> Background:
        return self.statistics().audiences[_audience(audience)].background

    def documents(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Document]:
        return self.store.documents.of(keys)

    def public_folders(self) -> list[str]:
        return list(self.statistics().folders)

    # -- drift ------------------------------------------------------------------------------

    def expected(self) -> list[ExpectedPassage]:
        """Every passage SQLite holds, as its point should be (:mod:`.expected`)."""
        return expected_passages(self.store)

    def points_of(self, passage_ids: Sequence[str]) -> list[PassagePoint]:
        """The points SQLite gives for ``passage_ids`` (:func:`.expected.points_of`)."""
        return points_of(self.store, passage_ids, self.dimension())

    def verify(self) -> DriftReport:
        """The collection compared with SQLite (:func:`.mirror.verify`)."""
        return verify(self._collection(), self.expected(), self.dimension(), self.lengths())

    def sync(self) -> tuple[DriftReport, int]:
        """Repair the drift :meth:`verify` finds; returns the report and the points deleted
        or written.

        Raises:
            PartialWriteError: Qdrant failed again (run it once more).
        """
        report = self.verify()
        changed = sync(self.collection, report, self.points_of, self.lengths(), self.batch_size)
        self.record_point_ids()
        self.save_statistics()
        self.optimize()
        return report, changed

    def sync_deletes(self) -> int:
        """Bring the collection level after :meth:`delete_document` calls in the work they
        moved (:meth:`sync` reads every point and re-records every point id): record the
        statistics, re-write the points the deletes put out of length (:func:`.mirror.reweigh`,
        a payload filter) and :meth:`optimize` when there are some. When the collection holds
        another number of points than SQLite passages (an earlier failure's drift, which the
        full sync after every delete used to repair), :meth:`sync`. Returns the points written.

        Raises:
            BackendUnavailableError: Qdrant cannot be reached.
            PartialWriteError: Qdrant failed (run ``kbsearch sync``).
        """
        self.save_statistics()
        with engine_errors("count its points"):
            points = self._collection().count()
        if points != self.title_counts(Audience.STAFF).passages:
            return self.sync()[1]
        changed = reweigh(self.collection, self.points_of, self.lengths(), self.batch_size)
        if changed:
            self.optimize()
        return changed

    def optimize(self) -> None:
        """Let the collection build its indexes now (:meth:`.collection.Collection.optimize`:
        Qdrant Edge turns its appendable segment into HNSW-indexed, memory-mapped ones; a
        server does this on its own), so a search node's memory does not grow with the
        collection (docs/benchmarks.md). Called at the end of :meth:`sync`.

        Raises:
            PartialWriteError: the engine failed (SQLite and the points are intact).
        """
        try:
            self._collection().optimize()
        except Exception as exc:  # any engine failure: the points are written, not indexed
            raise PartialWriteError(
                f"Qdrant could not build its indexes ({engine_message(exc)}); the points are"
                " written: "
                "run `kbsearch sync` to try again"
            ) from exc

    def close(self) -> None:
        self.collection.close()


def _audience(audience: str) -> str:
    """``"staff"`` for the staff audience, else ``"public"`` (what every other sees)."""
    return Audience.STAFF.value if audience == Audience.STAFF else Audience.PUBLIC.value
