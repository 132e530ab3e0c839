"""The deleted-rows log: every generation's deletions, gaps refused, old entries pruned."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kbsearch.records import Document, Passage
from kbsearch.store import Store, row_log


def write(store: Store, doc_id: str, passages: int, version: str = "1") -> None:
    doc = Document(doc_id=doc_id, version=version, title="t", language="en", access="public")
    rows = [
        Passage(f"{doc_id}@v{version}#{i}", doc_id, version, "", "text", "x", i)
        for i in range(passages)
    ]
    vectors = np.ones((passages, 4), dtype=np.float32) / 2
    store.documents.write(doc, rows, ["x"] * passages, vectors)


def row_ids(store: Store, doc_id: str) -> list[int]:
    rows = store.database.connection.execute("SELECT id FROM passages WHERE doc_id = ?", (doc_id,))
    return [int(r[0]) for r in rows]


def test_ranges() -> None:
    assert row_log.ranges([5, 3, 4, 9, 9, 1]) == [(1, 1), (3, 5), (9, 9)]
    assert row_log.ranges([]) == []


def test_deletions_of_each_generation(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.db", create=True)
    write(store, "a", 3)
    write(store, "b", 2)
    start = store.database.generation()
    a, b = row_ids(store, "a"), row_ids(store, "b")
    assert store.vectors.deleted_rows_between(start, start).tolist() == []
    write(store, "a", 1)  # a replacement deletes the old rows
    store.documents.delete("b", "1")
    write(store, "c", 2)
    now = store.database.generation()
    assert store.vectors.deleted_rows_between(start, now).tolist() == [[a[0], a[-1]], [b[0], b[-1]]]
    assert store.vectors.deleted_rows_between(start + 1, now).tolist() == [[b[0], b[-1]]]
    assert store.vectors.deleted_rows_between(now, start) is None  # backwards
    store.documents.clear()
    assert store.vectors.deleted_rows_between(now, store.database.generation()).tolist() == [
        list(row_log.EVERY_ROW)
    ]


def test_a_generation_bumped_without_the_log_is_a_gap(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.db", create=True)
    write(store, "a", 2)
    before = store.database.generation()
    with store.database.transaction() as con:  # a writer that does not log (an older kbsearch)
        con.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
    assert store.vectors.deleted_rows_between(before, store.database.generation()) is None
    gap, old = store.database.generation(), row_ids(store, "a")
    write(store, "a", 1)  # the log starts again from the gap on
    assert store.vectors.deleted_rows_between(before, store.database.generation()) is None
    assert store.vectors.deleted_rows_between(gap, store.database.generation()).tolist() == [
        [old[0], old[-1]]
    ]


def test_only_the_last_generations_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(row_log, "LOG_GENERATIONS", 3)
    store = Store(tmp_path / "kb.db", create=True)
    for _ in range(6):
        write(store, "a", 1)
    now = store.database.generation()
    assert store.vectors.deleted_rows_between(now - 4, now) is None
    assert len(store.vectors.deleted_rows_between(now - 3, now)) == 3
    keys = store.database.connection.execute("SELECT count(*) FROM meta WHERE key LIKE 'row_log@%'")
    assert keys.fetchone()[0] == 3
