"""The seam between the search pipeline and the index: a small protocol.

The pipeline (:mod:`kbsearch.pipeline.run`) and its routes see the index only through
:class:`Backend`. The embedded SQLite file (:mod:`kbsearch.backends.sqlite`) is the first
implementation; another (Qdrant) implements the same methods and must give the same results
(congruence tests run the same calls on each). Every method applies the filters *before* its
top ``depth``, and a public audience's statistics (N, document frequencies, average length,
languages) come from public passages only.

Scores are higher-is-better: BM25 (FTS5's formula, :mod:`kbsearch.retrieve.lexical.bm25`) for
the lexical candidates, cosine for the dense ones. Ties are broken by passage id.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..filters import Filters
from ..records import Document, Passage, PassageRow
from .lexical.query_terms import LexicalStatistics

if TYPE_CHECKING:
    from ..store import VectorMoments
    from .lexical.bm25 import BM25Explanation
    from .lexical.query_terms import QueryTerms

Ranking = list[tuple[str, float]]  # (passage_id, score), best first


@dataclass(frozen=True)
class Background:
    """Mean vector ``m`` (shape ``(dim,)``) and covariance ``C`` (``(dim, dim)``, float64) of
    a collection's passage vectors, so a query's cosine over every passage has mean ``q . m``
    and variance ``q' C q`` without scanning them (population covariance, ``1/n``)."""

    generation: int
    mean: np.ndarray
    covariance: np.ndarray

    @classmethod
    def of(cls, vectors: np.ndarray, generation: int = 0) -> Background:
        """From a ``(n, dim)`` matrix; an empty one gives zeros."""
        x = np.asarray(vectors, dtype=np.float64)
        if len(x) == 0:
            dim = x.shape[1] if x.ndim == 2 else 0
            return cls(generation, np.zeros(dim), np.zeros((dim, dim)))
        mean = x.mean(axis=0)
        centred = x - mean
        return cls(generation, mean, centred.T @ centred / len(x))

    @classmethod
    def of_moments(cls, moments: VectorMoments, generation: int = 0) -> Background:
        """From the kept moments of the vectors (:class:`kbsearch.store.VectorMoments`: count,
        sum, sum of outer products; O(dim^2), no vector read): the same mean and covariance
        as :meth:`of` over those vectors, to rounding (``~1e-16``)."""
        mean, covariance = moments.mean_covariance()
        return cls(generation, mean, covariance)

    def of_query(self, query: np.ndarray) -> tuple[float, float]:
        """``(mean, std)`` of the query's cosine over the collection (``query`` normalised)."""
        q = np.asarray(query, dtype=np.float64)
        variance = float(q @ self.covariance @ q)
        return float(q @ self.mean), float(np.sqrt(max(variance, 0.0)))


@dataclass(frozen=True)
class TitleCounts:
    """How the passages an audience may see share document titles (computed by
    :func:`kbsearch.index.headings.title_counts`; the fields of learned fusion's
    ``CollectionStats``).

    ``passages``: passages; ``titled``: those whose document has a title of its own (not the
    one the indexer makes from the document id); ``unique_titled``: titled passages whose title
    heads no other passage; ``titles``: distinct titles among the titled passages.
    """

    passages: int
    titled: int
    unique_titled: int
    titles: int


class Backend(Protocol):
    """What the search pipeline needs from an index (module docstring).

    Writes replace a document version whole (its passages, lexical rows and vectors in one
    step) and bump :meth:`generation`; readers see either the old or the new version.
    """

    def generation(self) -> int:
        """A counter bumped by every write; snapshots and caches are keyed by it."""
        ...

    def write_document(
        self,
        document: Document,
        passages: Sequence[Passage],
        bodies: Sequence[str],
        vectors: np.ndarray | None,
    ) -> None:
        """Write (or replace) a document version: ``bodies`` are the analysed lexical texts
        aligned with ``passages``; ``vectors`` shape ``(len(passages), dim)`` or ``None``."""
        ...

    def delete_document(self, doc_id: str, version: str) -> None:
        """Remove a document version with its passages, lexical rows and vectors."""
        ...

    def languages(self, audience: str) -> list[str]:
        """The languages of the passages ``audience`` may see, sorted (a language filter
        must name one of them)."""
        ...

    def passage_languages(self, passage_ids: Sequence[str], audience: str) -> dict[str, str]:
        """``{passage_id: its document's language}`` for the given passages ``audience`` may
        see (others are left out)."""
        ...

    def lexical_statistics(self, audience: str) -> LexicalStatistics:
        """The statistics of the lexical index ``audience`` searches."""
        ...

    def lexical_candidates(self, terms: QueryTerms, filters: Filters, depth: int) -> Ranking:
        """Top ``depth`` by BM25 for prepared terms: the kept terms' matches, then (while
        fewer than ``depth``) the passages holding only clamped terms."""
        ...

    def dense_candidates(self, vector: np.ndarray, filters: Filters, depth: int) -> Ranking:
        """Top ``depth`` by cosine with ``vector`` (shape ``(dim,)``, L2-normalised)."""
        ...

    def passages(
        self, passage_ids: Iterable[str], filters: Filters | None = None
    ) -> dict[str, PassageRow]:
        """The passages among ``passage_ids`` that pass ``filters`` (all when ``None``)."""
        ...

    def explain_lexical(self, terms: QueryTerms, row: PassageRow, audience: str) -> BM25Explanation:
        """One passage's BM25 score term by term (adds up to its lexical score)."""
        ...

    def dense_similarity(self, vector: np.ndarray, row: PassageRow) -> float | None:
        """Cosine of ``vector`` with the passage's vector (``None`` when it has none)."""
        ...

    # Scoring given passages (score fusion, :mod:`kbsearch.fuse.methods`): each
    # returns ``{passage_id: score}`` for the given passages the route can score; a passage in
    # the route's own candidate list gets the same score as there.

    def lexical_scores(
        self, terms: QueryTerms, audience: str, passage_ids: Sequence[str]
    ) -> dict[str, float]:
        """BM25 of each passage as :meth:`lexical_candidates` scores it: its kept terms', or
        for a passage holding none of them its clamped terms'; 0 when it holds no query term.
        Passages outside the audience's lexical index are left out.

        Raises:
            InvalidArgumentError: this backend cannot score given passages.
        """
        ...

    def dense_scores(self, vector: np.ndarray, passage_ids: Sequence[str]) -> dict[str, float]:
        """Cosine of ``vector`` (shape ``(dim,)``, L2-normalised) with each passage's vector;
        passages without a vector are left out."""
        ...

    def heading_scores(self, vector: np.ndarray, passage_ids: Sequence[str]) -> dict[str, float]:
        """Cosine of ``vector`` with each passage's heading vector (:mod:`kbsearch.index.headings`);
        passages without one (no heading, or an index built before heading vectors) are left
        out."""
        ...

    def title_counts(self, audience: str) -> TitleCounts:
        """How the passages ``audience`` may see share document titles (once per
        generation)."""
        ...

    # What the judge and the presenter read (kbsearch.judge.evidence, kbsearch.present.sources):
    # collection statistics and given passages or documents, never a whole table per search.

    def term_presence(
        self, words: Sequence[Sequence[str]], row: PassageRow, audience: str
    ) -> tuple[bool, ...]:
        """Whether the passage's row in ``audience``'s lexical index holds each word (any of
        its terms, as the index spells them); all ``False`` for a passage outside it."""
        ...

    def background(self, audience: str) -> Background:
        """The cosine background of the vectors of the passages ``audience`` may see (the
        public's: public passages only), once per generation.

        Raises:
            NoVectorsError: the index has no vectors.
        """
        ...

    def documents(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Document]:
        """``{(doc_id, version): document}`` of the stored documents among ``keys``."""
        ...

    def public_folders(self) -> list[str]:
        """The folders of the public documents read from files (URLs left out), sorted, once
        each (:func:`kbsearch.present.sources.public_root` finds their common folder)."""
        ...
