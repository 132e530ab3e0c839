"""What a Qdrant collection should hold, read from SQLite (the system of record).

:func:`expected_passages` lists every passage as its point should be (what
:func:`.mirror.verify` compares the collection with); :func:`points_of` builds the points of
given passages (what :func:`.mirror.sync` writes again): bodies re-analysed with the index's
analyzer, vectors read from the index.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

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
    ``None``)."""
    wanted = set(passage_ids)
    settings = store.database.index_settings()
    analyzer = (
        Analyzer(settings.analyzer, settings.heading_weight)
        if settings is not None
        else Analyzer("stem")
    )
    vectors: dict[str, np.ndarray] = {}
    if dim:
        table = store.vectors.table(dim)
        vectors = {
            str(pid): table.vectors[i] for i, pid in enumerate(table.passage_ids) if pid in wanted
        }
    out: list[PassagePoint] = []
    for d in store.documents.all():
        mine = [p for p in store.passages.in_document(d.row_id) if p.passage_id in wanted]
        if not mine:
            continue
        bodies = [analyzer.body(p.text, d.document.language) for p in mine]
        sparse = [SparseWeights.from_body(b) for b in bodies]
        block = np.stack([vectors[p.passage_id] for p in mine]) if dim else None
        out += passage_points(d.document, mine, sparse, block)
    return out
