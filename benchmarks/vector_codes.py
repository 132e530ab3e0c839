"""The dense route's int8 codes against a brute-force float32 scan: recall, rescoring, speed.

    OPENBLAS_NUM_THREADS=1 python benchmarks/vector_codes.py \
        [--db covid.db --dataset ../shared/data/covid_faq_en] [--queries 300] \
        [--synthetic 100000,1000000] [--distribution latent]

For each query (a dataset's queries encoded with the index's embedder, or held-out synthetic
draws of ``benchmarks/qdrant_scale.py``'s distributions), the top 10 of a float32 scan of every
row (``row_dots``, ties by passage id) is the reference. Printed:

- Recall@10 of the int8 codes alone (top 10 by approximate score), of the codes rescored at
  the fixed depth only (``rescoring_depth(10)`` rows, step 2 of
  :meth:`kbsearch.retrieve.dense.DenseIndex.search`), and of the search itself (steps 2 and 3);
  whether the search's list equals the reference with scores bit for bit; rows rescored per
  query (mean, max);
- memory of the codes against the float32 matrix;
- p50 of the float32 scan and of the search, one thread (``KBSEARCH_THREADS=1``), the
  rescored rows read from memory (synthetic) or from the SQLite file (``--db``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("KBSEARCH_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _common import load_beir, percentile  # noqa: E402
from qdrant_scale import synthetic_vectors  # noqa: E402

import kbsearch  # noqa: E402
from kbsearch.records import Filters  # noqa: E402
from kbsearch.retrieve.dense import DenseIndex, rescoring_depth, row_dots  # noqa: E402
from kbsearch.retrieve.topk import top_k  # noqa: E402
from kbsearch.store import VectorTable  # noqa: E402

K = 10
FILTERS = Filters(audience="staff")


def compare(index: DenseIndex, vectors: np.ndarray, queries: np.ndarray, label: str) -> None:
    """Print the figures of the module docstring for ``index`` over float32 ``vectors``
    (aligned with the index's rows, none deleted)."""
    pids = index.passage_ids
    candidates = np.flatnonzero(index.mask(FILTERS))
    rescore, rescored = index.exact, [0]

    def counting(query: np.ndarray, positions: np.ndarray) -> np.ndarray:
        rescored[0] += len(positions)
        return rescore(query, positions)

    index.exact = counting  # type: ignore[method-assign]
    recall = {"codes alone": [], f"codes + rescoring {rescoring_depth(K)}": [], "search": []}
    same, counts, brute_ms, search_ms = 0, [], [], []
    for q in queries:
        start = time.perf_counter()
        exact = row_dots(vectors, q)
        want = top_k(candidates, exact[candidates], pids, K)
        brute_ms.append((time.perf_counter() - start) * 1000)
        rescored[0] = 0
        start = time.perf_counter()
        got = index.search(q, FILTERS, K)
        search_ms.append((time.perf_counter() - start) * 1000)
        counts.append(rescored[0])
        approx = index.approximate(q)[candidates]
        alone = top_k(candidates, approx, pids, K)
        depth = candidates[np.argsort(-approx, kind="stable")[: rescoring_depth(K)]]
        fixed = top_k(depth, exact[depth], pids, K)
        ids = {p for p, _ in want}
        for name, found in zip(recall, (alone, fixed, got), strict=True):
            recall[name].append(len(ids & {p for p, _ in found}) / len(ids))
        same += got == want
    del index.exact
    print(f"{label}: {len(vectors):,} x {vectors.shape[1]}, {len(queries)} queries, top {K}")
    for name, values in recall.items():
        print(f"  Recall@10 {name:<24} {np.mean(values):.4f}  (min {min(values):.1f})")
    print(f"  search == float32 scan, scores bit for bit: {same}/{len(queries)}")
    print(f"  rows rescored per query: mean {np.mean(counts):.1f}, max {max(counts)}")
    mib = 2**20
    print(
        f"  memory: codes {index.nbytes / mib:,.1f} MiB, float32 {vectors.nbytes / mib:,.1f} MiB"
        f" ({vectors.nbytes / index.nbytes:.2f}x)"
    )
    print(
        f"  p50 float32 scan {percentile(brute_ms, 50):.2f} ms, "
        f"search (codes + rescoring) {percentile(search_ms, 50):.2f} ms"
    )


def dataset(db: Path, folder: Path, limit: int) -> None:
    _, queries, _ = load_beir(folder)
    texts = list(queries.values())[:limit]
    with kbsearch.open_kb(db) as kb:
        embedder = kb.embedder()
        assert embedder is not None
        qs = np.asarray(embedder.encode_queries(texts), dtype=np.float32)
        index = kb.dense_index()
        compare(index, index.table.vectors, qs, f"{folder.name} (E5, {db.name})")


def synthetic(n: int, distribution: str, queries: int) -> None:
    rng = np.random.default_rng(0)
    vectors = synthetic_vectors(n + queries, distribution, rng)
    vectors, qs = vectors[:n], vectors[n:]
    rows = np.arange(n)
    table = VectorTable(
        row_ids=rows,
        passage_ids=np.array([f"p{i:07d}" for i in rows], dtype=object),
        vectors=vectors,
        access=np.full(n, "public", dtype=object),
        language=np.full(n, "en", dtype=object),
        doc_id=np.array([f"d{i}" for i in rows], dtype=object),
        effective_from=np.full(n, "", dtype="U10"),
        effective_to=np.full(n, "", dtype="U10"),
    )
    compare(DenseIndex.of_table(table), vectors, qs, f"synthetic {distribution}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, action="append", default=[])
    parser.add_argument("--dataset", type=Path, action="append", default=[])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--synthetic", default="")
    parser.add_argument("--distribution", default="latent")
    args = parser.parse_args()
    for db, folder in zip(args.db, args.dataset, strict=True):
        dataset(db, folder, args.queries)
    for n in filter(None, args.synthetic.split(",")):
        synthetic(int(n), args.distribution, min(args.queries, 100))


if __name__ == "__main__":
    main()
