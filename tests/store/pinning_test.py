"""A pinned reader keeps seeing the state it first read while another connection writes, and
a thread reads through it only inside ``reading_from``."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

from support import seed_store

from kbsearch.store.settings import IndexSettings
from kbsearch.text.analysis import Analyzer


def test_a_pinned_reader_sees_one_state_while_another_writes(tmp_path: Path) -> None:
    store = seed_store(tmp_path / "kb.db", Analyzer("stem"))
    before = store.database.generation()
    reader = store.pins.open_reader()

    def delete() -> None:  # another thread, another connection
        store.documents.delete("A", "1")

    writer = threading.Thread(target=delete)
    writer.start()
    writer.join()
    assert store.database.generation() > before
    assert "A" not in store.passages.rows(["A"])
    with store.pins.reading_from(reader):
        assert store.database.generation() == before
        assert "A" in store.passages.rows(["A"])
        with store.database.read_transaction():  # joins the pinned transaction
            assert store.passages.count() == 8
    assert store.database.generation() > before  # this thread's own connection again
    store.pins.close_reader(reader)
    store.pins.close_reader(reader)  # twice is harmless
    store.close()


def test_settings_read_pinned_are_the_pinned_generations(tmp_path: Path) -> None:
    store = seed_store(tmp_path / "kb.db", Analyzer("stem"))
    recorded = IndexSettings(default_access="public")
    with store.database.transaction():
        store.database.set_settings(recorded)
    reader = store.pins.open_reader()
    with store.pins.reading_from(reader):
        pinned = store.database.settings()
    assert pinned["default_access"] == "public"

    def change() -> None:  # another thread, another connection
        with store.database.transaction():
            store.database.set_settings(replace(recorded, default_access="staff"))

    writer = threading.Thread(target=change)
    writer.start()
    writer.join()
    assert store.database.settings()["default_access"] == "staff"
    with store.pins.reading_from(reader):
        assert store.database.settings() == pinned
        with store.pins.reading_from(None):  # this thread's own connection inside
            assert store.database.settings()["default_access"] == "staff"
        assert store.database.settings() == pinned
    assert store.database.settings()["default_access"] == "staff"
    store.pins.close_reader(reader)
    store.close()
