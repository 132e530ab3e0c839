"""Heading vectors: each passage's document title and section heading embedded apart from its
body, so that a question can match the question a FAQ entry is titled with.

A passage's heading is ``title > section`` (the section path as the splitter wrote it), or the
title alone for an untitled section, or nothing when both are empty (such a passage has no
heading vector and the heading route scores it as its lowest candidate). Headings are embedded in
the query role (E5's "query: " prefix: a title and a question are the same kind of text, the
symmetric use its authors recommend), once per distinct text, and kept in the store's embedding
cache under the role ``"heading"``, so indexing a collection again embeds only new headings and
no schema change is needed.

:class:`HeadingIndex` holds, aligned with the dense index's rows, the position of each
passage's heading vector; the cosine of a query with every passage's heading is one small
matrix product plus a gather.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..embedders import Embedder
from ..retrieve.backend import TitleCounts
from ..store import Store
from ..store.counts import own_title
from .writer import text_hash

HEADING_ROLE = "heading"


def heading_text(title: str, section: str, doc_id: str = "") -> str:
    """``"title > section"``, the non-empty one of them alone, or ``""``. A title equal to the
    document id is no title (the indexer names an untitled document after its id)."""
    title = own_title(title, doc_id)
    return " > ".join(part for part in (title, section.strip()) if part)


class _Row(NamedTuple):
    row_id: int
    passage_id: str
    access: str
    title: str  # the document's own title ("" when it has none)
    heading: str


def _heading_rows(store: Store) -> list[_Row]:
    """Every passage's row id, id, access, own title and heading, ordered by row id."""
    rows = store.passages.heading_rows()
    return [
        _Row(r[0], r[1], r[2], heading_text(r[3], "", r[5]), heading_text(r[3], r[4], r[5]))
        for r in rows
    ]


def passage_headings(store: Store) -> tuple[np.ndarray, list[str]]:
    """``(row_ids, headings)`` of every passage, ordered by row id (the dense index's order)."""
    rows = _heading_rows(store)
    return np.array([r.row_id for r in rows], dtype=np.int64), [r.heading for r in rows]


def title_counts(store: Store, audience: str = "staff") -> TitleCounts:
    """:class:`TitleCounts` of the passages ``audience`` may see (a public audience: public
    passages only, so staff-only documents never shape its results), from the totals each
    write keeps (:mod:`kbsearch.store.counts`): O(1), not O(passages)."""
    return TitleCounts(*store.passages.title_totals(audience))


def embed_headings(
    store: Store,
    embedder: Embedder,
    progress: Callable[[int], None] | None = None,
    public: list[bool] | None = None,
) -> int:
    """Embed the headings of the store's passages that the cache lacks; return how many.
    ``public``, when given, gets ``True`` appended when one of them is a public passage's
    (the write may change what the public sees), else ``False``.

    Raises:
        EmbeddingError: a heading exceeds the embedder's token limit.
    """
    rows = _heading_rows(store)
    texts = {text_hash(r.heading): r.heading for r in rows if r.heading}
    cached = store.vectors.cached(embedder.name, HEADING_ROLE, list(texts))
    missing = [h for h in texts if h not in cached]
    if public is not None:
        wanted = set(missing)
        public.append(any(r.access == "public" and text_hash(r.heading) in wanted for r in rows))
    for start in range(0, len(missing), 256):
        chunk = missing[start : start + 256]
        vectors = embedder.encode_queries([texts[h] for h in chunk])
        store.vectors.cache(embedder.name, HEADING_ROLE, dict(zip(chunk, vectors, strict=True)))
        if progress:
            progress(len(chunk))
    return len(missing)


@dataclass
class HeadingIndex:
    """Heading vectors (``(h, dim)`` float32) and, per passage row, the index of its heading
    vector or -1 (``(n,)`` int64), in the order of ``row_ids`` (``passage_ids`` aligned)."""

    row_ids: np.ndarray
    vectors: np.ndarray
    which: np.ndarray
    generation: int
    passage_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    _position: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._position = {str(pid): i for i, pid in enumerate(self.passage_ids)}

    @classmethod
    def load(cls, store: Store, embedder_name: str, dim: int) -> HeadingIndex:
        """Read the cached heading vectors of every passage (none embedded: all -1). Call it
        inside one read transaction so that the rows and the generation agree."""
        rows = _heading_rows(store)
        hashes = [text_hash(r.heading) if r.heading else "" for r in rows]
        cached = store.vectors.cached(embedder_name, HEADING_ROLE, [h for h in hashes if h])
        order = list(cached)
        position = {h: i for i, h in enumerate(order)}
        blob = b"".join(cached[h] for h in order)
        vectors = np.frombuffer(blob, dtype=np.float32).reshape(len(order), dim)
        which = np.array([position.get(h, -1) for h in hashes], dtype=np.int64)
        row_ids = np.array([r.row_id for r in rows], dtype=np.int64)
        passage_ids = np.array([r.passage_id for r in rows], dtype=object)
        return cls(row_ids, vectors, which, store.database.generation(), passage_ids)

    @property
    def empty(self) -> bool:
        return not bool((self.which >= 0).any())

    def scores(self, query: np.ndarray, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """Cosine of ``query`` with the heading of each passage at positions ``rows`` (NaN for a
        passage without a heading vector), shape ``(len(rows),)``."""
        which = self.which[np.asarray(rows, dtype=np.int64)]
        out = np.full(len(which), np.nan, dtype=np.float64)
        has = which >= 0
        if has.any():
            out[has] = self.vectors[which[has]] @ np.asarray(query, dtype=np.float32)
        return out

    def scores_of(self, query: np.ndarray, passage_ids: Sequence[str]) -> dict[str, float]:
        """``{passage_id: cosine}`` for the given passages that have a heading vector."""
        known = [pid for pid in passage_ids if pid in self._position]
        values = self.scores(query, [self._position[pid] for pid in known])
        # plain floats (.tolist()): np.isnan on each numpy scalar cost ~0.1 ms a search
        return {pid: v for pid, v in zip(known, values.tolist(), strict=True) if v == v}


def heading_scores_of(
    store: Store, embedder_name: str, query: np.ndarray, passage_ids: Sequence[str]
) -> dict[str, float]:
    """``{passage_id: cosine}`` of ``query`` with the heading vectors of the given passages
    that have one, read for those passages only (as :meth:`HeadingIndex.scores_of` scores
    them, without loading every passage's heading)."""
    fields = store.passages.heading_fields(passage_ids)
    hashes = {
        pid: text_hash(heading)
        for pid, (title, section, doc_id) in fields.items()
        if (heading := heading_text(title, section, doc_id))
    }
    cached = store.vectors.cached(embedder_name, HEADING_ROLE, list(hashes.values()))
    known = [pid for pid in passage_ids if pid in hashes and hashes[pid] in cached]
    if not known:
        return {}
    blob = b"".join(cached[hashes[pid]] for pid in known)
    vectors = np.frombuffer(blob, dtype=np.float32).reshape(len(known), -1)
    values = vectors @ np.asarray(query, dtype=np.float32)
    return dict(zip(known, values.tolist(), strict=True))
