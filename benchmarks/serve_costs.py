"""What one search request costs in-process, in CPU milliseconds of this process, every
thread (``time.process_time``: robust to other processes' load, unlike wall time; every
thread, since the ONNX embedder runs its calls on its own worker threads), on a copy of an
index, with the index's embedder on one intra-op thread:

- query encoding: one query per ONNX call, and (``--batch 8``) 8 queries in one call, with
  how far the batched vectors move from the single ones (int8 models quantise activations
  per call, so a batched vector depends on its neighbours);
- ``KnowledgeBase.search`` with the query vector cached, per route;
- the whole ``/search`` operation (search + labels + snippets) with the vector cached, and
  its snippets alone; the hybrid one also as the server runs it (:meth:`Engine.read`, from
  the served snapshot), and repeated as ``GET /search`` reads it (keyed: the result kept
  for the generation);
- building the served snapshot's parts (impact indexes and dense matrix) for one generation.

    OPENBLAS_NUM_THREADS=1 python benchmarks/serve_costs.py \\
        --db ~/.local/share/kbsearch/demo/helpcentre.db
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from kbsearch.backends.sqlite import Snapshot
from kbsearch.embedders.onnx_backend import OnnxEmbedder
from kbsearch.filters import Filters
from kbsearch.knowledge_base import open_kb
from kbsearch.service import operations as ops
from kbsearch.service.engine import Engine
from kbsearch.service.present import Catalogue, snippet_of

sys.path.insert(0, str(Path(__file__).parent))

from _common import demo_questions  # noqa: E402


def cpu_ms(fn: Callable[[], object], repeat: int = 1) -> float:
    """Median CPU milliseconds of this process (every thread) per call of ``fn``."""
    samples = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        samples.append((time.process_time() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, type=Path)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--queries", type=int, default=48)
    args = parser.parse_args()
    questions = demo_questions(args.queries)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "kb.db"
        shutil.copy(args.db, db)
        with open_kb(db) as kb:
            embedder = kb.embedder()
            assert embedder is not None, "the index has no embedder"
            out: dict[str, float] = {}
            embedder.encode_queries(questions[:2])  # warm the session
            singles = [cpu_ms(lambda q=q: embedder.encode_queries([q])) for q in questions]
            out["encode 1 query per call"] = statistics.median(singles)
            one = np.stack([embedder.encode_queries([q])[0] for q in questions[: args.batch]])
            batched_embedder = OnnxEmbedder(
                embedder.model_dir, num_threads=1, batch_size=args.batch
            )
            groups = [
                questions[i : i + args.batch]
                for i in range(0, len(questions) - args.batch + 1, args.batch)
            ]
            per_query = [cpu_ms(lambda g=g: batched_embedder.encode_queries(g)) / len(g)
                         for g in groups]  # fmt: skip
            out[f"encode {args.batch} queries per call, per query"] = statistics.median(per_query)
            batched = batched_embedder.encode_queries(questions[: args.batch])
            out["batched vs single: lowest cosine"] = float(np.min(np.sum(one * batched, 1)))
            for q in questions:
                kb.query_vector(q)  # cache every vector
            public = Filters(audience="public")
            for route in ("lexical", "dense", "hybrid"):
                out[f"search {route}, k=11, vector cached"] = statistics.median(
                    cpu_ms(lambda q=q, r=route: kb.search(q, k=11, route=r, filters=public))
                    for q in questions
                )
            for route in ("lexical", "hybrid"):
                arguments = [ops.SearchArgs(q=q, route=route) for q in questions]
                for a in arguments:  # warm the caches
                    ops.search(kb, "public", a, ops.Limits())
                out[f"whole /search operation {route}"] = statistics.median(
                    cpu_ms(lambda a=a: ops.search(kb, "public", a, ops.Limits())) for a in arguments
                )
            engine = Engine(db, workers=1)  # as the server: from the served snapshot
            try:
                arguments = [ops.SearchArgs(q=q, route="hybrid") for q in questions]
                for a in arguments:  # cache the vectors, warm the snippets
                    engine.read(lambda kb, a=a: ops.search(kb, "public", a, ops.Limits()))
                out["whole /search hybrid, served (Engine.read)"] = statistics.median(
                    cpu_ms(lambda a=a: engine.read(
                        lambda kb: ops.search(kb, "public", a, ops.Limits())))
                    for a in arguments
                )  # fmt: skip
                # as GET /search does: keyed by its arguments, so a search repeated on the
                # same generation is the result kept for it (Engine.read's key)
                for a in arguments:
                    engine.read(lambda kb, a=a: ops.search(kb, "public", a, ops.Limits()),
                                key=lambda a=a: ("search", "public", a))  # fmt: skip
                out["the same /search again, served (keyed)"] = statistics.median(
                    cpu_ms(lambda a=a: engine.read(
                        lambda kb: ops.search(kb, "public", a, ops.Limits()),
                        key=lambda: ("search", "public", a)))
                    for a in arguments
                )  # fmt: skip
            finally:
                engine.close()
            hits = [(q, kb.search(q, k=10, filters=public)) for q in questions]
            catalogue = Catalogue(kb)

            def snippets(q: str, found: list) -> None:
                for h in found:
                    labels = catalogue.labels(h.doc_id, h.version)
                    snippet_of(kb, q, h.text, labels.get("title", ""), h.section, "en")

            out["10 snippets"] = statistics.median(cpu_ms(lambda q=q, f=f: snippets(q, f))
                                                    for q, f in hits)  # fmt: skip
            backend = kb.backend
            dim = embedder.dim

            def rebuild() -> None:
                with kb.store.database.read_transaction():
                    snapshot = Snapshot(kb.store.database.generation())  # a fresh one, never shared
                    with backend.using(snapshot):
                        for audience in ("public", "staff"):
                            backend.impact_index(audience)
                        backend.dense_index(dim)

            out["snapshot build (impact x2 + dense)"] = cpu_ms(rebuild, 3)
        for name, value in out.items():
            print(f"{name:45s} {value:9.4f}")


if __name__ == "__main__":
    main()
