"""The collection statistics a Qdrant search node reads instead of whole tables.

The embedded backend answers the judge's and the presenter's questions from its in-memory
indexes; a Qdrant search node holds no copy of the collection, so what needs every passage is
computed once, by the process that brings the Qdrant copy level with SQLite
(:meth:`.backend.QdrantBackend.sync`, after every indexing run), and kept in the SQLite file's
``meta`` table under :data:`STATISTICS_KEY` with the generation it describes:

- per audience: the languages of its passages and of its documents, its
  :class:`~kbsearch.fuse.methods.TitleCounts`, and the cosine
  :class:`~kbsearch.retrieve.backend.Background` of its vectors (mean and covariance,
  ``dim + dim^2`` float64: 1.2 MB at 384 dimensions, stored as base64);
- the folders of the public documents' files (their common folder is what a source is shown
  relative to, :mod:`kbsearch.present.sources`).

O(vocabulary)-sized statistics (document frequencies, N, average length) are not copied:
FTS5 keeps them (``%_vocab``, ``%_data``), read one term at a time. A file written since (by a
process that did not sync) has statistics of another generation: they are then computed in
memory from the tables (correct, and as costly as the embedded backend's first search).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ...filters import AUDIENCES
from ...index.headings import title_counts
from ...retrieve.backend import Background, TitleCounts
from ...store import Store

STATISTICS_KEY = "qdrant_statistics"


@dataclass(frozen=True)
class AudienceStatistics:
    """One audience's statistics (module docstring)."""

    passage_languages: tuple[str, ...]
    document_languages: tuple[str, ...]
    titles: TitleCounts
    background: Background


@dataclass(frozen=True)
class CollectionStatistics:
    """The statistics of one ``generation`` (module docstring): ``audiences`` by name,
    ``folders`` of the public documents' files."""

    generation: int
    audiences: Mapping[str, AudienceStatistics]
    folders: tuple[str, ...]

    @classmethod
    def compute(cls, store: Store, dim: int) -> CollectionStatistics:
        """Read the kept counts and vector moments (inside one read transaction), with
        ``dim``-dimensional vectors (0: none), and each audience's title counts. No vector is
        read: O(dim^2) for the backgrounds."""
        with store.database.read_transaction():
            generation = store.database.generation()
            backgrounds = _backgrounds(store, dim, generation)
            audiences = {
                audience: AudienceStatistics(
                    tuple(store.passages.languages(audience)),
                    tuple(store.documents.languages(audience)),
                    title_counts(store, audience),
                    backgrounds[audience],
                )
                for audience in AUDIENCES
            }
            folders = tuple(store.documents.public_folders())
        return cls(generation, audiences, folders)

    def to_json(self) -> str:
        def audience(a: AudienceStatistics) -> dict[str, object]:
            t, b = a.titles, a.background
            return {
                "passage_languages": list(a.passage_languages),
                "document_languages": list(a.document_languages),
                "titles": [t.passages, t.titled, t.unique_titled, t.titles],
                "dim": len(b.mean),
                "mean": _encode(b.mean),
                "covariance": _encode(b.covariance),
            }

        return json.dumps(
            {
                "generation": self.generation,
                "audiences": {name: audience(a) for name, a in self.audiences.items()},
                "folders": list(self.folders),
            }
        )

    @classmethod
    def from_json(cls, text: str) -> CollectionStatistics:
        raw = json.loads(text)
        generation = int(raw["generation"])

        def audience(a: dict[str, object]) -> AudienceStatistics:
            dim = int(str(a["dim"]))
            titles = [int(x) for x in a["titles"]]  # type: ignore[attr-defined]
            mean = _decode(str(a["mean"])).reshape(dim)
            covariance = _decode(str(a["covariance"])).reshape(dim, dim)
            return AudienceStatistics(
                tuple(a["passage_languages"]),  # type: ignore[arg-type]
                tuple(a["document_languages"]),  # type: ignore[arg-type]
                TitleCounts(*titles),
                Background(generation, mean, covariance),
            )

        return cls(
            generation,
            {name: audience(a) for name, a in raw["audiences"].items()},
            tuple(raw["folders"]),
        )

    def save(self, store: Store) -> None:
        """Record them in ``store``'s meta table (no generation bump: they describe it)."""
        with store.database.transaction():
            store.database.set_meta(STATISTICS_KEY, self.to_json())

    @classmethod
    def recorded(cls, store: Store) -> CollectionStatistics | None:
        """The statistics the file records (``None``: none, or unreadable)."""
        text = store.database.get_meta(STATISTICS_KEY)
        if not text:
            return None
        try:
            return cls.from_json(text)
        except (ValueError, KeyError, TypeError):
            return None


def _encode(values: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(values, dtype="<f8").tobytes()).decode("ascii")


def _decode(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f8").copy()


def _backgrounds(store: Store, dim: int, generation: int) -> dict[str, Background]:
    """Each audience's :class:`Background`, from the vector moments every write keeps
    (:mod:`kbsearch.store.moments`: O(dim^2), no vector read)."""
    return {
        audience: Background.of_moments(store.moments.of(audience, max(dim, 0)), generation)
        for audience in AUDIENCES
    }


@dataclass(frozen=True)
class FtsStatistics:
    """:class:`~kbsearch.retrieve.backend.LexicalStatistics` of one audience's FTS5 table, read
    from SQLite a term at a time (``%_vocab``; cached per generation by the store) instead of
    from an in-memory copy of its postings."""

    store: Store
    audience: str
    passages: int
    languages: list[str]

    def frequency(self, term: str) -> int:
        return self.store.fts.document_frequency(term, self.audience)
