"""What the API, the search page and the MCP server do, as functions of one knowledge base and
an audience, returning JSON-ready dictionaries. Each runs inside one read transaction (see
:class:`kbsearch.service.engine.Engine`); none takes the audience from its arguments' text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ..errors import DocumentNotFoundError, InvalidArgumentError, QueryError, shown_value
from ..filters import parse_day
from ..ingest.metadata import known_language
from ..judge.verdict import decision_fields
from ..knowledge_base import DEFAULT_K, KnowledgeBase
from ..pipeline import SearchRequest
from ..records import ROUTES, Filters
from ..text.analysis import MAX_QUERY_CHARS
from .present import Catalogue, document_summary, hit_dict, passage_dict, visible_documents


@dataclass(frozen=True)
class Limits:
    """Request limits: query length in characters, hits per page, deepest offset."""

    max_query_chars: int = MAX_QUERY_CHARS  # the library's own limit, as the CLI
    max_k: int = 100
    max_offset: int = 1000
    documents_page: int = 100  # GET /documents' default page size
    max_documents_page: int = 1000


LEXICAL = "lexical"
EVERY_LANGUAGE = "to search every language"  # what leaving ``lang`` out does
BEST = ""  # a request's route when it names none: the best the index supports


def available_routes(kb: KnowledgeBase) -> tuple[str, ...]:
    """The routes ``kb`` can search: all of them, or lexical alone without vectors."""
    return ROUTES if kb.routes["dense"].available() else (LEXICAL,)


@dataclass(frozen=True)
class SearchArgs:
    """One search request: ``k`` hits from ``offset`` (0-based) in ``route`` (``BEST``: the
    best the index supports, :meth:`KnowledgeBase.best_route`); ``min_confidence``: the
    abstention stage's threshold (``None``: the model's)."""

    q: str
    k: int = DEFAULT_K
    route: str = BEST
    as_of: str | None = None
    lang: str | None = None
    doc: Sequence[str] = field(default_factory=tuple)
    offset: int = 0
    min_confidence: float | None = None


def doc_list(values: Sequence[str] | str | None) -> tuple[str, ...] | None:
    """Document ids from repeated values and comma lists; ``None`` when none is sent (an
    empty JSON list included).

    Raises:
        InvalidArgumentError: ``doc`` sent but naming no id (``doc=``, ``doc=,``, ``[""]``),
            as the CLI's ``--doc ""``: it would search every document, silently.
    """
    if isinstance(values, str):
        values = [values]
    if not values:
        return None
    ids = tuple(d.strip() for v in values for d in str(v).split(",") if d.strip())
    if not ids:
        raise InvalidArgumentError(
            "doc names no document id; leave it out to search every document, or give ids"
        )
    return ids


def make_filters(
    audience: str, as_of: str | None, lang: str | None, doc: Sequence[str] | str | None
) -> Filters:
    """Filters for ``audience`` (from the caller's key, never from the request); ``lang``
    checked as an upload's language is (:func:`~kbsearch.ingest.metadata.known_language`:
    ``fr-FR`` is ``fr``). An empty ``lang`` or ``as_of`` is refused, as the CLI's ``--lang ""``
    and ``--as-of ""`` are (``None``: every language, today).

    Raises:
        InvalidArgumentError: a malformed or impossible date, a language that is no known
            code.
    """
    return Filters(
        audience=audience,
        as_of=parse_day(as_of),
        language=None if lang is None else known_language(lang, "lang", EVERY_LANGUAGE),
        doc_ids=doc_list(doc),
    )


def check_query(q: str, limits: Limits) -> None:
    """Raises QueryError: an empty query or one over ``max_query_chars`` characters."""
    if not isinstance(q, str) or not q.strip():
        raise QueryError("the query is empty")
    if len(q) > limits.max_query_chars:
        raise QueryError(
            f"query of {len(q)} characters exceeds the limit of {limits.max_query_chars}"
        )


def check_search(args: SearchArgs, limits: Limits) -> None:
    """Raises QueryError or InvalidArgumentError: query too long, k or offset out of range."""
    check_query(args.q, limits)
    if not 1 <= args.k <= limits.max_k:
        raise InvalidArgumentError(f"k must be from 1 to {limits.max_k}, got {args.k}")
    if not 0 <= args.offset <= limits.max_offset:
        raise InvalidArgumentError(
            f"offset must be from 0 to {limits.max_offset}, got {args.offset}"
        )


def search(kb: KnowledgeBase, audience: str, args: SearchArgs, limits: Limits) -> dict[str, Any]:
    """One page of hits, as ``kbsearch search --json`` (with ``answerable``, ``confidence``
    and ``min_confidence`` from the abstention stage, all ``None`` for an index without
    vectors) plus ``offset`` and ``next_offset`` (``None`` on the last page) and each hit's
    document labels; ``route`` is the route searched (without one,
    :meth:`KnowledgeBase.best_route`).

    Raises:
        QueryError, InvalidArgumentError: see :func:`check_search` and
            :class:`~kbsearch.pipeline.request.SearchRequest` (also a ``min_confidence``
            outside [0, 1]).
    """
    check_search(args, limits)
    filters = make_filters(audience, args.as_of, args.lang, args.doc)
    route = args.route or kb.best_route()
    # one more than the page, to know whether another page follows; the stage never
    # reorders, so the hits are the plain search's
    request = SearchRequest(
        args.q,
        k=args.offset + args.k + 1,
        route=route,
        filters=filters,
        min_confidence=args.min_confidence,
    )
    assessed = kb.assess_request(request)
    hits = assessed.hits
    page = hits[args.offset : args.offset + args.k]
    catalogue = Catalogue.of(kb)
    catalogue.load((h.doc_id, h.version) for h in page)
    more = len(hits) > args.offset + args.k
    return {
        "query": args.q,
        "route": route,
        "k": args.k,
        "offset": args.offset,
        "next_offset": args.offset + args.k if more else None,
        "as_of": filters.as_of.isoformat() if isinstance(filters.as_of, date) else None,
        "language": filters.language,
        **decision_fields(assessed.decision),
        "hits": [hit_dict(h, catalogue, kb, assessed.query or args.q) for h in page],
    }


def ask(
    kb: KnowledgeBase,
    audience: str,
    q: str,
    limits: Limits,
    *,
    k: int = 5,
    as_of: str | None = None,
    lang: str | None = None,
    doc: Sequence[str] | str | None = None,
    min_confidence: float | None = None,
) -> dict[str, Any]:
    """The answer to ``q`` as ``kbsearch ask --json`` prints it (its ``verdict``: the span
    that answers and its citation, the uncertain one, or "The documents don't say" with the
    nearest ``k``).

    Raises:
        QueryError, InvalidArgumentError: as :func:`search`; also an index without vectors.
    """
    check_search(SearchArgs(q, k), limits)
    filters = make_filters(audience, as_of, lang, doc)
    return kb.ask(q, k=k, filters=filters, min_confidence=min_confidence).to_dict()


def explain(
    kb: KnowledgeBase,
    audience: str,
    q: str,
    passage_id: str,
    limits: Limits,
    *,
    as_of: str | None = None,
    lang: str | None = None,
    doc: Sequence[str] | str | None = None,
) -> dict[str, Any]:
    """Why ``passage_id`` ranks where it does for ``q`` (per-route ranks and scores, BM25
    terms, RRF parts), with the passage's labels.

    Raises:
        PassageNotFoundError: missing or hidden from this audience (and date, when one is
            given): one message.
    """
    check_query(q, limits)
    filters = make_filters(audience, as_of, lang, doc)
    out = kb.explain(q, passage_id, filters=filters).to_dict()
    passage = kb.get_passage(passage_id, audience=audience)
    out["passage"] = passage_dict(passage, Catalogue.of(kb))
    return out


def passage(kb: KnowledgeBase, audience: str, passage_id: str) -> dict[str, Any]:
    """One passage with its document's labels.

    Raises:
        PassageNotFoundError: missing or hidden from this audience (one message).
    """
    return passage_dict(kb.get_passage(passage_id, audience=audience), Catalogue.of(kb))


def documents(
    kb: KnowledgeBase,
    audience: str,
    offset: int = 0,
    limit: int | None = None,
    limits: Limits | None = None,
) -> dict[str, Any]:
    """One page of the document versions this audience may see, by doc id then version:
    ``limit`` of them (default ``limits.documents_page``) from ``offset`` (0-based), with
    ``total`` (every version the audience may see, from the kept counts: a hidden one is not
    counted), ``count`` (this page's), ``offset``, ``limit`` and ``next_offset`` (``None`` on
    the last page).

    Raises:
        InvalidArgumentError: ``limit`` outside 1..``limits.max_documents_page`` or a
            negative ``offset``.
    """
    limits = limits or Limits()
    size = limits.documents_page if limit is None else limit
    if not 1 <= size <= limits.max_documents_page:
        raise InvalidArgumentError(
            f"limit must be from 1 to {limits.max_documents_page}, got {size}"
        )
    if offset < 0:
        raise InvalidArgumentError(f"offset must be 0 or more, got {offset}")
    catalogue = Catalogue.of(kb)
    total = index_figures(kb, audience)[1]
    page = kb.store.documents.page(str(audience), offset, size) if offset < total else []
    catalogue.load((d.document.doc_id, d.document.version) for d in page)
    rows = [document_summary(d, catalogue) for d in page]
    more = offset + len(rows) < total
    return {
        "total": total,
        "count": len(rows),
        "offset": offset,
        "limit": size,
        "next_offset": offset + len(rows) if more and rows else None,
        "documents": rows,
    }


def index_figures(kb: KnowledgeBase, audience: str) -> tuple[int, int, int]:
    """``(generation, documents, passages)`` of what ``audience`` may see, for ``/metrics``:
    from the counts each write keeps (:mod:`kbsearch.store.counts`: O(languages), not
    O(documents))."""
    counts = kb.store.counts
    documents = sum(counts.keys(audience, "doc_language").values())
    passages = counts.keys(audience, "total").get("passages", 0)
    return kb.store.database.generation(), documents, passages


def document_languages(kb: KnowledgeBase, audience: str) -> list[str]:
    """The languages of the documents ``audience`` may see, sorted (the search page's
    choices; from the kept counts)."""
    return kb.store.documents.languages(audience)


def document(kb: KnowledgeBase, audience: str, doc_id: str) -> dict[str, Any]:
    """A document's visible versions, each with its metadata and passage ids.

    Raises:
        DocumentNotFoundError: no version visible to this audience (one message for missing
            and hidden).
    """
    catalogue = Catalogue.of(kb)
    versions = visible_documents(kb, audience, doc_id)
    catalogue.load((d.document.doc_id, d.document.version) for d in versions)
    if not versions:
        raise DocumentNotFoundError(f"no document {shown_value(doc_id)} for this audience")
    return {
        "doc_id": doc_id,
        "versions": [
            document_summary(d, catalogue)
            | {"passage_ids": [p.passage_id for p in kb.store.passages.in_document(d.row_id)]}
            for d in versions
        ],
    }


def delete(kb: KnowledgeBase, audience: str, doc_id: str, version: str | None) -> list[str]:
    """Remove ``doc_id`` (one version, or all) as ``audience`` sees it: :meth:`kbsearch.
    knowledge_base.KnowledgeBase.delete` (the index, its Qdrant copy, the uploaded file); the
    versions removed.

    Raises:
        DocumentNotFoundError: no such document, or none visible to ``audience`` (one message
            for missing and hidden); or no such version of a document ``audience`` sees.
        StorageError: the index or the upload store cannot be written.
        PartialWriteError: the index is written, its Qdrant copy is not.
    """
    return kb.delete(doc_id, version, audience=audience)
