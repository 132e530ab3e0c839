"""What an indexing run is given and what it gives back: the index :class:`Settings` and the
:class:`IndexReport` (the indexer and its writer both read them)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..store.settings import DEFAULT_SECTION_LEVEL, HEADING_WEIGHT, PASSAGE_RULE

DEFAULT_ACCESS = "staff"


@dataclass
class IndexReport:
    """Counts of one indexing run, the failures and warnings with their reasons, the
    unsupported files skipped, and the documents whose access label changed
    (``(doc_id@vVERSION, old, new)``). ``default_access_label`` is the label given to
    documents that have none (``default_access`` counts them)."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    default_access: int = 0
    passages: int = 0
    embedded: int = 0
    headings_embedded: int = 0  # distinct headings embedded (kbsearch.index.headings)
    kept_previous_index: bool = False  # a re-embed that did not complete changed nothing
    warnings: list[tuple[str, str]] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    access_changed: list[tuple[str, str, str]] = field(default_factory=list)
    default_access_label: str = DEFAULT_ACCESS

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_dict(self) -> dict[str, object]:
        """JSON-ready counts; ``failed`` as ``[{source, reason}]``."""
        out = asdict(self)
        out["failed"] = [{"source": s, "reason": r} for s, r in self.failed]
        out["warnings"] = [{"source": s, "reason": r} for s, r in self.warnings]
        out["access_changed"] = [
            {"document": d, "from": a, "to": b} for d, a, b in self.access_changed
        ]
        return out


@dataclass(frozen=True)
class Settings:
    """What an index is built with; recorded in its meta table."""

    analyzer: str = "stem"
    section_level: int = DEFAULT_SECTION_LEVEL
    passage_budget: int = 512
    overlap: int = 1
    chunking: str = PASSAGE_RULE
    heading_weight: int = HEADING_WEIGHT
