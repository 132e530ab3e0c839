"""The settings an index was built with, as one frozen record (stored as JSON in ``meta``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

NO_EMBEDDER = "none"  # the embedder spec of a lexical-only index


@dataclass(frozen=True)
class IndexSettings:
    """What an index is built with. Written with its first document, read once per
    generation (:meth:`kbsearch.store.Store.index_settings`).

    ``embedder`` is ``None`` and ``embedder_spec`` is ``"none"`` for a lexical-only index;
    ``dim`` is the vector length (0 without vectors); ``passage_budget`` is in embedder
    tokens; ``default_access`` is ``None`` until an indexing run records it.
    """

    analyzer: str = "stem"
    section_level: int = 2
    passage_budget: int = 512
    overlap: int = 1
    embedder: str | None = None
    embedder_spec: str = NO_EMBEDDER
    dim: int = 0
    query_prefix: str = ""
    passage_prefix: str = ""
    default_access: str | None = None

    @property
    def has_vectors(self) -> bool:
        return self.embedder is not None and self.dim > 0

    def to_dict(self) -> dict[str, object]:
        """The stored form: the keys kbsearch has always written (no embedder keys for a
        lexical-only index, no ``default_access`` until one is recorded)."""
        out: dict[str, object] = asdict(self)
        if not self.has_vectors:
            for key in ("embedder", "dim", "query_prefix", "passage_prefix"):
                del out[key]
        if self.default_access is None:
            del out["default_access"]
        return out

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> IndexSettings:
        """The record from its stored form; unknown keys are ignored, missing ones default."""
        known = {f.name for f in fields(cls)}
        kept = {k: v for k, v in values.items() if k in known and v is not None}
        for key in ("section_level", "passage_budget", "overlap", "dim"):
            if key in kept:
                kept[key] = int(kept[key])
        return cls(**kept)
