"""What a Qdrant collection should hold, read from SQLite (the system of record).

:func:`expected_passages` lists every passage as its point should be (what
:func:`.mirror.verify` compares the collection with); :func:`points_of` builds the points of
given passages (what :func:`.mirror.sync` writes again): bodies re-analysed with the index's
analyzer, vectors read from the index, by key.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...records import Passage
from ...store import Store
from ...text.analysis import Analyzer
from .mirror import ExpectedPassage
from .points import PassagePoint, passage_points, text_hash
from .sparse import SparseWeights


def expected_passages(store: Store) -> list[ExpectedPassage]:
    """Every passage SQLite holds, as its point should be."""
    return [
        ExpectedPassage(
            p.passage_id,
            d.document.doc_id,
            d.document.version,
            d.document.access,
            text_hash(p.text),
        )
        for d in store.documents.all()
        for p in store.passages.in_document(d.row_id)
    ]


def points_of(store: Store, passage_ids: Sequence[str], dim: int | None) -> list[PassagePoint]:
    """The points SQLite gives for ``passage_ids`` (bodies re-analysed with the index's
    analyzer; ``dim``-dimensional vectors read from the index, none when ``dim`` is
    ``None``), grouped by document version. Reads those passages, their documents and their
    vectors by key: O(the passages named), never a whole table."""
    settings = store.database.index_settings()
    analyzer = (
        Analyzer(settings.analyzer, settings.heading_weight)
        if settings is not None
        else Analyzer("stem")
    )
    rows = store.passages.rows(passage_ids)
    by_version: dict[tuple[str, str], list[Passage]] = {}
    for row in sorted(rows.values(), key=lambda r: r.row_id):
        p = row.passage
        by_version.setdefault((p.doc_id, p.version), []).append(p)
    documents = store.documents.of(by_version)
    vectors = store.vectors.passage_vectors(list(rows)) if dim else {}
    out: list[PassagePoint] = []
    for key, mine in sorted(by_version.items()):
        document = documents[key]
        mine.sort(key=lambda p: p.ordinal)
        bodies = [analyzer.body(p.text, document.language) for p in mine]
        sparse = [SparseWeights.from_body(b) for b in bodies]
        block = np.stack([vectors[p.passage_id] for p in mine]) if dim else None
        out += passage_points(document, mine, sparse, block)
    return out
