"""One consistent read of everything a search snapshot needs, in one read transaction.

In WAL mode a read transaction sees one committed state from its first read to its end,
whatever other processes write meanwhile. Reading the generation counter first, then the
filter columns, the vectors and the FTS5 postings inside that one transaction means that every
part of the snapshot belongs to that generation: no "vocab and instance disagree" from two
states, and no vectors older than the generation they are cached under.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from ..errors import InvalidArgumentError
from .columns import PassageColumns
from .documents import DocumentStore
from .fts import FTS_TABLES, FtsPostings, FtsStore
from .settings import IndexSettings
from .vectors import VectorStore, VectorTable


@dataclass(frozen=True)
class FtsSnapshot:
    """One audience's FTS5 table at a generation: ``rows`` and ``tokens`` (BM25's N and
    total length, from FTS5's own record) and every posting."""

    table: str
    rows: int
    tokens: int
    postings: FtsPostings


@dataclass(frozen=True)
class IndexSnapshot:
    """Everything a search snapshot needs, read at one ``generation``.

    ``columns``: every passage's filter columns (by row id); ``vectors``: every vector with
    its columns (no rows in a lexical-only index), ``None`` when not asked for; ``fts``: audience
    (``"public"``, ``"staff"``) -> :class:`FtsSnapshot` for the audiences asked for;
    ``languages``: the languages of the stored documents; ``settings``: ``None`` before the
    first document.
    """

    generation: int
    settings: IndexSettings | None
    columns: PassageColumns
    vectors: VectorTable | None
    fts: Mapping[str, FtsSnapshot]
    languages: tuple[str, ...]


class SnapshotStore(DocumentStore, FtsStore, VectorStore):
    """Adds :meth:`read_snapshot` to the store's readers."""

    def read_snapshot(
        self,
        audiences: Sequence[str] = ("public", "staff"),
        *,
        vectors: bool = True,
        dim: int | None = None,
    ) -> IndexSnapshot:
        """Read, inside one read transaction, the generation first and then the settings,
        filter columns, vectors (when ``vectors``; ``dim`` overrides the recorded length) and
        the FTS5 postings and statistics of ``audiences``. O(passages + tokens) time and
        memory.

        Raises:
            InvalidArgumentError: an audience other than public or staff.
            StorageError: the FTS5 tables disagree with each other or with the passages.
        """
        unknown = [a for a in audiences if a not in FTS_TABLES]
        if unknown:
            raise InvalidArgumentError(
                f"unknown audience {unknown[0]!r}; choose one of {', '.join(FTS_TABLES)}"
            )
        with self.read_transaction():
            generation = self.generation()
            settings = self.read_settings()
            columns = self.filter_columns()
            length = dim if dim is not None else (settings.dim if settings else 0)
            table = self.vector_table(length) if vectors else None
            fts = {}
            for audience in dict.fromkeys(audiences):
                rows, tokens = self.fts_statistics(audience)
                fts[audience] = FtsSnapshot(
                    FTS_TABLES[audience], rows, tokens, self.fts_postings(audience)
                )
            languages = tuple(self.languages())
        return IndexSnapshot(
            generation=generation,
            settings=settings,
            columns=columns,
            vectors=table,
            fts=MappingProxyType(fts),
            languages=languages,
        )
