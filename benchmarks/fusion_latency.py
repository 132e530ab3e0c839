"""Side-by-side cost of the hybrid route's fusion methods on one index: milliseconds per query
of ``KnowledgeBase.search`` (k = 10), query vectors cached (what fusion adds, without the
encoder) and, with ``--encode``, each query encoded again as ``kbsearch eval`` times it.

    OPENBLAS_NUM_THREADS=1 python benchmarks/fusion_latency.py ../shared/data/covid_faq_en \
        --db covid.db --split dev --fusion rrf convex --repeat 3

The methods run interleaved, question by question, so that a change in the machine's load hits
them alike; the load average is printed with the table (timings on a shared machine are
ratios, not absolutes). ``--detect`` clears the query-language cache before each search
(:mod:`kbsearch.retrieve.crosslang`: in an index of several languages every new query is
detected once), the worst case of a stream of distinct queries.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import kbsearch  # noqa: E402
from kbsearch.evaluation.formats import load_questions  # noqa: E402
from kbsearch.evaluation.runner import question_filters  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--fusion", nargs="+", default=["rrf", "convex"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--encode", action="store_true", help="encode each query every time")
    parser.add_argument("--detect", action="store_true", help="detect each query's language")
    args = parser.parse_args()
    qset = load_questions(args.questions, args.split)
    times: dict[str, list[float]] = {f: [] for f in args.fusion}
    cpu: dict[str, list[float]] = {f: [] for f in args.fusion}  # the process's, all threads
    with kbsearch.open_kb(args.db) as kb:
        work = [(q.text, question_filters(q, qset.access_aware, False)) for q in qset.questions]
        for text, filters in work:  # warm: snapshot parts, query vectors
            for fusion in args.fusion:
                kb.search(text, k=10, filters=filters, fusion=fusion)
        for _ in range(args.repeat):
            for text, filters in work:
                for fusion in args.fusion:
                    if args.encode:
                        kb.clear_query_cache()
                    if args.detect:
                        from kbsearch.retrieve.crosslang import query_language

                        query_language.cache_clear()
                    start, start_cpu = time.perf_counter(), time.process_time()
                    kb.search(text, k=10, filters=filters, fusion=fusion)
                    times[fusion].append((time.perf_counter() - start) * 1000)
                    cpu[fusion].append((time.process_time() - start_cpu) * 1000)
    load = os.getloadavg()
    loads = " ".join(f"{x:.1f}" for x in load)
    print(f"{args.db} ({len(work)} questions x {args.repeat}, encode={args.encode},"
          f" detect={args.detect}); load average {loads} on {os.cpu_count()} cores")  # fmt: skip
    base = statistics.median(times[args.fusion[0]])
    for fusion, values in times.items():
        p50 = statistics.median(values)
        p95 = statistics.quantiles(values, n=20)[18]
        # CPU ms (the process's, encoder threads included) holds under another load
        cpu50 = statistics.median(cpu[fusion])
        print(f"  {fusion:<28} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  x{p50 / base:.2f}"
              f"  CPU p50 {cpu50:6.2f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
