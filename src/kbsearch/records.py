"""Small immutable records passed between the pipeline stages.

files --ingest--> ParsedDocument(blocks) --chunking--> Passage --store--> Hit
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any, Literal

from .filters import Filters as Filters  # re-exported: the filters have their own module

Access = str  # "public" | "staff"; more labels may come
PassageKind = Literal["text", "table"]
Route = Literal["lexical", "dense", "hybrid"]
ROUTES: tuple[str, ...] = ("lexical", "dense", "hybrid")  # kbsearch.retrieve.routes checks it
DEFAULT_AUDIENCE = "public"  # the audience of a search that names none: the restrictive one


@dataclass(frozen=True)
class Table:
    """A table as parsed: one header row and body rows, each a tuple of cell texts."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Block:
    """One piece of a parsed document, in reading order.

    ``section`` is the heading path above it (``()`` before the first heading), ``text`` a
    paragraph / list item / code block (empty for a table), ``table`` set for table blocks,
    ``page`` the 1-based PDF page, ``start``/``end`` character offsets in the source text
    when the format has them.
    """

    section: tuple[str, ...]
    text: str = ""
    table: Table | None = None
    page: int | None = None
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class ParsedDocument:
    """What a format parser returns for one document.

    ``doc_id`` is set by formats that carry ids (BEIR corpus, help cards); otherwise the
    inventory or the file name gives it. ``metadata`` holds front matter / card fields
    (string values) that may fill the document metadata when the inventory does not.
    ``warnings``: what the parser left out and says so (the indexing report shows them).
    """

    doc_id: str | None
    title: str | None
    blocks: tuple[Block, ...]
    metadata: Mapping[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Document:
    """A document version as stored. Dates are inclusive; ``None`` means open."""

    doc_id: str
    version: str
    title: str
    language: str
    access: Access
    effective_from: date | None = None
    effective_to: date | None = None
    owner: str = ""
    doc_type: str = ""
    format: str = ""
    source: str = ""
    content_hash: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields; dates as ``YYYY-MM-DD``, ``""`` for an open bound."""
        out = asdict(self)
        out["effective_from"] = str(self.effective_from or "")
        out["effective_to"] = str(self.effective_to or "")
        return out


@dataclass(frozen=True)
class Passage:
    """The search unit. ``passage_id`` is ``doc_id@vVERSION#section-slug`` (suffixed ``-2``,
    ``-3``... when a slug repeats or a section is split). ``text`` starts with the document
    title and the section heading. ``token_count`` is measured with the embedder's own
    tokenizer (passage role, prefix included) when an embedder is configured."""

    passage_id: str
    doc_id: str
    version: str
    section: str
    kind: PassageKind
    text: str
    ordinal: int
    page: int | None = None
    start: int | None = None
    end: int | None = None
    token_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (all of them)."""
        return asdict(self)


@dataclass(frozen=True)
class PassageRow:
    """A stored passage with its row id and the document fields needed to filter and display
    it (what a backend's :meth:`~kbsearch.retrieve.backend.Backend.passages` returns)."""

    row_id: int
    passage: Passage
    access: str
    language: str


@dataclass(frozen=True)
class RouteHit:
    """Rank (from 1) and score a passage had in one route."""

    rank: int
    score: float


@dataclass(frozen=True)
class Hit:
    """One search result. ``score`` is higher-is-better; its meaning depends on the route
    (BM25, cosine, or RRF). ``routes`` holds the per-route rank and score when known."""

    rank: int
    passage_id: str
    doc_id: str
    version: str
    section: str
    score: float
    text: str
    routes: Mapping[str, RouteHit] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields; ``routes`` (``{route: {rank, score}}``) only when known."""
        out: dict[str, Any] = {
            "rank": self.rank,
            "passage_id": self.passage_id,
            "doc_id": self.doc_id,
            "version": self.version,
            "section": self.section,
            "score": self.score,
            "text": self.text,
        }
        if self.routes:
            out["routes"] = {r: asdict(h) for r, h in self.routes.items()}
        return out
