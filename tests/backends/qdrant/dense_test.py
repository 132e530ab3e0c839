"""The dense route on a Qdrant collection: HNSW candidates from the quantized copy, unfiltered
first, filtered and rescored exactly from SQLite's vectors before the cut."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import date
from typing import Any

import numpy as np
import pytest

from kbsearch.backends.qdrant.collection import TIE_MARGIN, Collection, Ranking, Search
from kbsearch.backends.qdrant.dense import (
    EVERY_POINT,
    MIN_SURVIVORS,
    RESCORE_FACTOR,
    dense_candidates,
    dense_scores,
)
from kbsearch.backends.qdrant.filters import to_qdrant
from kbsearch.backends.qdrant.points import point_id
from kbsearch.filters import Filters
from kbsearch.store import Store


class Approximate(Collection):
    """Returns ``everything`` (unfiltered) or ``filtered`` (asked with a filter) in the given
    order with made-up scores, recording each search and each payload read."""

    def __init__(self, everything: list[str], filtered: list[str] | None = None) -> None:
        self.everything = everything
        self.filtered = filtered if filtered is not None else everything
        self.asked: list[dict[str, Any]] = []
        self.named: list[str] = []  # point ids whose passage ids were read from the payload

    def _search(self, search: Search) -> Ranking:
        self.asked.append(
            {
                "where": search.where,
                "limit": search.fetch,
                "exact": search.exact,
                "ef": search.hnsw_ef,
                "quantized": search.quantized,
                "payload": search.payload,
            }
        )
        ids = self.filtered if search.where != EVERY_POINT else self.everything
        found = [(p if search.payload else point_id(p), 1.0 - i / 1000) for i, p in enumerate(ids)]
        return found[: search.fetch]

    def passage_ids_of(self, point_ids: Sequence[str]) -> dict[str, str]:
        self.named += point_ids
        by_point = {point_id(p): p for p in [*self.everything, *self.filtered]}
        return {p: by_point[p] for p in point_ids if p in by_point}


def hnsw(where: object, limit: int) -> dict[str, Any]:
    return {
        "where": where,
        "limit": limit,
        "exact": False,
        "ef": limit,
        "quantized": True,
        "payload": False,
    }


def record(store: Store, passage_ids: list[str]) -> None:
    rows = store.passages.rows(passage_ids)
    store.point_ids.record((uuid.UUID(point_id(p)).bytes, r.row_id) for p, r in rows.items())


@pytest.mark.parametrize("mapped", ["none", "half", "all"])
def test_hnsw_candidates_are_filtered_and_rescored_exactly_by_sqlite(
    store: Store, corpus, mapped: str
) -> None:
    """One unfiltered search for point ids; SQLite names their passages (Qdrant's payload
    only for those it does not), keeps those the filters pass (no staff passage for the
    public) and orders them by their exact cosines, not by the collection's scores."""
    ids = sorted(p.passage_id for ps in corpus.passages.values() for p in ps)
    vector = corpus.vectors[corpus.key(corpus.documents[0])][0]
    public = Filters(as_of=date(2025, 7, 1))
    depth, fetch = 2, RESCORE_FACTOR * 2
    passing = dense_scores(store, vector, ids[:fetch], public)
    assert MIN_SURVIVORS * depth <= len(passing) < fetch  # the fixture: some, not all, pass
    known = {"none": [], "half": ids[: fetch // 2], "all": ids}[mapped]
    record(store, known)
    collection = Approximate(ids)
    found = dense_candidates(collection, store, vector, public, depth, exact=False, hnsw_ef=1)
    assert collection.asked == [hnsw(EVERY_POINT, fetch)]
    assert collection.named == [point_id(p) for p in ids[:fetch] if p not in known]
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
        {
            "where": where,
            "limit": 2 + TIE_MARGIN,
            "exact": True,
            "ef": None,
            "quantized": False,
            "payload": True,
        }
    ]
