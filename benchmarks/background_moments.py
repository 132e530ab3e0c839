"""The judge's cosine background from the kept vector moments against a read of every vector.

    python benchmarks/background_moments.py --passages 20000 --dim 384

Writes ``--passages`` synthetic unit vectors (documents of ``--per-doc`` passages, a third of
them staff-only), then replaces and deletes ``--churn`` documents, and prints per audience:
the largest difference of mean and covariance between :meth:`Background.of_moments` (the
moments each write kept) and :meth:`Background.of` (every vector read), and of a query's
``(mean, std)`` over 100 random queries; the CPU of each way of making a new generation's
background; and the CPU of one document write with and without vectors (the moments' cost
per write).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from kbsearch.records import Document, Passage
from kbsearch.retrieve.backend import Background
from kbsearch.store import Store


def unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.normal(size=(n, dim)).astype(np.float32) + 0.3  # not centred, like real vectors
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def write(store: Store, rng: np.random.Generator, i: int, n: int, dim: int, vectors: bool) -> None:
    access = "staff" if i % 3 == 0 else "public"
    doc = Document(doc_id=f"d{i}", version="1", title=f"D {i}", language="en", access=access)
    rows = [Passage(f"d{i}#{j}", f"d{i}", "1", "", "text", f"text {j}", j) for j in range(n)]
    store.documents.write(doc, rows, [p.text for p in rows], unit(rng, n, dim) if vectors else None)


def full_read(store: Store, audience: str, dim: int) -> np.ndarray:
    public = "" if audience == "staff" else " WHERE p.access = 'public'"
    rows = store.database.connection.execute(
        f"SELECT v.vector FROM vectors v JOIN passages p ON p.id = v.id{public} ORDER BY v.id"
    ).fetchall()
    return np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32).reshape(-1, dim)


def cpu_ms(fn: object, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()  # type: ignore[operator]
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=20_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--per-doc", type=int, default=10)
    parser.add_argument("--churn", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    docs = args.passages // args.per_doc
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "kb.db", create=True)
        for i in range(docs):
            write(store, rng, i, args.per_doc, args.dim, True)
        for i in rng.choice(docs, size=args.churn, replace=False):
            if i % 2:
                write(store, rng, int(i), args.per_doc, args.dim, True)  # replaced
            else:
                store.documents.delete(f"d{i}", "1")
        queries = unit(rng, 100, args.dim).astype(np.float64)
        for audience in ("public", "staff"):
            vectors = full_read(store, audience, args.dim)
            want = Background.of(vectors)
            got = Background.of_moments(store.moments.of(audience, args.dim))
            by_query = max(
                max(abs(a - b) for a, b in zip(want.of_query(q), got.of_query(q), strict=True))
                for q in queries
            )
            print(
                f"{audience:6s} n={len(vectors):6d}  max|mean diff| "
                f"{np.max(np.abs(want.mean - got.mean)):.1e}  max|cov diff| "
                f"{np.max(np.abs(want.covariance - got.covariance)):.1e}  "
                f"max|query (mean, std) diff| {by_query:.1e}"
            )
            read = cpu_ms(lambda a=audience: Background.of(full_read(store, a, args.dim)))
            kept = cpu_ms(lambda a=audience: Background.of_moments(store.moments.of(a, args.dim)))
            print(
                f"{audience:6s} background CPU: every vector {read:8.1f} ms, moments {kept:6.1f} ms"
            )
        counter = iter(range(docs, docs + 10_000))
        for vectors in (False, True):
            ms = cpu_ms(lambda v=vectors: write(store, rng, next(counter), 1, args.dim, v), 21)
            print(
                f"one 1-passage write (a third staff-only), vectors={vectors}:"
                f" {ms:.2f} ms CPU (median of 21)"
            )
        store.close()


if __name__ == "__main__":
    main()
