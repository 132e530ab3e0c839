"""The dense route on a Qdrant collection: HNSW candidates from the quantized copy, unfiltered
first, filtered and rescored exactly from SQLite's vectors before the cut."""

from __future__ import annotations

from datetime import date
from typing import Any

import numpy as np

from kbsearch.backends.qdrant.collection import Collection, Ranking
from kbsearch.backends.qdrant.dense import (
    EVERY_POINT,
    MIN_SURVIVORS,
    RESCORE_FACTOR,
    dense_candidates,
    dense_scores,
)
from kbsearch.backends.qdrant.filters import to_qdrant
from kbsearch.filters import Filters
from kbsearch.store import Store


class Approximate(Collection):
    """Returns ``everything`` (unfiltered) or ``filtered`` (asked with a filter) in the given
    order with made-up scores, recording each call."""

    def __init__(self, everything: list[str], filtered: list[str] | None = None) -> None:
        self.everything = everything
        self.filtered = filtered if filtered is not None else everything
        self.asked: list[dict[str, Any]] = []

    def query(self, using, vector, where, limit, exact=True, hnsw_ef=None, quantized=False):  # type: ignore[no-untyped-def, override]
        self.asked.append(
            {"where": where, "limit": limit, "exact": exact, "ef": hnsw_ef, "quantized": quantized}
        )
        ids = self.filtered if where != EVERY_POINT else self.everything
        found: Ranking = [(pid, 1.0 - i / 1000) for i, pid in enumerate(ids)]
        return found[:limit]


def hnsw(where: object, limit: int) -> dict[str, Any]:
    return {"where": where, "limit": limit, "exact": False, "ef": limit, "quantized": True}


def test_hnsw_candidates_are_filtered_and_rescored_exactly_by_sqlite(store: Store, corpus) -> None:
    """One unfiltered search; SQLite keeps the candidates the filters pass (no staff passage
    for the public) and orders them by their exact cosines, not by the collection's scores."""
    ids = sorted(p.passage_id for ps in corpus.passages.values() for p in ps)
    vector = corpus.vectors[corpus.key(corpus.documents[0])][0]
    public = Filters(as_of=date(2025, 7, 1))
    depth, fetch = 2, RESCORE_FACTOR * 2
    passing = dense_scores(store, vector, ids[:fetch], public)
    assert MIN_SURVIVORS * depth <= len(passing) < fetch  # the fixture: some, not all, pass
    collection = Approximate(ids)
    found = dense_candidates(collection, store, vector, public, depth, exact=False, hnsw_ef=1)
    assert collection.asked == [hnsw(EVERY_POINT, fetch)]
    assert found == sorted(passing.items(), key=lambda kv: (-kv[1], kv[0]))[:depth]
    staff_only = {p.passage_id for p in corpus.points() if not p.public}
    assert staff_only & set(ids[:fetch]) and not staff_only & {pid for pid, _ in found}


def test_a_narrow_filter_is_searched_inside_qdrant(store: Store, corpus) -> None:
    """Too few unfiltered candidates pass (one document): the search runs again with the
    filter inside the query, and those candidates are rescored."""
    ids = sorted(p.passage_id for ps in corpus.passages.values() for p in ps)
    mine = [pid for pid in ids if pid.startswith("doc8@")]
    vector = corpus.vectors[corpus.key(corpus.documents[0])][0]
    narrow = Filters(audience="staff", doc_ids=("doc8",), as_of=date(2025, 7, 1))
    collection = Approximate([pid for pid in ids if pid not in mine], mine)
    found = dense_candidates(collection, store, vector, narrow, 3, exact=False, hnsw_ef=1)
    fetch = RESCORE_FACTOR * 3
    assert collection.asked == [hnsw(EVERY_POINT, fetch), hnsw(to_qdrant(narrow), fetch)]
    exact = dense_scores(store, vector, mine)
    assert mine and found == sorted(exact.items(), key=lambda kv: (-kv[1], kv[0]))[:3]


def test_an_exact_search_is_the_collection_s_own(store: Store) -> None:
    collection = Approximate(["b", "a"])
    vector = np.ones(32, dtype=np.float32) / np.sqrt(32)
    found = dense_candidates(collection, store, vector, Filters(), 2, exact=True, hnsw_ef=None)
    assert found == [("b", 1.0), ("a", 0.999)]
    where = to_qdrant(Filters())
    assert collection.asked == [
        {"where": where, "limit": 2, "exact": True, "ef": None, "quantized": False}
    ]
