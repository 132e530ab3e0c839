"""A pinned reader keeps seeing the state it first read while another connection writes, and
a thread reads through it only inside ``reading_from``."""

from __future__ import annotations

import threading
from pathlib import Path

from support import seed_store

from kbsearch.analysis import Analyzer


def test_a_pinned_reader_sees_one_state_while_another_writes(tmp_path: Path) -> None:
    store = seed_store(tmp_path / "kb.db", Analyzer("stem"))
    before = store.generation()
    reader = store.open_reader()

    def delete() -> None:  # another thread, another connection
        store.delete_document("A", "1")

    writer = threading.Thread(target=delete)
    writer.start()
    writer.join()
    assert store.generation() > before
    assert "A" not in store.passage_rows(["A"])
    with store.reading_from(reader):
        assert store.generation() == before
        assert "A" in store.passage_rows(["A"])
        with store.read_transaction():  # joins the pinned transaction
            assert store.count_passages() == 8
    assert store.generation() > before  # this thread's own connection again
    store.close_reader(reader)
    store.close_reader(reader)  # twice is harmless
    store.close()
