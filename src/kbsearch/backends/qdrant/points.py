"""One Qdrant point per passage: its id, vectors and payload.

Qdrant accepts only unsigned integers and UUIDs as point ids, so a passage's point id is the
UUIDv5 (RFC 4122, section 4.3: SHA-1 of a namespace and a name) of its passage id under
:data:`POINT_NAMESPACE`; the passage id itself is kept in the payload and is what callers get
back. The same passage id always gives the same point id, so re-writing a passage overwrites
its point.

A point holds:

- ``dense``: the embedder's vector (cosine distance, the embedder's dimension);
- ``bm25``: the passage's BM25 term weights (:mod:`.sparse`), on every point (staff searches);
- ``bm25_public``: the same weights, on public points only. Qdrant computes the IDF of a
  sparse vector over the points that hold it, so public searches, which use this vector, are
  scored with statistics of public text only (the embedded backend's public FTS5 table);
- a payload with every field the filters read (:data:`PAYLOAD_INDEXES`), effective dates as
  day numbers (``date.toordinal()``; an open bound is :data:`OPEN_FROM` / :data:`OPEN_TO`, so
  the in-force rule is two integer ranges and never a null test).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date

import numpy as np

from ...records import Document, Passage
from .sparse import SparseWeights

POINT_NAMESPACE = uuid.UUID("6f1c1f52-2f6e-5a43-9d0c-6b62a9c1e0b1")  # kbsearch passages
DENSE = "dense"
SPARSE_ALL = "bm25"
SPARSE_PUBLIC = "bm25_public"
OPEN_FROM = -(2**31)  # as filters.to_mask: int32 bounds stand for open ends
OPEN_TO = 2**31 - 1

# payload field -> index kind ("keyword" or "integer"); every field a filter reads
PAYLOAD_INDEXES: Mapping[str, str] = {
    "access": "keyword",
    "language": "keyword",
    "doc_id": "keyword",
    "version": "keyword",
    "passage_id": "keyword",
    "from_day": "integer",
    "to_day": "integer",
}


def point_id(passage_id: str) -> str:
    """The point id of ``passage_id``: its UUIDv5 under :data:`POINT_NAMESPACE`, as text."""
    return str(uuid.uuid5(POINT_NAMESPACE, passage_id))


def day_number(day: date | None, open_value: int) -> int:
    """``day.toordinal()``, or ``open_value`` for an open bound (``None``)."""
    return open_value if day is None else day.toordinal()


@dataclass(frozen=True)
class PassagePoint:
    """Everything written for one passage. ``dense`` has shape ``(dim,)`` (float32) or is
    ``None`` for a lexical-only index; ``sparse`` is the passage's BM25 weights; ``payload``
    the fields of :func:`payload` (JSON values)."""

    passage_id: str
    dense: np.ndarray | None
    sparse: SparseWeights
    payload: Mapping[str, object] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """The Qdrant point id (:func:`point_id`)."""
        return point_id(self.passage_id)

    @property
    def public(self) -> bool:
        """Whether the point also carries the public sparse vector."""
        return self.payload.get("access") == "public"


def text_hash(text: str) -> str:
    """A short fingerprint of a passage's text (BLAKE2b, 8 bytes, hex): verification finds a
    passage rewritten under the same id."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def payload(document: Document, passage: Passage) -> dict[str, object]:
    """The payload of ``passage`` of ``document``: passage id, document id and version,
    access, language, day numbers of the effective bounds (:func:`day_number`), text hash."""
    return {
        "passage_id": passage.passage_id,
        "text_hash": text_hash(passage.text),
        "doc_id": document.doc_id,
        "version": document.version,
        "access": document.access,
        "language": document.language,
        "from_day": day_number(document.effective_from, OPEN_FROM),
        "to_day": day_number(document.effective_to, OPEN_TO),
    }


def passage_points(
    document: Document,
    passages: list[Passage] | tuple[Passage, ...],
    sparse: list[SparseWeights],
    vectors: np.ndarray | None,
) -> list[PassagePoint]:
    """The points of a document version, aligned with ``passages``.

    Raises:
        ValueError: ``sparse`` or ``vectors`` (shape ``(len(passages), dim)``) not aligned.
    """
    if len(sparse) != len(passages):
        raise ValueError(f"{len(sparse)} sparse vectors for {len(passages)} passages")
    if vectors is not None and len(vectors) != len(passages):
        raise ValueError(f"{len(vectors)} dense vectors for {len(passages)} passages")
    return [
        PassagePoint(
            passage_id=p.passage_id,
            dense=None if vectors is None else np.asarray(vectors[i], dtype=np.float32),
            sparse=sparse[i],
            payload=payload(document, p),
        )
        for i, p in enumerate(passages)
    ]
