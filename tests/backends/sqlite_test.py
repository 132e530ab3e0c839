"""The SQLite backend under concurrent use: searches from many threads share one snapshot per
generation while another connection writes; no search fails or sees a mix of two versions."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np

import kbsearch
from kbsearch.filters import Filters
from kbsearch.records import Document, Passage
from kbsearch.store import Store

TEXTS = {
    "old": ["kettle notice stop using the kettle", "kettle care descale monthly"],
    "new": ["teapot notice kettle recall", "kettle care descale weekly kettle"],
}


def _write(store: Store, state: str) -> None:
    doc = Document(doc_id="K", version="1", title="K", language="en", access="public")
    texts = TEXTS[state]
    passages = [Passage(f"K#{i}", "K", "1", "", "text", t, i) for i, t in enumerate(texts)]
    sign = 1.0 if state == "old" else -1.0
    vectors = np.array([[sign, 0.0, 0.0, 0.0], [0.0, sign, 0.0, 0.0]], dtype=np.float32)
    store.documents.write(doc, passages, texts, vectors)


def _expected(path: Path) -> dict[str, list[tuple[str, float]]]:
    out = {}
    for state in TEXTS:
        copy = path.parent / f"{state}.db"
        store = Store(copy, create=True)
        store.database.set_settings({"analyzer": "plain"})
        _write(store, state)
        store.close()
        with kbsearch.open_kb(copy, embedder="none") as kb:
            out[state] = kb.routes["lexical"].candidates("kettle care", Filters(), 5)
    return out


def test_searches_from_threads_while_another_connection_writes(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    expected = _expected(path)
    store = Store(path, create=True)
    store.database.set_settings({"analyzer": "plain"})
    _write(store, "old")
    kb = kbsearch.open_kb(path, embedder="none")
    errors: list[BaseException] = []
    seen: list[list[tuple[str, float]]] = []
    stop = time.monotonic() + 2.0

    def read() -> None:
        try:
            while time.monotonic() < stop:
                seen.append(kb.routes["lexical"].candidates("kettle care", Filters(), 5))
        except BaseException as exc:  # noqa: BLE001 - collected and re-raised below
            errors.append(exc)

    def write() -> None:
        writer = Store(path)  # its own connection, in its own thread
        state = "new"
        try:
            while time.monotonic() < stop:
                _write(writer, state)
                state = "old" if state == "new" else "new"
        finally:
            writer.close()

    threads = [threading.Thread(target=read) for _ in range(4)] + [threading.Thread(target=write)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    assert seen and all(r in expected.values() for r in seen)


def test_a_write_codes_only_its_own_vectors_for_the_next_dense_search(tmp_path: Path) -> None:
    from kbsearch.backends.sqlite import SqliteBackend

    store = Store(tmp_path / "kb.db", create=True)
    rng = np.random.default_rng(8)

    def put(doc_id: str, n: int) -> None:
        doc = Document(doc_id=doc_id, version="1", title="t", language="en", access="public")
        rows = [Passage(f"{doc_id}#{i}", doc_id, "1", "", "text", "x", i) for i in range(n)]
        vectors = rng.normal(size=(n, 8)).astype(np.float32)
        store.documents.write(
            doc, rows, ["x"] * n, vectors / np.linalg.norm(vectors, axis=1)[:, None]
        )

    for i in range(5):
        put(f"d{i}", 4)
    backend = SqliteBackend(store)
    q = np.ones(8, dtype=np.float32) / np.sqrt(8)
    backend.dense_candidates(q, Filters(), 5)
    (last,) = store.database.connection.execute("SELECT max(id) FROM passages").fetchone()
    put("d2", 3)  # replaces d2's four rows
    statements: list[str] = []
    with store.database.tracing(statements.append):
        got = backend.dense_candidates(q, Filters(), 30)
    reads = [s for s in statements if "FROM vectors v JOIN passages p" in s]
    assert f"p.id > {last}" in reads[0]  # the rows after the last one held, not all
    assert not any("p.id > -1" in s for s in reads)
    fresh = SqliteBackend(Store(tmp_path / "kb.db")).dense_candidates(q, Filters(), 30)
    assert got == fresh and len(got) == 19


def vector_rows_read(statements: list[str]) -> int:
    """How many vector rows ``statements`` name (``WHERE id IN (...)``); a read of the rows
    after some id (a new segment) counts as one, a read of every row fails the test."""
    reads = [s for s in statements if "FROM vectors" in s]
    assert not [s for s in reads if "p.id > -1" in s or " IN (" not in s and "p.id > " not in s]
    return sum(s.split(" IN (", 1)[1].count(",") + 1 if " IN (" in s else 1 for s in reads)


def test_a_search_after_a_write_reads_no_whole_vector_table(tmp_path: Path) -> None:
    """The judge's cosine background comes from the moments each write keeps: after a write,
    an assessed search reads the vectors of the rows it rescores (the rows read before come
    from the cache) and of the new document, not every vector of the audience."""
    from support import FakeEmbedder, many_files

    query = "parcel courier number 7"
    docs = many_files(tmp_path / "docs", 200)
    embedder = FakeEmbedder()
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=embedder) as kb:
        assert kb.index([docs]).ok
        for audience in ("public", "staff"):
            kb.assess(query, filters=Filters(audience=audience))
        doc = Document(doc_id="new", version="1", title="New", language="en", access="public")
        text = "A parcel by courier, number 7."
        passage = Passage("new@v1#body", "new", "1", "", "text", text, 0)
        kb.store.documents.write(doc, [passage], [text], embedder.encode_passages([text]))
        for audience in ("public", "staff"):
            statements: list[str] = []
            with kb.store.database.tracing(statements.append):
                assessment = kb.assess(query, filters=Filters(audience=audience))
            assert assessment.decision is not None
            assert vector_rows_read(statements) <= 5, statements
