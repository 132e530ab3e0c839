"""What a Qdrant-backed search node holds in Python objects, beside its resident memory.

Opens the index ``DB`` in this process (the Qdrant target it recorded), with ``tracemalloc``
started after the imports and before ``open_kb``, runs ``--queries`` searches and asks, and
prints one JSON line: ``VmRSS``, ``RssAnon``, ``RssFile`` (MB) before the open and after the
queries, and the Python allocations still live then (kB, ``tracemalloc``); then the largest
live allocations by line. Run it on two sizes of the same synthetic index
(``qdrant_node_rss.py``): what grows in ``RssAnon`` but not in the traced total is held by
native code (Qdrant Edge, ONNX Runtime), not by kbsearch's Python structures.

    OPENBLAS_NUM_THREADS=1 python benchmarks/qdrant_node_traced.py /tmp/rss/10000/kb.db
"""

from __future__ import annotations

import argparse
import json
import tracemalloc
from pathlib import Path

from qdrant_node_rss import QUERIES  # this folder: the same questions as the served run

import kbsearch.backends.qdrant.backend  # noqa: F401  (imported before the trace starts)
from kbsearch import open_kb


def memory() -> dict[str, int]:
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "RssAnon:", "RssFile:")):
            name, value = line.split(":", 1)
            out[name] = int(value.split()[0]) // 1024
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path, help="A Qdrant-backed index (qdrant_node_rss.py).")
    parser.add_argument("--queries", type=int, default=20, help="Searches and asks each.")
    parser.add_argument("--top", type=int, default=10, help="Largest allocations to list.")
    args = parser.parse_args()
    before = memory()
    tracemalloc.start()
    with open_kb(args.db) as kb:
        for i in range(args.queries):
            kb.search(QUERIES[i % len(QUERIES)], k=10)
            kb.ask(QUERIES[i % len(QUERIES)])
        snapshot = tracemalloc.take_snapshot()
        after = memory()
    traced = sum(s.size for s in snapshot.statistics("filename")) // 1024
    print(json.dumps({"db": str(args.db), "before_open_mb": before, "after_mb": after,
                      "python_traced_kb": traced}))  # fmt: skip
    for stat in snapshot.statistics("lineno")[: args.top]:
        print(f"  {stat.size // 1024:8d} kB {stat.count:8d} blocks  {stat.traceback[0]}")


if __name__ == "__main__":
    main()
