"""MaxScore's top k is the exhaustive top k: same passages, same order (ties by id), the same
scores bit for bit, hidden passages never counted; checked against a brute-force sum."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kbsearch.retrieve.lexical.maxscore import Postings, Scratch, exact_scores, top_candidates
from kbsearch.retrieve.topk import top_k

ROWS = 300
# few distinct impacts, so that equal scores (ties at the cut) are common
IMPACTS = st.sampled_from([0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 0.1 + 0.2, 7.0])


def _postings(pairs: dict[int, float]) -> Postings:
    # row positions are the row ids here (a row table holding rows 0 .. ROWS - 1 in order)
    rows = np.array(sorted(pairs), dtype=np.int64)
    return Postings(rows, np.array([pairs[r] for r in rows.tolist()], dtype=np.float64), rows)


def _brute(terms: list[dict[int, float]], hidden: set[int], ids: list[str], k: int) -> list:
    scores: dict[int, float] = {}
    for row in sorted({r for t in terms for r in t} - hidden):
        total = 0.0
        for term in terms:  # query order, from 0.0
            if row in term:
                total += term[row]
        scores[row] = total
    order = sorted(scores, key=lambda r: (-scores[r], ids[r]))[:k]
    return [(ids[r], scores[r]) for r in order]


def _search(
    terms: list[dict[int, float]], hidden: set[int], ids: list[str], k: int, exhaustive: int = 0
) -> list:
    postings = [_postings(t) for t in terms]
    blocked = np.array(sorted(hidden), dtype=np.int64)

    def passes(rows: np.ndarray) -> np.ndarray:
        return ~np.isin(rows, blocked)

    rows, scores = top_candidates(postings, passes, ALL, k, SCRATCH, exhaustive)
    return top_k(rows, scores, np.array(ids, dtype=object), k)


ALL = np.arange(ROWS, dtype=np.int64)
SCRATCH = Scratch()  # reused by every search: each must leave it clean
TERM = st.dictionaries(st.integers(0, ROWS - 1), IMPACTS, max_size=ROWS)


@settings(max_examples=400, deadline=None)
@given(
    terms=st.lists(TERM, min_size=1, max_size=5),
    repeat=st.booleans(),
    hidden=st.sets(st.integers(0, ROWS - 1), max_size=250),
    k=st.integers(1, 40),
    seed=st.integers(0, 2**16),
    exhaustive=st.sampled_from([0, 10**9]),  # pruned, or every posting added
)
def test_equals_the_exhaustive_top_k(
    terms: list[dict[int, float]],
    repeat: bool,
    hidden: set[int],
    k: int,
    seed: int,
    exhaustive: int,
) -> None:
    if repeat:  # a repeated query term counts again
        terms = [*terms, terms[0]]
    ids = [f"p{i:04d}" for i in np.random.default_rng(seed).permutation(ROWS)]
    got = _search(terms, hidden, ids, k, exhaustive)
    expected = _brute(terms, hidden, ids, k)
    assert got == expected  # ids, order and scores, bit for bit


def test_ties_at_the_cut_are_decided_by_id() -> None:
    # 40 rows score 1.0 in one term; the 5 kept are the smallest ids, not the first rows
    term = {r: 1.0 for r in range(40)}
    ids = [f"id{39 - r:02d}" for r in range(40)] + [f"z{r}" for r in range(ROWS - 40)]
    got = _search([term], set(), ids, 5)
    assert got == [(f"id{i:02d}", 1.0) for i in range(5)]


def test_hidden_passages_neither_show_nor_set_the_threshold() -> None:
    # the best passages are hidden: the top k is taken among the others, all of them counted
    rare = {r: 7.0 for r in range(20)}
    common = {r: 0.5 for r in range(ROWS)}
    ids = [f"p{r:04d}" for r in range(ROWS)]
    hidden = set(range(20))
    got = _search([rare, common], hidden, ids, 3)
    assert got == [("p0020", 0.5), ("p0021", 0.5), ("p0022", 0.5)]
    assert got == _brute([rare, common], hidden, ids, 3)


def test_candidates_are_pruned_when_the_bounds_allow() -> None:
    """A rare term of large impacts and a common one of small impacts: the common term's
    passages that lack the rare term cannot reach the k-th best, and are not scored."""
    rare = {r: 5.0 + r / 100 for r in range(0, ROWS, 10)}  # 30 rows
    common = {r: 0.2 for r in range(ROWS)}
    terms = [_postings(rare), _postings(common)]
    everyone = lambda rows: np.ones(len(rows), dtype=bool)  # noqa: E731
    rows, scores = top_candidates(terms, everyone, ALL, 10, SCRATCH, exhaustive=0)
    assert len(rows) <= 30
    assert np.array_equal(scores, exact_scores(terms, rows))
    ids = [f"p{r:04d}" for r in range(ROWS)]
    assert _search([rare, common], set(), ids, 10) == _brute([rare, common], set(), ids, 10)


def test_exact_scores_add_in_query_order() -> None:
    a, b, c = (_postings({0: x, 1: x}) for x in (0.1, 0.2, 0.3))
    rows = np.array([0, 1, 5], dtype=np.int64)
    assert exact_scores([a, b, c], rows).tolist() == [0.1 + 0.2 + 0.3, 0.1 + 0.2 + 0.3, 0.0]
    assert exact_scores([c, b, a], rows).tolist()[0] == 0.3 + 0.2 + 0.1


def test_no_terms_or_no_k() -> None:
    none = np.zeros(0, dtype=np.int64)
    empty = Postings(none, np.zeros(0), none)
    everyone = lambda rows: np.ones(len(rows), dtype=bool)  # noqa: E731
    assert len(top_candidates([empty], everyone, ALL, 5, SCRATCH)[0]) == 0
    assert len(top_candidates([_postings({1: 1.0})], everyone, ALL, 0, SCRATCH)[0]) == 0
