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
    store.write_document(doc, passages, texts, vectors)


def _expected(path: Path) -> dict[str, list[tuple[str, float]]]:
    out = {}
    for state in TEXTS:
        copy = path.parent / f"{state}.db"
        store = Store(copy, create=True)
        store.set_settings({"analyzer": "plain"})
        _write(store, state)
        store.close()
        with kbsearch.open_kb(copy, embedder="none") as kb:
            out[state] = kb.routes["lexical"].candidates("kettle care", Filters(), 5)
    return out


def test_searches_from_threads_while_another_connection_writes(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    expected = _expected(path)
    store = Store(path, create=True)
    store.set_settings({"analyzer": "plain"})
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
