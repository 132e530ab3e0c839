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
from dataclasses import dataclass

import numpy as np

from .embedders import Embedder
from .indexing import text_hash
from .store import Store

HEADING_ROLE = "heading"


def heading_text(title: str, section: str, doc_id: str = "") -> str:
    """``"title > section"``, the non-empty one of them alone, or ``""``. A title equal to the
    document id is no title (the indexer names an untitled document after its id)."""
    title = "" if title.strip() == doc_id.strip() else title.strip()
    return " > ".join(part for part in (title, section.strip()) if part)


def passage_headings(store: Store) -> tuple[np.ndarray, list[str]]:
    """``(row_ids, headings)`` of every passage, ordered by row id (the dense index's order)."""
    rows = store.connection.execute(
        "SELECT p.id, d.title, p.section, p.doc_id FROM passages p"
        " JOIN documents d ON d.id = p.document ORDER BY p.id"
    ).fetchall()
    return np.array([r[0] for r in rows], dtype=np.int64), [
        heading_text(r[1], r[2], r[3]) for r in rows
    ]


def embed_headings(
    store: Store, embedder: Embedder, progress: Callable[[int], None] | None = None
) -> int:
    """Embed the headings of the store's passages that the cache lacks; return how many.

    Raises:
        EmbeddingError: a heading exceeds the embedder's token limit.
    """
    _, headings = passage_headings(store)
    texts = {text_hash(h): h for h in headings if h}
    cached = store.cached_vectors(embedder.name, HEADING_ROLE, list(texts))
    missing = [h for h in texts if h not in cached]
    for start in range(0, len(missing), 256):
        chunk = missing[start : start + 256]
        vectors = embedder.encode_queries([texts[h] for h in chunk])
        store.cache_vectors(embedder.name, HEADING_ROLE, dict(zip(chunk, vectors, strict=True)))
        if progress:
            progress(len(chunk))
    return len(missing)


@dataclass
class HeadingIndex:
    """Heading vectors (``(h, dim)`` float32) and, per passage row, the index of its heading
    vector or -1 (``(n,)`` int64), in the order of ``row_ids``."""

    row_ids: np.ndarray
    vectors: np.ndarray
    which: np.ndarray
    generation: int

    @classmethod
    def load(cls, store: Store, embedder_name: str, dim: int) -> HeadingIndex:
        """Read the cached heading vectors of every passage (none embedded: all -1)."""
        row_ids, headings = passage_headings(store)
        hashes = [text_hash(h) if h else "" for h in headings]
        cached = store.cached_vectors(embedder_name, HEADING_ROLE, [h for h in hashes if h])
        order = list(cached)
        position = {h: i for i, h in enumerate(order)}
        blob = b"".join(cached[h] for h in order)
        vectors = np.frombuffer(blob, dtype=np.float32).reshape(len(order), dim)
        which = np.array([position.get(h, -1) for h in hashes], dtype=np.int64)
        return cls(row_ids, vectors, which, store.generation())

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
