"""The dense route on a Qdrant Edge index, before and after the quantized copy, in one run.

Opens the Qdrant-backed index ``DB`` (the target it recorded) and, for each query vector, takes
the top ``--depth`` passages (the public audience, today) three ways:

- ``after``: what the backend does now with HNSW (``QdrantBackend.dense_candidates`` with
  ``exact=False``): HNSW over the quantized copy, ``4 x depth`` candidates with their quantized
  scores, named and rescored exactly from SQLite (the Qdrant and the SQLite parts timed apart);
  ``after_xF`` for each other ``--factors`` F: ``F x depth`` candidates instead;
- ``before``: HNSW on the original vectors with Qdrant's scores (``hnsw_ef`` 256, the
  quantized copy ignored: what the backend did before it, on a shard without one);
- ``exact``: Qdrant's exact scan (the reference).

Prints one JSON line: per mode the median and 95th percentile latency (ms, after
``--warm-up`` queries) and Recall@10 against ``exact`` (the share of the exact top 10 in the
mode's top 10). Modes run one after another in that order (``exact`` last: its full scan
pages in every vector). Query vectors: ``--questions`` (a BEIR ``queries.jsonl``, encoded
with the index's embedder), else ``--random`` random unit vectors (seeded).

    OPENBLAS_NUM_THREADS=1 python benchmarks/qdrant_dense_rescore.py /tmp/qnode4/rss/200000/kb.db
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from kbsearch import open_kb  # noqa: E402  (after the thread setting)
from kbsearch.backends.qdrant import dense as dense_module  # noqa: E402
from kbsearch.backends.qdrant.backend import QdrantBackend  # noqa: E402
from kbsearch.backends.qdrant.collection import TIE_MARGIN, ranked  # noqa: E402
from kbsearch.backends.qdrant.edge import EdgeCollection, edge_filter  # noqa: E402
from kbsearch.backends.qdrant.filters import to_qdrant  # noqa: E402
from kbsearch.backends.qdrant.points import DENSE  # noqa: E402
from kbsearch.filters import Filters  # noqa: E402

Ranking = list[tuple[str, float]]


def query_vectors(kb, args: argparse.Namespace, dim: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    if args.questions:
        lines = args.questions.read_text(encoding="utf-8").splitlines()
        texts = [json.loads(line)["text"] for line in lines if line.strip()][: args.random]
        return np.stack([kb.query_vector(t) for t in texts])
    x = np.random.default_rng(1).standard_normal((args.random, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def hnsw_on_originals(collection: EdgeCollection, ef: int) -> Callable[..., Ranking]:
    import qdrant_edge as qe

    def search(vector: np.ndarray, where, depth: int) -> Ranking:  # type: ignore[no-untyped-def]
        found = collection._open().query(
            qe.QueryRequest(
                limit=depth + TIE_MARGIN,
                query=qe.Query.Nearest([float(x) for x in vector], using=DENSE),
                filter=edge_filter(where),
                params=qe.SearchParams(
                    hnsw_ef=ef, quantization=qe.QuantizationSearchParams(ignore=True)
                ),
                with_payload=["passage_id"],
            )
        )
        return ranked([(str(p.payload["passage_id"]), float(p.score)) for p in found], depth)

    return search


def summary(times: list[float]) -> dict[str, float]:
    ms = np.array(times) * 1000
    median, p95 = float(np.median(ms)), float(np.percentile(ms, 95))
    return {"median_ms": round(median, 1), "p95_ms": round(p95, 1)}


def timed(function: Callable[..., Any], parts: dict[str, float], part: str) -> Callable[..., Any]:
    """``function``, adding the seconds each call takes to ``parts[part]``."""

    def call(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            parts[part] += time.perf_counter() - started

    return call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path, help="A Qdrant Edge-backed index.")
    parser.add_argument("--questions", type=Path, help="BEIR queries.jsonl to encode.")
    parser.add_argument("--random", type=int, default=50, help="Query vectors (at most).")
    parser.add_argument("--depth", type=int, default=100, help="Candidates asked for.")
    parser.add_argument("--warm-up", type=int, default=3)
    parser.add_argument(
        "--factors", type=int, nargs="+", default=[4], help="Candidates per result to rescore."
    )
    args = parser.parse_args()
    with open_kb(args.db) as kb:
        backend = kb.backend
        if not isinstance(backend, QdrantBackend) or not isinstance(
            backend.collection, EdgeCollection
        ):
            raise SystemExit(f"{args.db} is not a Qdrant Edge-backed index")
        dim = backend.dimension() or 0
        vectors = query_vectors(kb, args, dim)
        filters = Filters()
        where = to_qdrant(filters)
        backend.exact = False
        parts = {"qdrant": 0.0, "sqlite": 0.0}
        real_query = backend.collection.query
        real_points, real_rescored = backend.collection.point_candidates, dense_module.rescored

        points = timed(real_points, parts, "qdrant")
        backend.collection.point_candidates = points  # type: ignore[method-assign]
        dense_module.rescored = timed(real_rescored, parts, "sqlite")
        before = hnsw_on_originals(backend.collection, 256)

        def after(factor: int) -> Callable[[np.ndarray], Ranking]:
            def run(v: np.ndarray) -> Ranking:
                dense_module.RESCORE_FACTOR = factor
                return backend.dense_candidates(v, filters, args.depth)

            return run

        modes: dict[str, Callable[[np.ndarray], Ranking]] = {
            ("after" if f == dense_module.RESCORE_FACTOR else f"after_x{f}"): after(f)
            for f in sorted(set(args.factors), reverse=True)
        }
        modes["before"] = lambda v: before(v, where, args.depth)
        modes["exact"] = lambda v: real_query(DENSE, v, where, args.depth, exact=True)
        results: dict[str, list[list[str]]] = {}
        out: dict[str, object] = {"db": str(args.db), "queries": len(vectors), "depth": args.depth}
        for name, run in modes.items():
            for v in vectors[: args.warm_up]:
                run(v)
            parts.update(qdrant=0.0, sqlite=0.0)
            times, tops = [], []
            for v in vectors:
                started = time.perf_counter()
                found = run(v)
                times.append(time.perf_counter() - started)
                tops.append([pid for pid, _ in found[:10]])
            results[name] = tops
            out[name] = summary(times)
            if name.startswith("after"):
                out[f"{name}_parts_mean_ms"] = {
                    k: round(1000 * t / len(vectors), 1) for k, t in parts.items()
                }
        for name in [m for m in modes if m != "exact"]:
            hits = [
                len(set(a) & set(e)) / max(len(e), 1)
                for a, e in zip(results[name], results["exact"], strict=True)
            ]
            out[name]["recall_at_10"] = round(float(np.mean(hits)), 3)  # type: ignore[index]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
