"""The settings an index was built with, as one frozen record (stored as JSON in ``meta``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

NO_EMBEDDER = "none"  # the embedder spec of a lexical-only index
# The rule kbsearch.index.chunking cuts passages by: every heading down to ``section_level``
# opens a section, tiny sub-sections join their parent, ids from the heading path. An index
# recorded without one was cut by the rule before it (sections at ``section_level`` 2 only).
PASSAGE_RULE = "headings-1"
LEGACY_PASSAGE_RULE = "sections-at-level"
DEFAULT_SECTION_LEVEL = 6
# How many times a passage's title and heading path count in its FTS5 body
# (kbsearch.text.analysis.Analyzer); chosen on the dev halves (docs/benchmarks.md, "the lexical
# route on FAQ collections"). An index recorded without one counts them once.
HEADING_WEIGHT = 3


@dataclass(frozen=True)
class IndexSettings:
    """What an index is built with. Written with its first document, read once per
    generation (:meth:`kbsearch.store.Database.index_settings`).

    ``embedder`` is ``None`` and ``embedder_spec`` is ``"none"`` for a lexical-only index;
    ``dim`` is the vector length (0 without vectors); ``passage_budget`` is in embedder
    tokens; ``default_access`` is ``None`` until an indexing run records it; ``chunking``
    names the passage rule (:data:`PASSAGE_RULE`; :data:`LEGACY_PASSAGE_RULE` for an index
    recorded before the rule had a name); ``heading_weight`` is the analyzer's
    (:data:`HEADING_WEIGHT`; 1 for an index recorded before it had one).
    """

    analyzer: str = "stem"
    section_level: int = DEFAULT_SECTION_LEVEL
    passage_budget: int = 512
    overlap: int = 1
    chunking: str = PASSAGE_RULE
    embedder: str | None = None
    embedder_spec: str = NO_EMBEDDER
    dim: int = 0
    query_prefix: str = ""
    passage_prefix: str = ""
    default_access: str | None = None
    heading_weight: int = HEADING_WEIGHT

    @property
    def has_vectors(self) -> bool:
        return self.embedder is not None and self.dim > 0

    def to_dict(self) -> dict[str, object]:
        """The stored form: the keys kbsearch has always written (no embedder keys for a
        lexical-only index, no ``default_access`` until one is recorded, no ``chunking`` for
        an index cut by the legacy rule, no ``heading_weight`` when it is 1)."""
        out: dict[str, object] = asdict(self)
        if not self.has_vectors:
            for key in ("embedder", "dim", "query_prefix", "passage_prefix"):
                del out[key]
        if self.default_access is None:
            del out["default_access"]
        if self.chunking == LEGACY_PASSAGE_RULE:  # as such an index has it stored
            del out["chunking"]
        if self.heading_weight == 1:
            del out["heading_weight"]
        return out

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> IndexSettings:
        """The record from its stored form; unknown keys are ignored, missing ones default
        (a missing ``chunking`` is :data:`LEGACY_PASSAGE_RULE`, a missing ``section_level``
        then 2, a missing ``heading_weight`` 1: what such an index was built with)."""
        known = {f.name for f in fields(cls)}
        kept = {k: v for k, v in values.items() if k in known and v is not None}
        if "chunking" not in kept:
            kept = {"section_level": 2, **kept, "chunking": LEGACY_PASSAGE_RULE}
        kept.setdefault("heading_weight", 1)
        for key in ("section_level", "passage_budget", "overlap", "dim", "heading_weight"):
            if key in kept:
                kept[key] = int(kept[key])
        return cls(**kept)
