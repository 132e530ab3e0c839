"""The vector moments each write keeps (count, sum, sum of outer products, per audience) give
the same cosine background as a read of every vector, through writes, rewrites, deletions and
a clear; reading them reads no vector; a file made before them gets them on open."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from support import made_before

from kbsearch.errors import SettingsConflictError
from kbsearch.records import Document, Passage
from kbsearch.retrieve.backend import Background
from kbsearch.store import Store, VectorMoments

DIM = 12
IDS = ["a", "b", "c", "d", "e"]


def reference(store: Store, audience: str) -> Background:
    """The background over every vector ``audience`` may see (the rule before the moments)."""
    public = "" if audience == "staff" else " WHERE p.access = 'public'"
    rows = store.database.connection.execute(
        f"SELECT v.vector FROM vectors v JOIN passages p ON p.id = v.id{public}"
    ).fetchall()
    vectors = np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32)
    return Background.of(vectors.reshape(len(rows), DIM))


def kept(store: Store, audience: str) -> Background:
    return Background.of_moments(store.moments.of(audience, DIM))


def gap(a: Background, b: Background) -> float:
    return max(
        float(np.max(np.abs(a.mean - b.mean))), float(np.max(np.abs(a.covariance - b.covariance)))
    )


def write(store: Store, rng: random.Random, nrng: np.random.Generator) -> None:
    doc_id, version = rng.choice(IDS), rng.choice(["1", "2"])
    document = Document(
        doc_id=doc_id,
        version=version,
        title=doc_id,
        language="en",
        access=rng.choice(["public", "staff"]),
        content_hash=str(rng.random()),
    )
    n = rng.randrange(5)
    passages = [
        Passage(f"{doc_id}@v{version}#s{i}", doc_id, version, f"s{i}", "text", f"text {i}", i)
        for i in range(n)
    ]
    vectors = nrng.normal(size=(n, DIM)).astype(np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    store.documents.write(document, passages, [p.text for p in passages], vectors)


def test_kept_moments_equal_a_read_of_every_vector_per_audience(tmp_path: Path) -> None:
    rng, nrng = random.Random(23), np.random.default_rng(23)
    store = Store(tmp_path / "kb.db", create=True)
    worst = 0.0
    for step in range(240):
        if step == 120:
            store.documents.clear()
        elif rng.random() < 0.25:
            store.documents.delete(rng.choice(IDS), rng.choice(["1", "2"]))
        else:
            write(store, rng, nrng)
        for audience in ("public", "staff"):
            want, got = reference(store, audience), kept(store, audience)
            n = store.moments.of(audience, DIM).n
            count = "" if audience == "staff" else " WHERE access = 'public'"
            (rows,) = store.database.connection.execute(
                f"SELECT count(*) FROM vectors v JOIN passages p ON p.id = v.id{count}"
            ).fetchone()
            assert n == rows, step
            worst = max(worst, gap(want, got))
    assert worst < 1e-12, worst


def test_a_staff_vector_never_moves_the_public_moments(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.db", create=True)
    for doc_id, access, vector in (("p", "public", [1.0, 0.0]), ("s", "staff", [0.0, 1.0])):
        document = Document(doc_id=doc_id, version="1", title=doc_id, language="en", access=access)
        passage = Passage(f"{doc_id}#1", doc_id, "1", "", "text", "x", 0)
        store.documents.write(document, [passage], ["x"], np.array([vector], dtype=np.float32))
    public, staff = store.moments.of("public", 2), store.moments.of("staff", 2)
    assert (public.n, public.total.tolist(), public.second.tolist()) == (1, [1, 0], [1, 0, 0])
    assert (staff.n, staff.total.tolist(), staff.second.tolist()) == (2, [1, 1], [1, 0, 1])
    mean, covariance = staff.mean_covariance()  # by hand: mean (.5, .5), C = [[.25, -.25], ...]
    assert mean.tolist() == [0.5, 0.5]
    assert covariance.tolist() == [[0.25, -0.25], [-0.25, 0.25]]
    store.documents.delete("p", "1")
    assert store.moments.of("public", 2).n == 0 and store.moments.of("staff", 2).n == 1


def test_reading_the_moments_reads_no_vector(tmp_path: Path) -> None:
    rng, nrng = random.Random(5), np.random.default_rng(5)
    statements: list[str] = []
    store = Store(tmp_path / "kb.db", create=True, tracer=statements.append)
    for _ in range(20):
        write(store, rng, nrng)
    statements.clear()
    for audience in ("public", "staff"):
        store.moments.of(audience, DIM)
    assert statements and not [s for s in statements if "vectors" in s or "passages" in s]


def test_a_write_of_another_dimension_is_refused(tmp_path: Path) -> None:
    rng, nrng = random.Random(2), np.random.default_rng(2)
    store = Store(tmp_path / "kb.db", create=True)
    while store.moments.of("staff", DIM).n == 0:
        write(store, rng, nrng)
    document = Document(doc_id="z", version="1", title="z", language="en", access="public")
    passage = Passage("z#1", "z", "1", "", "text", "x", 0)
    with pytest.raises(SettingsConflictError, match="re-embed"):
        store.documents.write(document, [passage], ["x"], np.ones((1, DIM + 1), np.float32))
    assert store.documents.state("z", "1") is None  # nothing of it kept


def test_a_file_made_before_the_moments_gets_them_on_open(tmp_path: Path) -> None:
    rng, nrng = random.Random(11), np.random.default_rng(11)
    path = tmp_path / "kb.db"
    store = Store(path, create=True)
    for _ in range(30):
        write(store, rng, nrng)
    expected = {a: reference(store, a) for a in ("public", "staff")}
    old = tmp_path / "old.db"
    made_before(store, "vector_moments", old)
    reopened = Store(path)
    for audience in ("public", "staff"):
        assert gap(kept(reopened, audience), expected[audience]) < 1e-12
    write(reopened, rng, nrng)  # and kept from then on
    for audience in ("public", "staff"):
        assert gap(kept(reopened, audience), reference(reopened, audience)) < 1e-12
    reopened.close()
    old.chmod(0o444)  # read-only: computed from the vectors, the file left as it was
    read_only = Store(old)
    for audience in ("public", "staff"):
        assert gap(kept(read_only, audience), expected[audience]) < 1e-12
    names = read_only.database.connection.execute("SELECT name FROM sqlite_master").fetchall()
    assert "vector_moments" not in {r[0] for r in names}


def test_moments_of_no_vector_are_zeros() -> None:
    empty = VectorMoments.zero(3)
    mean, covariance = empty.mean_covariance()
    assert mean.tolist() == [0, 0, 0] and not covariance.any()
