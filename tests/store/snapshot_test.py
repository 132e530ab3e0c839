"""``read_snapshot`` reads one generation, whole, while another process writes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import kbsearch
from kbsearch.errors import InvalidArgumentError
from kbsearch.records import Document, Filters, Passage
from kbsearch.store import IndexSettings, IndexSnapshot, Store
from kbsearch.text.analysis import Analyzer

DIM = 8
SETTINGS = IndexSettings(embedder="fake:bow", embedder_spec="fake:bow", dim=DIM)

# Round r rewrites document "doc" (public) and "note" (staff) in one transaction each: 2 + r % 5
# passages "round{r} token{j}", every vector filled with r. Generation = writes so far.
WRITER = """
import os, sys, numpy as np
from kbsearch.text.analysis import Analyzer
from kbsearch.records import Document, Passage
from kbsearch.store import IndexSettings, Store
store = Store(sys.argv[1])
settings = IndexSettings(embedder="fake:bow", embedder_spec="fake:bow", dim=8)
analyzer = Analyzer("stem")
r = 0
while not os.path.exists(sys.argv[2]) and r < 20000:  # until the test says stop
    r += 1  # round 0 is written by the test
    for doc_id, access in (("doc", "public"), ("note", "staff")):
        n = 2 + r % 5
        texts = [f"round{r} token{j}" for j in range(n)]
        passages = [Passage(f"{doc_id}#r{r}-{j}", doc_id, "1", "", "text", t, j)
                    for j, t in enumerate(texts)]
        document = Document(doc_id=doc_id, version="1", title=doc_id, language="en",
                            access=access)
        store.write_document(document, passages, [analyzer.body(t, "en") for t in texts],
                             np.full((n, 8), r, dtype=np.float32), settings=settings)
store.close()
print(r)  # the last round written
"""


def write_round(store: Store, r: int) -> None:
    analyzer = Analyzer("stem")
    for doc_id, access in (("doc", "public"), ("note", "staff")):
        n = 2 + r % 5
        texts = [f"round{r} token{j}" for j in range(n)]
        passages = [
            Passage(f"{doc_id}#r{r}-{j}", doc_id, "1", "", "text", t, j)
            for j, t in enumerate(texts)
        ]
        document = Document(doc_id=doc_id, version="1", title=doc_id, language="en", access=access)
        vectors = np.full((n, DIM), r, dtype=np.float32)
        bodies = [analyzer.body(t, "en") for t in texts]
        store.write_document(document, passages, bodies, vectors, settings=SETTINGS)


def check_whole(snapshot: IndexSnapshot) -> int:
    """The round of "doc" in the snapshot; fails unless every part of the snapshot is the
    state after one whole write: "note" at the same round or one behind (it is written
    second), vectors, postings and the generation counter all of that same state."""
    rounds: dict[str, set[int]] = {"doc": set(), "note": set()}
    for pid in snapshot.columns.passage_ids:
        doc_id, rest = pid.split("#r")
        rounds[doc_id].add(int(rest.split("-")[0]))
    assert len(rounds["doc"]) == 1 and len(rounds["note"]) == 1, rounds
    r, r_note = rounds["doc"].pop(), rounds["note"].pop()
    assert r_note in (r, r - 1), (r, r_note)
    assert snapshot.generation == 2 * r + 1 + (r_note == r)  # one bump per write
    table = snapshot.vectors
    assert table is not None
    assert np.array_equal(table.row_ids, snapshot.columns.row_ids)
    of_row = {
        row: int(pid.split("#r")[1].split("-")[0])
        for row, pid in zip(snapshot.columns.row_ids, snapshot.columns.passage_ids, strict=True)
    }
    for row, vector in zip(table.row_ids, table.vectors, strict=True):
        assert np.all(vector == of_row[row])
    expected = {"public": {f"round{r}"}, "staff": {f"round{r}", f"round{r_note}"}}
    for audience in ("public", "staff"):
        fts = snapshot.fts[audience]
        assert {t for t in fts.postings.terms if t.startswith("round")} == expected[audience]
        assert fts.rows == (2 + r % 5) + (audience == "staff") * (2 + r_note % 5)
        assert set(fts.postings.docs.tolist()) <= set(snapshot.columns.row_ids.tolist())
    return r


def test_snapshot_reads_everything_of_one_generation(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.db", create=True)
    empty = store.read_snapshot()
    assert empty.generation == 0 and empty.settings is None and empty.columns.row_ids.size == 0
    write_round(store, 0)
    write_round(store, 1)
    snapshot = store.read_snapshot()
    assert check_whole(snapshot) == 1
    assert snapshot.settings == SETTINGS and snapshot.languages == ("en",)
    only_public = store.read_snapshot(("public",), vectors=False)
    assert set(only_public.fts) == {"public"} and only_public.vectors is None
    with pytest.raises(InvalidArgumentError, match="unknown audience 'guest'"):
        store.read_snapshot(("guest",))


def test_readers_never_fail_or_mix_versions_while_another_process_writes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "kb.db"
    store = Store(path, create=True)
    write_round(store, 0)
    stop = tmp_path / "stop"  # the writer writes round after round until this file exists
    env = dict(os.environ, PYTHONPATH=str(Path(kbsearch.__file__).parents[1]))
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(stop)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    seen: list[int] = []
    searched: list[int] = []
    errors: list[BaseException] = []
    kb = kbsearch.open_kb(path, embedder="none")  # lexical searches from the same store

    def read() -> None:
        try:
            while writer.poll() is None:
                seen.append(check_whole(store.read_snapshot()))
                kb.store.read_snapshot(("public",), vectors=False)
        except BaseException as exc:  # reported below, with the round it failed on
            errors.append(exc)

    def search() -> None:
        try:
            with kbsearch.open_kb(path, embedder="none") as own:
                while writer.poll() is None:
                    hits = own.search("token0", k=10, route="lexical", filters=Filters())
                    assert len({h.passage_id.split("-")[0] for h in hits}) == 1
                    searched.append(len(hits))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(3)]
    threads.append(threading.Thread(target=search))
    for thread in threads:
        thread.start()
    # on a loaded machine the readers may get few turns: keep writing until they have read
    # several generations and searched a few times (or a minute has gone by)
    deadline = time.monotonic() + 60
    while writer.poll() is None and time.monotonic() < deadline:
        if len(set(seen)) >= 50 and len(searched) >= 5:
            break
        time.sleep(0.05)
    stop.touch()
    stdout, stderr = writer.communicate(timeout=300)
    for thread in threads:
        thread.join()
    kb.close()
    assert writer.returncode == 0, stderr.decode()
    assert not errors, errors[0]
    assert len(set(seen)) >= 5, "the readers did not overlap the writes"
    assert searched, "no search completed while the writer ran"
    assert check_whole(store.read_snapshot()) == int(stdout)
    store.close()
