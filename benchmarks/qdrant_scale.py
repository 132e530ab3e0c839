"""Filtered dense top-10 at scale: Qdrant Edge (HNSW, in-process) beside the embedded exact scan.

    OPENBLAS_NUM_THREADS=1 python benchmarks/qdrant_scale.py --sizes 50000,100000 \
        [--ef 64,128] [--queries 200] [--threads 1] [--distribution clustered] [--dir DIR]

For each size N: N synthetic 384-d unit vectors with realistic payloads (documents of 1-12
passages, 75 % public, English:French 2:1, a quarter of the documents with two versions whose
effective ranges meet, some open bounds), written to a fresh Qdrant Edge shard through
kbsearch's own writer (:mod:`kbsearch.backends.qdrant`, batches of 1,000), then HNSW built
(``optimize``: Qdrant Edge builds HNSW only when asked; m 16, ef_construct 100 and no extra
payload links by default, ``--payload-m``). Queries are filtered as a public search is (public,
in force on a day, English: about 37 % of the points pass). Printed per size:

- build: seconds to write the points, seconds to build HNSW (and the segments and indexed
  vectors Qdrant Edge then reports), the shard's size on disk, and
  the process's peak resident memory (which includes the numpy copy the exact scan uses);
- embedded exact scan (:class:`kbsearch.retrieve.dense.DenseIndex`, the SQLite backend's dense
  route):
  p50 / p99 per query;
- Qdrant Edge exact (``exact=True``) and HNSW at each ``hnsw_ef``: p50 / p99, and recall@10
  against the exact top 10 (the embedded scan's ids; ties are not an issue with random data).

``--distribution latent`` (default) draws vectors of low intrinsic dimension, as text
embeddings are: 2,000 topic centres in a 48-d latent space, mapped to 384-d by a random linear
map, plus small isotropic noise; its local intrinsic dimension is above that of the E5 vectors
of the shared datasets (``benchmarks/vector_shape.py``), so its recall is on the safe side.
``clustered`` draws 384-d vectors around 2,000 centres with large isotropic noise; ``uniform``
draws them uniformly on the sphere, the hardest case for HNSW.
Queries are held-out draws of the same distribution (as a question resembles passages).
Random vectors are not E5 vectors: recall on real embeddings must be measured on them.
Run it on an otherwise idle machine; ``nice -n 10`` on a shared one. ``--keep`` keeps the
shards in ``--dir`` and ``--reuse`` searches them again (other ``--ef``) without rebuilding.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _common import percentile  # noqa: E402

from kbsearch.backends.qdrant.edge import EdgeCollection, HnswSettings  # noqa: E402
from kbsearch.backends.qdrant.filters import to_qdrant  # noqa: E402
from kbsearch.backends.qdrant.mirror import write_points  # noqa: E402
from kbsearch.backends.qdrant.points import DENSE, PassagePoint, payload  # noqa: E402
from kbsearch.backends.qdrant.sparse import LengthStatistics, SparseWeights  # noqa: E402
from kbsearch.filters import Filters  # noqa: E402
from kbsearch.records import Document, Passage  # noqa: E402
from kbsearch.retrieve.dense import DenseIndex  # noqa: E402
from kbsearch.store import VectorTable  # noqa: E402

DIM = 384
LATENT = 48  # intrinsic dimension of the "latent" distribution
DAY = date(2026, 6, 1)
NO_TERMS = SparseWeights((), 0)  # dense-only benchmark: no sparse vectors written
LENGTHS = LengthStatistics(1.0, 1.0)


def synthetic_vectors(n: int, distribution: str, rng: np.random.Generator) -> np.ndarray:
    if distribution == "latent":
        basis = rng.standard_normal((LATENT, DIM), dtype=np.float32)
        centres = rng.standard_normal((2000, LATENT), dtype=np.float32)
        latent = centres[rng.integers(0, len(centres), n)]
        latent += rng.standard_normal((n, LATENT), dtype=np.float32)
        vectors = latent @ basis
        vectors += 0.1 * np.sqrt(LATENT) * rng.standard_normal((n, DIM), dtype=np.float32)
    elif distribution == "clustered":
        centres = rng.standard_normal((2000, DIM), dtype=np.float32)
        vectors = centres[rng.integers(0, len(centres), n)]
        vectors += 0.6 * rng.standard_normal((n, DIM), dtype=np.float32)
    else:
        vectors = rng.standard_normal((n, DIM), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def synthetic_documents(n: int, rng: np.random.Generator) -> list[tuple[Document, int]]:
    """Documents (with their passage counts) until ``n`` passages."""
    out: list[tuple[Document, int]] = []
    total, i = 0, 0
    while total < n:
        access = "public" if rng.random() < 0.75 else "staff"
        language = "en" if rng.random() < 2 / 3 else "fr"
        versions = 2 if rng.random() < 0.25 else 1
        switch = date(2025, 1, 1 + int(rng.integers(0, 28)))
        for v in range(1, versions + 1):
            start = None if v == 1 and rng.random() < 0.5 else date(2024, 1, 1)
            if versions == 2:
                start = date(2024, 1, 1) if v == 1 else switch
                end = date.fromordinal(switch.toordinal() - 1) if v == 1 else None
            else:
                end = date(2025, 12, 31) if rng.random() < 0.1 else None
            count = min(int(rng.integers(1, 13)), n - total)
            doc = Document(f"d{i}", str(v), f"Doc {i}", language, access, start, end)
            out.append((doc, count))
            total += count
            if total >= n:
                break
        i += 1
    return out


def build_points(docs: list[tuple[Document, int]], vectors: np.ndarray) -> list[PassagePoint]:
    points, row = [], 0
    for doc, count in docs:
        for j in range(count):
            passage = Passage(
                f"{doc.doc_id}@v{doc.version}#s{j}", doc.doc_id, doc.version, "", "text", "", j
            )
            points.append(
                PassagePoint(passage.passage_id, vectors[row], NO_TERMS, payload(doc, passage))
            )
            row += 1
    return points


def embedded_index(points: list[PassagePoint], vectors: np.ndarray) -> DenseIndex:
    def col(key: str) -> np.ndarray:
        return np.array([p.payload[key] for p in points], dtype=object)

    def iso(key: str, open_value: int) -> np.ndarray:
        return np.array(
            ["" if d == open_value else date.fromordinal(int(d)).isoformat() for d in col(key)],  # type: ignore[call-overload]
            dtype=object,
        )

    from kbsearch.backends.qdrant.points import OPEN_FROM, OPEN_TO

    table = VectorTable(
        row_ids=np.arange(len(points)),
        passage_ids=np.array([p.passage_id for p in points], dtype=object),
        vectors=vectors,
        access=col("access"),
        language=col("language"),
        doc_id=col("doc_id"),
        effective_from=iso("from_day", OPEN_FROM),
        effective_to=iso("to_day", OPEN_TO),
    )
    return DenseIndex.of_table(table)


def timed(func, items) -> tuple[list[float], list]:
    ms, out = [], []
    for item in items:
        start = time.perf_counter()
        out.append(func(item))
        ms.append((time.perf_counter() - start) * 1000)
    return ms, out


def line(label: str, ms: list[float], extra: str = "") -> str:
    return (
        f"  {label:<28} p50 {percentile(ms, 50):8.2f} ms  p99 {percentile(ms, 99):8.2f} ms{extra}"
    )


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def run(n: int, args: argparse.Namespace, root: Path) -> None:
    rng = np.random.default_rng(n)
    drawn = synthetic_vectors(n + args.queries, args.distribution, rng)
    vectors, queries = drawn[:n], drawn[n:]  # queries: held-out draws of the same distribution
    points = build_points(synthetic_documents(n, rng), vectors)
    shard_dir = root / f"edge-{n}"
    reuse = args.reuse and shard_dir.is_dir()  # the same seed draws the same points again
    if not reuse:
        shutil.rmtree(shard_dir, ignore_errors=True)
    hnsw = HnswSettings(
        m=args.m,
        ef_construct=args.ef_construct,
        payload_m=args.payload_m,
        indexing_threads=args.indexing_threads,
    )
    collection = EdgeCollection(shard_dir, hnsw, search_threads=args.threads)
    collection.ensure(DIM)
    written = indexed = float("nan")
    if reuse:
        print(f"\n{n:,} points: reusing the shard built earlier in {shard_dir}", flush=True)
    else:
        start = time.perf_counter()
        step = 100_000
        for first in range(0, n, step):
            write_points(collection, points[first : first + step], LENGTHS, batch_size=1000)
            if n > step:
                done = min(first + step, n)
                print(
                    f"  {done:,} points written in {time.perf_counter() - start:.0f} s", flush=True
                )
        written = time.perf_counter() - start
        print(f"\n{n:,} points: written in {written:.1f} s; building HNSW ...", flush=True)
        start = time.perf_counter()
        collection.optimize()
        indexed = time.perf_counter() - start
    segments, stored, indexed_vectors = collection.info()
    print(
        f"  HNSW built in {indexed:.1f} s: {segments} segment(s), {stored:,} points, "
        f"{indexed_vectors:,} indexed vectors",
        flush=True,
    )
    dense = embedded_index(points, vectors)
    filters = Filters(audience="public", as_of=DAY, language="en")
    where = to_qdrant(filters)
    passing = int(dense.mask(filters).sum())
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"\n{n:,} points x {DIM} ({args.distribution}), filter public + in force + en "
        f"({passing:,} pass, {passing / n:.0%}); top 10, {args.queries} queries, "
        f"{args.threads} search thread(s); m {args.m}, ef_construct {args.ef_construct}, "
        f"payload_m {args.payload_m}"
    )
    print(
        f"  build: write {written:.1f} s ({n / written:,.0f} points/s), HNSW {indexed:.1f} s; "
        f"shard {folder_bytes(shard_dir) / 2**20:,.0f} MiB on disk; peak RSS {peak_mib:,.0f} MiB"
    )
    dense.search(queries[0], filters, 10)  # builds the mask once
    ms, exact = timed(lambda q: dense.search(q, filters, 10), queries)
    truth = [{pid for pid, _ in top} for top in exact]
    print(line("embedded exact scan", ms), flush=True)
    for label, kwargs in [("Qdrant Edge exact", {"exact": True})] + [
        (f"Qdrant Edge HNSW ef={ef}", {"exact": False, "hnsw_ef": ef}) for ef in args.ef
    ]:
        collection.query(DENSE, queries[0], where, 10, **kwargs)  # warm-up
        ms, found = timed(lambda q, kw=kwargs: collection.query(DENSE, q, where, 10, **kw), queries)
        recall = np.mean(
            [len({pid for pid, _ in f} & t) / 10 for f, t in zip(found, truth, strict=True)]
        )
        print(line(label, ms, f"  recall@10 {recall:.3f}"), flush=True)
    collection.close()
    if not args.keep:
        shutil.rmtree(shard_dir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="50000,100000")
    parser.add_argument("--ef", default="64,128,256")
    parser.add_argument("--m", type=int, default=16)
    parser.add_argument("--ef-construct", type=int, default=100)
    parser.add_argument(
        "--payload-m",
        type=int,
        default=0,
        help="extra HNSW links per payload value (0: none; -1: Qdrant's default, m)",
    )
    parser.add_argument(
        "--indexing-threads", type=int, default=0, help="HNSW build threads (0: Qdrant's choice)"
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1, help="Qdrant Edge search threads")
    parser.add_argument(
        "--distribution", choices=["latent", "clustered", "uniform"], default="latent"
    )
    parser.add_argument("--dir", type=Path, default=None, help="where shards are built")
    parser.add_argument("--keep", action="store_true", help="keep the shards")
    parser.add_argument(
        "--reuse", action="store_true", help="search a shard kept in --dir instead of building it"
    )
    args = parser.parse_args()
    args.ef = [int(x) for x in args.ef.split(",") if x]
    args.payload_m = None if args.payload_m < 0 else args.payload_m
    root = args.dir or Path(tempfile.mkdtemp(prefix="qdrant-scale-"))
    for n in filter(None, args.sizes.split(",")):
        run(int(n), args, root)


if __name__ == "__main__":
    main()
