"""Exact dense top-k equals a brute-force numpy reference, with filters."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pytest

from kbsearch.records import Document, Filters, Passage
from kbsearch.retrieve import dense
from kbsearch.retrieve.dense import DenseIndex
from kbsearch.store import Store


def build(path: Path, n: int = 300, dim: int = 16, seed: int = 7) -> tuple[Store, np.ndarray]:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store = Store(path, create=True)
    for i in range(n):
        doc = Document(
            doc_id=f"d{i % 50}",
            version=str(i),
            title="t",
            language="fr" if i % 3 == 0 else "en",
            access="staff" if i % 4 == 0 else "public",
            effective_from=date(2026, 1, 1) if i % 5 == 0 else None,
            effective_to=date(2026, 6, 30) if i % 7 == 0 else None,
        )
        p = Passage(f"p{i:04d}", doc.doc_id, doc.version, "", "text", f"text {i}", 0)
        store.documents.write(doc, [p], [p.text], vectors[i : i + 1])
    return store, vectors


def reference(vectors: np.ndarray, q: np.ndarray, keep: list[bool], k: int) -> list[str]:
    scores = vectors @ q
    order = sorted(
        (i for i in range(len(keep)) if keep[i]), key=lambda i: (-scores[i], f"p{i:04d}")
    )
    return [f"p{i:04d}" for i in order[:k]]


def test_dense_equals_brute_force_with_filters(tmp_path: Path) -> None:
    store, vectors = build(tmp_path / "kb.db")
    index = DenseIndex.load(store, 16)
    rng = np.random.default_rng(1)
    day = date(2026, 3, 1)
    cases = [
        (Filters(audience="staff", as_of=day), lambda i: True),
        (Filters(audience="public", as_of=day), lambda i: i % 4 != 0),
        (Filters(audience="staff", as_of=date(2025, 1, 1)), lambda i: i % 5 != 0),
        (Filters(audience="staff", as_of=date(2026, 12, 1)), lambda i: i % 7 != 0),
        (Filters(audience="public", as_of=day, language="fr"), lambda i: i % 3 == 0 and i % 4),
        (Filters(audience="staff", as_of=day, doc_ids=("d1", "d2")), lambda i: i % 50 in (1, 2)),
    ]
    for filters, rule in cases:
        for _ in range(5):
            q = rng.normal(size=16).astype(np.float32)
            q /= np.linalg.norm(q)
            keep = [bool(rule(i)) for i in range(len(vectors))]
            got = [pid for pid, _ in index.search(q, filters, 10)]
            assert got == reference(vectors, q, keep, 10)


def test_ties_broken_by_passage_id(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.db", create=True)
    v = np.ones((1, 4), dtype=np.float32) / 2
    for pid in ["p3", "p1", "p2"]:
        doc = Document(doc_id=pid, version="1", title="t", language="en", access="public")
        store.documents.write(doc, [Passage(pid, pid, "1", "", "text", "x", 0)], ["x"], v)
    index = DenseIndex.load(store, 4)
    assert [p for p, _ in index.search(v[0], Filters(), 2)] == ["p1", "p2"]


def test_empty_index_returns_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.db", create=True)
    index = DenseIndex.load(store, 8)
    assert index.search(np.ones(8, dtype=np.float32), Filters(), 5) == []


def _store(path: Path, public: np.ndarray, staff: np.ndarray, every: int) -> Store:
    """The ``public`` vectors as passages ``pub{i}``, with a staff passage after every
    ``every`` of them (``staff`` rows, the rest at the start) when ``every`` > 0."""
    store = Store(path, create=True)
    staff_rows = iter(staff)

    def write(pid: str, access: str, vector: np.ndarray) -> None:
        doc = Document(doc_id=pid, version="1", title="t", language="en", access=access)
        p = Passage(f"{pid}@v1#s", pid, "1", "", "text", "text", 0)
        store.documents.write(doc, [p], [p.text], vector[None, :])

    for i, vector in enumerate(public):
        if every and i % every == 0:
            write(f"staff{i}", "staff", next(staff_rows))
        write(f"pub{i}", "public", vector)
    for j, vector in enumerate(staff_rows):
        write(f"staff-end{j}", "staff", vector)
    return store


@pytest.mark.parametrize("parallel_rows", [50_000, 10], ids=["one-thread", "threads"])
def test_public_scores_do_not_depend_on_staff_rows_bit_for_bit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parallel_rows: int
) -> None:
    """float32 BLAS products change in the last bits with the matrix's row count and a row's
    position in it: a public score moved (by up to 5.6e-7 in the confidence) when a staff
    document was added. Every score is now a function of its own row and the query only."""
    monkeypatch.setattr(dense, "PARALLEL_ROWS", parallel_rows)
    monkeypatch.setenv("KBSEARCH_THREADS", "3")
    rng = np.random.default_rng(3)
    dim = 384
    unit = lambda a: (a / np.linalg.norm(a, axis=-1, keepdims=True)).astype(np.float32)  # noqa: E731
    public, staff = unit(rng.normal(size=(13, dim))), unit(rng.normal(size=(57, dim)))
    alone = DenseIndex.load(_store(tmp_path / "a.db", public, staff[:0], 0), dim)
    mixed = DenseIndex.load(_store(tmp_path / "b.db", public, staff, 3), dim)
    assert len(mixed.row_ids) == 70
    for query in unit(rng.normal(size=(20, dim))):
        want = alone.search(query, Filters(audience="public"), 13)
        got = mixed.search(query, Filters(audience="public"), 13)
        assert got == want  # ids and float scores, bit for bit
        for pid, score in want:
            row = int(mixed.row_ids[mixed.position[pid]])
            assert mixed.similarity(query, row) == score


def test_rescoring_depth_rule() -> None:
    assert dense.rescoring_depth(1) == dense.RESCORE_MIN == 40
    assert dense.rescoring_depth(10) == 40
    assert dense.rescoring_depth(50) == 4 * 50 == dense.RESCORE_FACTOR * 50


def _near_duplicates(path: Path, n: int = 400, dim: int = 64) -> tuple[Store, np.ndarray]:
    """Rows a hair apart (far below an int8 step), so the codes alone rank them wrongly."""
    rng = np.random.default_rng(11)
    base = rng.normal(size=dim)
    vectors = base + rng.normal(size=(n, dim)) * 1e-3
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    store = Store(path, create=True)
    for i in range(n):
        doc = Document(doc_id=f"d{i}", version="1", title="t", language="en", access="public")
        p = Passage(f"p{i:04d}", doc.doc_id, "1", "", "text", "x", 0)
        store.documents.write(doc, [p], ["x"], vectors[i : i + 1])
    return store, vectors


@pytest.mark.parametrize("k", [1, 10])
def test_bound_step_finds_the_rows_the_depth_missed(tmp_path: Path, k: int) -> None:
    store, vectors = _near_duplicates(tmp_path / "kb.db")
    index = DenseIndex.load(store, vectors.shape[1])
    rescore, rescored = index.exact, []

    def counting(query: np.ndarray, positions: np.ndarray) -> np.ndarray:
        rescored.append(len(positions))
        return rescore(query, positions)

    index.exact = counting  # type: ignore[method-assign]
    rng = np.random.default_rng(4)
    missed_by_depth = 0
    for _ in range(10):
        q = vectors[rng.integers(len(vectors))] + rng.normal(size=vectors.shape[1]) * 1e-3
        q = (q / np.linalg.norm(q)).astype(np.float32)
        exact = np.einsum("ij,j->i", vectors, q)
        want = sorted(range(len(vectors)), key=lambda i: (-exact[i], i))[:k]
        rescored.clear()
        got = index.search(q, Filters(), k)
        assert got == [(f"p{i:04d}", float(exact[i])) for i in want]  # bit for bit
        assert rescored[0] == dense.rescoring_depth(k)
        approx = index.approximate(q)
        by_codes = set(np.argsort(-approx, kind="stable")[: dense.rescoring_depth(k)])
        missed_by_depth += not set(want) <= by_codes
    assert missed_by_depth > 0  # the depth alone was not enough here: the bound step was


def test_an_index_follows_writes_and_deletes_without_reloading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dense, "SEGMENT_MIN", 40)  # the tail merges, then a segment starts
    store, vectors = build(tmp_path / "kb.db", n=120)
    index = DenseIndex.load(store, 16)
    reads: list[int] = []
    blocks = store.vectors.table_blocks

    def spy(dim: int, after: int = -1, size: int = 8192):  # type: ignore[no-untyped-def]
        for block in blocks(dim, after, size):
            reads.append(len(block.row_ids))
            yield block

    monkeypatch.setattr(store.vectors, "table_blocks", spy)
    rng = np.random.default_rng(9)
    extra = rng.normal(size=(60, 16)).astype(np.float32)
    extra /= np.linalg.norm(extra, axis=1, keepdims=True)
    for step in range(6):
        for j in range(10 * step, 10 * step + 10):
            doc = Document(doc_id=f"n{j}", version="1", title="t", language="en", access="public")
            p = Passage(f"q{j:04d}", doc.doc_id, "1", "", "text", "x", 0)
            store.documents.write(doc, [p], ["x"], extra[j : j + 1])
        store.documents.delete("d1", str(step * 50 + 1) if step < 3 else "1")
        reads.clear()
        index = DenseIndex.load(store, 16, previous=index)
        assert sum(reads) == 10  # the new rows only
        fresh = DenseIndex.load(store, 16)
        assert len(index) == len(fresh)
        for filters in [Filters(audience="staff"), Filters(audience="public", language="en")]:
            for _ in range(3):
                q = rng.normal(size=16).astype(np.float32)
                q /= np.linalg.norm(q)
                assert index.search(q, filters, 10) == fresh.search(q, filters, 10)
    assert len(index.segments) > 2  # merged into a tail, then a new segment started
    store.documents.clear()
    reads.clear()
    assert len(DenseIndex.load(store, 16, previous=index)) == 0


def test_a_gap_in_the_log_reloads(tmp_path: Path) -> None:
    store, _ = build(tmp_path / "kb.db", n=20)
    index = DenseIndex.load(store, 16)
    with store.database.transaction() as con:  # rows deleted by a writer that did not log it
        con.execute("DELETE FROM documents WHERE doc_id = 'd3'")
        con.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
    again = DenseIndex.load(store, 16, previous=index)
    assert len(again) == 20 - 1 and "p0003" not in again.position


def test_rescored_rows_are_cached_across_generations(tmp_path: Path) -> None:
    store, vectors = build(tmp_path / "kb.db", n=60)
    index = DenseIndex.load(store, 16)
    q = vectors[5]
    first = index.search(q, Filters(audience="staff"), 5)
    statements: list[str] = []
    with store.database.tracing(statements.append):
        assert index.search(q, Filters(audience="staff"), 5) == first
    assert not any("FROM vectors" in s for s in statements)
    store.documents.delete("d7", "7")
    again = DenseIndex.load(store, 16, previous=index)
    assert again.read is index.read  # the rows cached stay right: rows never change
    with store.database.tracing(statements.append):
        assert (
            again.search(q, Filters(audience="staff"), 5)
            == [hit for hit in index.search(q, Filters(audience="staff"), 6) if hit[0] != "p0007"][
                :5
            ]
        )
