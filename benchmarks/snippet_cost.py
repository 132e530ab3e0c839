"""What a served dense search with many hits costs, snippets included: the whole ``/search``
operation (``kbsearch.service.operations.search``: search, abstention, labels, a snippet per
hit) with ``route=dense``, ``k`` hits, for each question of the demo's question set, with the
per-process caches of sentence vectors cleared before each query (a query whose hits were
never shown: the slow case) and the query vector cached (its encoding is measured apart, by
``benchmarks/serve_costs.py``). Prints p50/p95 of wall and thread-CPU milliseconds.

Runs on older commits too (only ``open_kb``, ``operations.search``/``SearchArgs``/``Limits``):

    OPENBLAS_NUM_THREADS=1 python benchmarks/snippet_cost.py \\
        --db ~/.local/share/kbsearch/demo/helpcentre.db --k 50
    OPENBLAS_NUM_THREADS=1 PYTHONPATH=<checkout of the commit before>/src python ...  # before
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import kbsearch
from kbsearch.knowledge_base import open_kb
from kbsearch.service import operations as ops
from kbsearch.service import present

sys.path.insert(0, str(Path(__file__).parent))

from _common import demo_questions, percentile  # noqa: E402


def forget_sentences() -> None:
    """Clear the served process's sentence-vector cache, where this version has one."""
    cache = getattr(present, "SENTENCES", None)
    if cache is not None:
        cache._cache.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, type=Path)
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--queries", type=int, default=40)
    args = parser.parse_args()
    questions = demo_questions(args.queries)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "kb.db"
        shutil.copy(args.db, db)
        with open_kb(db) as kb:
            for q in questions:
                kb.query_vector(q)  # cache every query vector
            search = [ops.SearchArgs(q=q, route="dense", k=args.k) for q in questions]
            ops.search(kb, "public", search[0], ops.Limits())  # warm the route and models
            wall, cpu, hits = [], [], []
            for a in search:
                forget_sentences()
                start, start_cpu = time.perf_counter(), time.thread_time()
                page = ops.search(kb, "public", a, ops.Limits())
                wall.append((time.perf_counter() - start) * 1000)
                cpu.append((time.thread_time() - start_cpu) * 1000)
                hits.append(len(page["hits"]))
    print(f"kbsearch from {Path(kbsearch.__file__).parent}")
    print(
        f"dense /search k={args.k}, {len(questions)} queries ({statistics.fmean(hits):.1f} hits"
        f" each), sentence caches cleared per query, query vector cached:"
    )
    print(f"  wall ms  p50 {percentile(wall, 50):8.1f}  p95 {percentile(wall, 95):8.1f}")
    print(f"  CPU ms   p50 {percentile(cpu, 50):8.1f}  p95 {percentile(cpu, 95):8.1f}")


if __name__ == "__main__":
    main()
