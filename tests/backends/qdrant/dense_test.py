"""The dense route on a Qdrant collection: HNSW candidates from the quantized copy, rescored
exactly from SQLite's vectors before the cut."""

from __future__ import annotations

from typing import Any

import numpy as np

from kbsearch.backends.qdrant.collection import Collection, Ranking
from kbsearch.backends.qdrant.dense import RESCORE_FACTOR, dense_candidates, dense_scores
from kbsearch.backends.qdrant.filters import to_qdrant
from kbsearch.filters import Filters
from kbsearch.store import Store


class Approximate(Collection):
    """Returns its passages in the given order with made-up scores, recording each call."""

    def __init__(self, passage_ids: list[str]) -> None:
        self.passage_ids = passage_ids
        self.asked: list[dict[str, Any]] = []

    def query(self, using, vector, where, limit, exact=True, hnsw_ef=None, quantized=False):  # type: ignore[no-untyped-def, override]
        self.asked.append({"limit": limit, "exact": exact, "ef": hnsw_ef, "quantized": quantized})
        found: Ranking = [(pid, 1.0 - i / 1000) for i, pid in enumerate(self.passage_ids)]
        return found[:limit]


def test_hnsw_candidates_are_rescored_exactly_from_sqlite(store: Store, corpus) -> None:
    ids = sorted(p.passage_id for ps in corpus.passages.values() for p in ps)
    vector = corpus.vectors[corpus.key(corpus.documents[0])][0]
    collection = Approximate(ids)
    where = to_qdrant(Filters(audience="staff"))
    found = dense_candidates(collection, store, vector, where, 3, exact=False, hnsw_ef=8)
    fetch = RESCORE_FACTOR * 3
    assert collection.asked == [{"limit": fetch, "exact": False, "ef": fetch, "quantized": True}]
    exact = dense_scores(store, vector, ids[:fetch])  # the candidates' SQLite cosines
    best = sorted(exact.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    assert found == best  # ordered by the exact cosines, not by the collection's scores


def test_an_exact_search_is_the_collection_s_own(store: Store, corpus) -> None:
    collection = Approximate(["b", "a"])
    vector = np.ones(32, dtype=np.float32) / np.sqrt(32)
    where = to_qdrant(Filters())
    found = dense_candidates(collection, store, vector, where, 2, exact=True, hnsw_ef=None)
    assert found == [("b", 1.0), ("a", 0.999)]
    assert collection.asked == [{"limit": 2, "exact": True, "ef": None, "quantized": False}]
