"""Resident memory of a process that holds only a Qdrant Edge shard, by how the shard is kept.

Copies the shard folder (an index's ``--qdrant-path``, e.g. one that ``qdrant_node_rss.py``
built) to ``WORK``, loads the copy with ``qdrant_edge.EdgeShard.load`` (``--cold``: with
``Memory.Cold`` for the dense vectors, both BM25 sparse indexes, the payload and the id
tracker), runs ``--queries`` exact dense searches (depth 100, random unit vectors) and as many
sparse ones, and prints ``VmRSS``, ``RssAnon`` and ``RssFile`` (MB, ``/proc/self/status``)
before the load, after it and after the searches, as one JSON line. ``--optimize``: run
``EdgeShard.optimize()`` on the copy first (in its own process: the measured process loads
the optimized shard fresh). No kbsearch import, so what grows with the shard is Edge's.

    python benchmarks/qdrant_edge_memory.py /tmp/rss/10000/edge --work /tmp/edge_copy [--cold]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import qdrant_edge as qe

DIM = 384
DENSE, SPARSE_ALL, SPARSE_PUBLIC = "dense", "bm25", "bm25_public"  # kbsearch's vector names


def memory() -> dict[str, float]:
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "RssAnon:", "RssFile:")):
            name, value = line.split(":", 1)
            out[name] = round(int(value.split()[0]) / 1024, 1)
    return out


def cold_config() -> qe.EdgeConfig:
    cold = qe.Memory.Cold
    sparse = qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf, memory=cold)
    dense = qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine, memory=cold)
    return qe.EdgeConfig(
        vectors={DENSE: dense},
        sparse_vectors={SPARSE_ALL: sparse, SPARSE_PUBLIC: sparse},
        payload_memory=cold,
        id_tracker_memory=cold,
    )


def measure(work: Path, cold: bool, queries: int) -> dict[str, object]:
    before = memory()
    shard = qe.EdgeShard.load(str(work), cold_config()) if cold else qe.EdgeShard.load(str(work))
    loaded = memory()
    rng = np.random.default_rng(1)
    for _ in range(queries):
        v = rng.standard_normal(DIM).astype(np.float32)
        v /= np.linalg.norm(v)
        dense = qe.Query.Nearest(v.tolist(), using=DENSE)
        shard.query(qe.QueryRequest(limit=100, query=dense, params=qe.SearchParams(exact=True)))
        terms = [int(t) for t in rng.integers(0, 2**31, 5)]
        sparse = qe.Query.Nearest(
            qe.SparseVector(indices=terms, values=[1.0] * 5), using=SPARSE_PUBLIC
        )
        shard.query(qe.QueryRequest(limit=100, query=sparse))
    after = memory()
    info = shard.info()
    shard.close()
    return {"points": info.points_count, "segments": info.segments_count, "cold": cold,
            "before_load": before, "loaded": loaded, "after_searches": after}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shard", type=Path, help="A Qdrant Edge shard folder (read, not written).")
    parser.add_argument("--work", type=Path, required=True, help="Where the copy goes (replaced).")
    parser.add_argument("--cold", action="store_true", help="Load with Memory.Cold everywhere.")
    parser.add_argument("--optimize", action="store_true", help="Optimize the copy first.")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--measure-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.measure_only:
        if args.work.exists():
            shutil.rmtree(args.work)
        shutil.copytree(args.shard, args.work)
        if args.optimize:
            started = time.monotonic()
            shard = qe.EdgeShard.load(str(args.work))
            shard.optimize()
            shard.close()
            print(f"optimized in {time.monotonic() - started:.0f} s", file=sys.stderr)
        command = [sys.executable, __file__, str(args.shard), "--work", str(args.work),
                   "--queries", str(args.queries), "--measure-only"]  # fmt: skip
        subprocess.run(command + (["--cold"] if args.cold else []), check=True)
        return
    print(json.dumps({"shard": str(args.shard), **measure(args.work, args.cold, args.queries)}))


if __name__ == "__main__":
    main()
