"""Exact dense (cosine) top-k over stored passage vectors, filters applied before the top k.

Vectors are L2-normalised, so cosine similarity is the dot product. The index holds each
vector as int8 codes (:mod:`kbsearch.retrieve.dense_codes`, ``dim + 8`` bytes a row) and the
filter columns in memory; the float32 vectors stay in the store and are read by row id for
the rows a query rescores. A search:

1. scans the codes (the approximate score ``a`` of every row passing the filters);
2. rescores exactly (float32, :func:`row_dots`) the ``rescoring_depth(k)`` best by ``a``;
3. rescores also every other row whose ``a`` plus its error bound reaches the k-th best exact
   score so far, since only those could still be in the top k.

So the top k and its scores are those of a scan of every float32 row, bit for bit (the
depth of step 2 sets the cost, never the result). The index of a generation is built from
the previous one: the rows written since (row ids above the ones it holds, as ids are never
reused) are coded and appended as a segment, the rows deleted since (the store's log,
:mod:`kbsearch.store.row_log`) are masked, and only when the log does not reach back, or
half the rows are deleted, is every vector read again (a block at a time).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..errors import StaleSnapshot
from ..filters import Filters
from ..store import Store, VectorTable
from ..threads import scan_threads
from .dense_codes import Codes
from .dense_rows import RowCache, RowReader, Segment, concatenate, store_reader
from .topk import top_k

PARALLEL_ROWS = 50_000
RESCORE_FACTOR = 4  # step 2 rescores the RESCORE_FACTOR * k best approximate scores ...
RESCORE_MIN = 40  # ... and at least this many
SEGMENT_MIN = 65_536  # rows written since the last merge are merged into one tail segment ...
SEGMENT_SHARE = 8  # ... while it holds fewer than max(SEGMENT_MIN, rows / SEGMENT_SHARE)


def rescoring_depth(k: int) -> int:
    """How many of the best approximate scores step 2 rescores: ``max(RESCORE_MIN,
    RESCORE_FACTOR * k)`` (step 3 adds any row that could still enter the top k)."""
    return max(RESCORE_MIN, RESCORE_FACTOR * k)


@dataclass
class DenseIndex:
    """The coded vectors of one store generation (module docstring).

    ``segments``: the rows by ascending row id; ``alive``: ``False`` for a row deleted since
    its segment was coded (shape ``(n,)`` over all segments); ``read``: the float32 vectors
    by row id (from the store's file through a
    :class:`~kbsearch.retrieve.dense_rows.RowCache`, or the table of :meth:`of_table`).
    """

    segments: tuple[Segment, ...]
    alive: np.ndarray
    generation: int
    dim: int
    read: RowReader = field(repr=False)

    @classmethod
    def load(cls, store: Store, dim: int, previous: DenseIndex | None = None) -> DenseIndex:
        """The store's vectors at its generation: ``previous`` (an index of the same store
        at an older generation) extended by the rows written and deleted since, or every
        vector read a block at a time. Call it inside one read transaction, so that the
        vectors are those of that generation."""
        generation = store.database.generation()
        compatible = previous is not None and previous.dim == dim
        read: RowReader = RowCache(store_reader(store, dim))
        if previous is not None and compatible:
            read = previous.read  # its cached rows stay right
        if previous is not None and compatible:
            deleted = store.vectors.deleted_rows_between(previous.generation, generation)
            if deleted is not None:
                grown = previous._extended(store, deleted, generation, read)
                if grown is not None:
                    return grown
        segment = Segment.of(list(store.vectors.table_blocks(dim)), dim)
        return cls((segment,), np.ones(len(segment), dtype=bool), generation, dim, read)

    @classmethod
    def of_table(cls, table: VectorTable, generation: int = 0) -> DenseIndex:
        """An index over an in-memory float32 table (tools and benchmarks without a store;
        the table's rows rescore)."""
        order = np.argsort(table.row_ids, kind="stable")
        row_ids, vectors = table.row_ids[order], table.vectors[order]

        def read(wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            at = np.searchsorted(row_ids, wanted)
            at = at[(at < len(row_ids)) & (row_ids[np.minimum(at, len(row_ids) - 1)] == wanted)]
            return row_ids[at], vectors[at]

        blocks = [
            VectorTable(**{f: getattr(table, f)[order[at : at + _BLOCK]] for f in _TABLE_FIELDS})
            for at in range(0, len(order), _BLOCK)
        ]
        segment = Segment.of(blocks, table.vectors.shape[1])
        dim = int(table.vectors.shape[1])
        return cls((segment,), np.ones(len(segment), dtype=bool), generation, dim, read)

    def _extended(
        self, store: Store, deleted: np.ndarray, generation: int, read: RowReader
    ) -> DenseIndex | None:
        """This index with the rows written since (row ids above its last) and the rows
        ``deleted`` (inclusive id ranges) masked; ``None`` when half the rows are gone (a
        reload compacts them)."""
        alive = self.alive
        if len(deleted):
            alive = alive.copy()
            ids = self.row_ids
            for first, last in deleted:
                alive[np.searchsorted(ids, first) : np.searchsorted(ids, last, side="right")] = 0
        last_id = int(self.row_ids[-1]) if len(self.row_ids) else -1
        new = Segment.of(list(store.vectors.table_blocks(self.dim, after=last_id)), self.dim)
        total = len(alive) + len(new)
        if len(alive) and 2 * int(np.count_nonzero(alive)) < len(alive):
            return None
        segments = self.segments
        if len(new):
            tail = segments[-1]
            tail_alive = alive[len(alive) - len(tail) :]
            if len(segments) > 1 and len(tail) + len(new) < max(
                SEGMENT_MIN, total // SEGMENT_SHARE
            ):
                merged = tail.join(new, tail_alive)  # the tail's dead rows dropped
                segments = (*segments[:-1], merged)
                alive = np.concatenate(
                    [alive[: len(alive) - len(tail)], np.ones(len(merged), bool)]
                )
            else:
                segments = (*segments, new)
                alive = np.concatenate([alive, np.ones(len(new), dtype=bool)])
        return DenseIndex(segments, alive, generation, self.dim, read)

    # -- the rows, over all segments ---------------------------------------------------

    @cached_property
    def row_ids(self) -> np.ndarray:
        """Every row id, ascending, shape ``(n,)`` (deleted rows included: see ``alive``)."""
        return concatenate([s.row_ids for s in self.segments], np.int64)

    @cached_property
    def passage_ids(self) -> np.ndarray:
        return concatenate([s.passage_ids for s in self.segments], object)

    @cached_property
    def public(self) -> np.ndarray:
        """Whether each row is public (and not deleted), shape ``(n,)``."""
        return concatenate([s.columns.public for s in self.segments], bool) & self.alive

    @cached_property
    def position(self) -> dict[str, int]:
        """``{passage_id: row position}`` of the live rows, built on first use."""
        live = np.flatnonzero(self.alive)
        return {str(self.passage_ids[i]): int(i) for i in live}

    @property
    def nbytes(self) -> int:
        """Bytes of the codes (the matrix the scan reads)."""
        return sum(s.codes.nbytes for s in self.segments)

    def __len__(self) -> int:
        """Live rows."""
        return int(np.count_nonzero(self.alive))

    def mask(self, filters: Filters) -> np.ndarray:
        """Boolean mask of live rows passing ``filters`` (the same rules as the SQL filter)."""
        parts = [s.columns.mask(filters) for s in self.segments]
        return concatenate(parts, bool) & self.alive

    # -- scoring ----------------------------------------------------------------------

    def approximate(self, query: np.ndarray) -> np.ndarray:
        """The approximate score of every row, shape ``(n,)`` float32 (codes only). From
        ``PARALLEL_ROWS`` rows on, segments are cut into ``$KBSEARCH_THREADS`` (default 2)
        slices scanned at once (BLAS and the int8 -> float32 cast release the GIL)."""
        q = np.asarray(query, dtype=np.float32)
        out = np.empty(len(self.alive), dtype=np.float32)
        parts: list[tuple[Codes, slice]] = []
        start = 0
        threads = 1 if len(out) < PARALLEL_ROWS else scan_threads()
        for s in self.segments:
            cuts = np.linspace(0, len(s), threads + 1).astype(int)
            for a, b in zip(cuts[:-1], cuts[1:], strict=True):
                if b > a:
                    sub = Codes(s.codes.codes[a:b], s.codes.scales[a:b], s.codes.residuals[a:b])
                    parts.append((sub, slice(start + a, start + b)))
            start += len(s)
        if threads == 1:
            for sub, where in parts:
                sub.approximate(q, out[where])
        else:
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(lambda p: p[0].approximate(q, out[p[1]]), parts))
        return out

    def bounds(self, query: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The error bound of the approximate score at each of ``positions`` (float64)."""
        out = np.empty(len(positions), dtype=np.float64)
        start = 0
        for s in self.segments:
            inside = (positions >= start) & (positions < start + len(s))
            if inside.any():
                out[inside] = s.codes.bounds(query, positions[inside] - start)
            start += len(s)
        return out

    def rows(self, positions: np.ndarray) -> np.ndarray:
        """The float32 vectors of the rows at ``positions`` (read by row id), aligned with
        them, shape ``(len(positions), dim)``.

        Raises:
            StaleSnapshot: a row is no longer in the store (it moved on: search again).
        """
        wanted = self.row_ids[positions]
        order = np.argsort(wanted)
        found, vectors = self.read(wanted[order])
        if len(found) != len(wanted) or not np.array_equal(found, wanted[order]):
            raise StaleSnapshot
        out = np.empty((len(wanted), self.dim), dtype=np.float32)
        out[order] = vectors
        return out

    def exact(self, query: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Exact float32 cosines (:func:`row_dots`) of the rows at ``positions``, shape
        ``(len(positions),)``.

        Raises:
            StaleSnapshot: a row is no longer in the store (it moved on: search again).
        """
        if len(positions) == 0:
            return np.zeros(0, dtype=np.float32)
        return row_dots(self.rows(positions), np.asarray(query, dtype=np.float32))

    def search(self, query: np.ndarray, filters: Filters, k: int) -> list[tuple[str, float]]:
        """Top ``k`` ``(passage_id, cosine)`` among rows passing ``filters``, best first,
        ties broken by passage id: the same list, scores bit for bit, as a float32 scan of
        every row (module docstring)."""
        if k <= 0 or len(self.alive) == 0:
            return []
        candidates = np.flatnonzero(self.mask(filters))
        if len(candidates) == 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        approx = self.approximate(q)[candidates]
        depth = rescoring_depth(k)
        if len(candidates) <= depth:
            return top_k(candidates, self.exact(q, candidates), self.passage_ids, k)
        first = np.argpartition(-approx, depth - 1)[:depth]
        exact = self.exact(q, candidates[first])
        kth = float(np.partition(exact, len(exact) - k)[len(exact) - k])
        rest = np.ones(len(candidates), dtype=bool)
        rest[first] = False
        rest_at = np.flatnonzero(rest)
        reach = approx[rest_at] + self.bounds(q, candidates[rest_at])
        more = rest_at[reach >= kth]
        chosen = np.concatenate([candidates[first], candidates[more]])
        scores = np.concatenate([exact, self.exact(q, candidates[more])])
        return top_k(chosen, scores, self.passage_ids, k)

    def scores_of(self, query: np.ndarray, passage_ids: Sequence[str]) -> dict[str, float]:
        """``{passage_id: cosine}`` of those of ``passage_ids`` with a live row."""
        at = self.position
        known = [pid for pid in passage_ids if pid in at]
        positions = np.array([at[pid] for pid in known], dtype=np.int64)
        # a matrix product over the given rows in the given order, as before the codes (its
        # float32 rounding may differ from row_dots in the last bits: fusion's inputs kept)
        cosines = self.rows(positions) @ np.asarray(query, dtype=np.float32)
        return dict(zip(known, cosines.tolist(), strict=True))

    def similarity(self, query: np.ndarray, row_id: int) -> float | None:
        """Cosine of ``query`` with the vector of passage row ``row_id`` (``None``: none)."""
        at = int(np.searchsorted(self.row_ids, row_id))
        if at >= len(self.row_ids) or self.row_ids[at] != row_id or not self.alive[at]:
            return None
        return float(self.exact(query, np.array([at]))[0])

    def vectors(self, positions: np.ndarray | None = None) -> np.ndarray:
        """The float32 vectors of the rows at ``positions`` (default: every live row), read
        from the store, shape ``(m, dim)`` (tools and the judge's background)."""
        at = np.flatnonzero(self.alive) if positions is None else np.asarray(positions)
        wanted = self.row_ids[at]
        read = self.read.read if isinstance(self.read, RowCache) else self.read  # not cached
        found, vectors = read(wanted)
        if not np.array_equal(found, wanted):
            raise StaleSnapshot
        return vectors

    @cached_property
    def table(self) -> VectorTable:
        """The live rows with their float32 vectors read from the store, in row id order
        (tools only: 4 x dim bytes a row; searches read the codes)."""
        live = np.flatnonzero(self.alive)

        def column(name: str, dtype: object) -> np.ndarray:
            parts = [getattr(s.columns, name) for s in self.segments]
            return concatenate(parts, dtype)[live]

        return VectorTable(
            row_ids=self.row_ids[live],
            passage_ids=self.passage_ids[live],
            vectors=self.vectors(live),
            access=column("access", object),
            language=column("language", object),
            doc_id=column("doc_id", object),
            effective_from=column("effective_from", "U10"),
            effective_to=column("effective_to", "U10"),
        )

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Exact cosine of ``query`` with every row of :attr:`table`, shape ``(m,)`` (tools
        only; searches use :meth:`search`)."""
        return row_dots(self.table.vectors, np.asarray(query, dtype=np.float32))


_TABLE_FIELDS = tuple(VectorTable.__dataclass_fields__)
_BLOCK = 8192  # rows coded at a time by of_table


def row_dots(rows: np.ndarray, q: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``rows @ q`` (shapes ``(n, dim)``, ``(dim,)``), each row summed alike (no BLAS):
    numpy's ``einsum`` loop sums each row alike, wherever the row sits and however many rows
    the matrix has, whereas a BLAS product's float32 rounding moves with both (a public score
    changed in the last bits when a staff document was added)."""
    return np.einsum("ij,j->i", rows, q, out=out)
