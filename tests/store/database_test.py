"""The store refuses files it cannot read safely, and never overwrites them; a read transaction
reads one generation, whole, while another process writes."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import kbsearch
from kbsearch.errors import (
    KnowledgeBaseNotFoundError,
    SchemaError,
    StorageError,
)
from kbsearch.records import Document, Filters, Passage
from kbsearch.store import IndexSettings, Store
from kbsearch.text.analysis import Analyzer


def test_other_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    Store(path, create=True).close()
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    with pytest.raises(SchemaError, match="schema version 1"):
        Store(path, create=True)


def test_not_a_database_is_refused_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database" * 100)
    with pytest.raises(SchemaError):
        Store(path, create=True)
    assert path.read_bytes().startswith(b"these are my notes")


def test_another_tools_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE customers (name TEXT)")
    con.commit()
    con.close()
    with pytest.raises(SchemaError, match="not a kbsearch index"):
        Store(path, create=True)


def test_missing_file_is_not_created_by_readers(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeBaseNotFoundError):
        Store(tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()


def test_empty_file_is_not_silently_turned_into_an_index_by_readers(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    with pytest.raises(SchemaError, match="empty"):
        Store(path)
    assert path.stat().st_size == 0


def test_missing_folder_is_an_error_not_a_silent_mkdir(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="does not exist"):
        Store(tmp_path / "no" / "such" / "kb.db", create=True)
    assert not (tmp_path / "no").exists()


def test_one_connection_per_thread_all_closed(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.db", create=True)
    seen: list[sqlite3.Connection] = []
    threads = [
        threading.Thread(target=lambda: seen.append(store.database.connection)) for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(c) for c in [store.database.connection, *seen]}) == 4
    assert (
        store.database.connection is store.database.connection
    )  # the same thread keeps its connection
    store.close()
    for connection in [*seen]:
        with pytest.raises(sqlite3.ProgrammingError):  # closed
            connection.execute("SELECT 1")
    with pytest.raises(StorageError, match="closed"):
        store.database.generation()


def test_the_tracer_sees_every_statement_of_every_connection(tmp_path: Path) -> None:
    seen: list[str] = []
    store = Store(tmp_path / "kb.db", create=True, tracer=seen.append)
    store.database.get_meta("generation")
    assert "SELECT value FROM meta WHERE key = 'generation'" in seen  # parameters bound
    seen.clear()
    later: list[str] = []
    other = threading.Thread(target=lambda: store.database.get_meta("settings"))
    with store.database.tracing(later.append):
        other.start()
        other.join()
        store.database.get_meta("schema_version")
    assert "SELECT value FROM meta WHERE key = 'settings'" in later  # a new thread's too
    assert "SELECT value FROM meta WHERE key = 'schema_version'" in later
    assert not any("schema_version" in s for s in seen)  # the first tracer was replaced
    store.database.get_meta("x")
    assert seen[-1] == "SELECT value FROM meta WHERE key = 'x'"  # and is back after
    store.close()


def test_a_read_transaction_reads_the_generation_once(tmp_path: Path) -> None:
    seen: list[str] = []
    store = Store(tmp_path / "kb.db", create=True)
    with store.database.tracing(seen.append), store.database.read_transaction():
        assert [store.database.generation() for _ in range(3)] == [0, 0, 0]
    assert sum("key = 'generation'" in s for s in seen) == 1
    writer = Store(tmp_path / "kb.db")
    with writer.database.transaction():
        writer.database.bump_generation()
    assert store.database.generation() == 1  # outside a read transaction: read from the file again
    with store.database.read_transaction():
        assert store.database.generation() == 1
    store.close()
    writer.close()


def test_the_public_generation_moves_with_writes_the_public_may_see(tmp_path: Path) -> None:
    """A staff-only write keeps it; any other write, and a write that does not record it
    (an older kbsearch moves the generation alone), moves it to the generation."""
    store = Store(tmp_path / "kb.db", create=True)
    database = store.database
    assert database.public_generation() == database.generation() == 0

    def bump(public: bool) -> tuple[int, int]:
        with database.transaction():
            database.bump_generation(public=public)
        return database.generation(), database.public_generation()

    assert bump(True) == (1, 1)
    assert bump(False) == (2, 1)
    assert bump(False) == (3, 1)
    with database.transaction() as con:  # a writer that does not record it
        con.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
    assert database.public_generation() == 4
    assert bump(False) == (5, 4)
    assert bump(True) == (6, 6)
    store.close()


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
        store.documents.write(document, passages, [analyzer.body(t, "en") for t in texts],
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
        store.documents.write(document, passages, bodies, vectors, settings=SETTINGS)


def check_whole(store: Store) -> int:
    """The round of "doc" read inside one read transaction; fails unless every part read
    there (the generation, the filter columns, the vectors, each audience's FTS5 statistics
    and postings) is the state after one whole write: "note" at the same round or one behind
    (it is written second), vectors, postings and the generation counter all of that same
    state."""
    with store.database.read_transaction():
        generation = store.database.generation()
        columns = store.passages.filter_columns()
        table = store.vectors.table(DIM)
        fts = {a: (store.fts.statistics(a), store.fts.postings(a)) for a in ("public", "staff")}
    rounds: dict[str, set[int]] = {"doc": set(), "note": set()}
    for pid in columns.passage_ids:
        doc_id, rest = pid.split("#r")
        rounds[doc_id].add(int(rest.split("-")[0]))
    assert len(rounds["doc"]) == 1 and len(rounds["note"]) == 1, rounds
    r, r_note = rounds["doc"].pop(), rounds["note"].pop()
    assert r_note in (r, r - 1), (r, r_note)
    assert generation == 2 * r + 1 + (r_note == r)  # one bump per write
    assert np.array_equal(table.row_ids, columns.row_ids)
    of_row = {
        row: int(pid.split("#r")[1].split("-")[0])
        for row, pid in zip(columns.row_ids, columns.passage_ids, strict=True)
    }
    for row, vector in zip(table.row_ids, table.vectors, strict=True):
        assert np.all(vector == of_row[row])
    expected = {"public": {f"round{r}"}, "staff": {f"round{r}", f"round{r_note}"}}
    for audience in ("public", "staff"):
        (rows, _), postings = fts[audience]
        assert {t for t in postings.terms if t.startswith("round")} == expected[audience]
        assert rows == (2 + r % 5) + (audience == "staff") * (2 + r_note % 5)
        assert set(postings.docs.tolist()) <= set(columns.row_ids.tolist())
    return r


def test_a_read_transaction_reads_every_part_of_one_write(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.db", create=True)
    write_round(store, 0)
    write_round(store, 1)
    assert check_whole(store) == 1
    store.close()


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
                seen.append(check_whole(store))
                check_whole(kb.store)
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
    assert check_whole(store) == int(stdout)
    store.close()
