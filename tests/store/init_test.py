"""The store facade (``kbsearch/store/__init__.py``): one database, table groups as parts."""

from __future__ import annotations

from pathlib import Path

from kbsearch.store import Database, Store


def test_the_store_composes_one_database_and_its_table_groups(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.db", create=True)
    try:
        assert Store.__mro__ == (Store, object)  # parts, not inherited halves
        parts = [store.documents, store.passages, store.counts, store.fts, store.vectors]
        assert isinstance(store.database, Database)
        assert all(part.database is store.database for part in [*parts, store.pins])
        assert all(type(part).__mro__[1:] == (object,) for part in parts)
        assert store.path == store.database.path == tmp_path / "kb.db"
    finally:
        store.close()
    assert store.database._closed
