"""Recall of the Qdrant dense route's quantized HNSW search on real E5 vectors, by rescoring factor.

Reads every passage vector of the index ``DB`` (SQLite, any backend) and the questions of a
BEIR folder's ``--split`` (encoded with the index's embedder), writes the vectors to a fresh
Qdrant Edge shard in ``--work`` with kbsearch's dense settings (cosine, the quantized copy of
:func:`kbsearch.backends.qdrant.edge.dense_quantization`, HNSW m 16, ef_construct 100) and has
Edge index it whatever its size (indexing and full-scan thresholds lowered: the shared
datasets are far below the sizes where the backend itself leaves exact search), then for each
question takes the top ``--depth`` as :func:`kbsearch.backends.qdrant.dense.dense_candidates`
does: ``F x depth`` candidates by HNSW over the quantized copy (their quantized scores), cut
after rescoring with the exact cosines. Prints one JSON line: Recall@10 against the exact top 10
(numpy over the same vectors) for each factor ``F`` of ``--factors``, and for the quantized
scores alone (no rescoring).

    OPENBLAS_NUM_THREADS=1 python benchmarks/qdrant_quantized_recall.py /tmp/e5/piaf.db \
        /work/shared/data/piaf_fr --work /tmp/e5/recall_shard
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import qdrant_edge as qe  # noqa: E402

from kbsearch import open_kb  # noqa: E402
from kbsearch.backends.qdrant.edge import dense_quantization  # noqa: E402


def questions(folder: Path, split: str) -> list[str]:
    wanted = {
        line.split("\t")[0]
        for line in (folder / "qrels" / f"{split}.tsv").read_text().splitlines()[1:]
    }
    out = []
    for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            if str(q["_id"]) in wanted:
                out.append(str(q["text"]))
    return out


def shard(work: Path, vectors: np.ndarray) -> qe.EdgeShard:
    """A shard of ``vectors`` (point ids 0..n-1), quantized and HNSW-indexed."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    dense = qe.EdgeVectorParams(
        size=vectors.shape[1],
        distance=qe.Distance.Cosine,
        memory=qe.Memory.Cold,
        quantization_config=dense_quantization(),
    )
    config = qe.EdgeConfig(
        vectors={"dense": dense},
        hnsw_config=qe.HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=1),
        optimizers=qe.EdgeOptimizersConfig(indexing_threshold=1, default_segment_number=1),
        wal_enabled=False,
    )
    edge = qe.EdgeShard.create(str(work), config)
    points = [qe.Point(i, {"dense": v.tolist()}) for i, v in enumerate(vectors)]
    for start in range(0, len(points), 1000):
        edge.update(qe.UpdateOperation.upsert_points(points[start : start + 1000]))
    edge.flush()
    edge.optimize()
    return edge


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path, help="An index with vectors.")
    parser.add_argument("beir", type=Path, help="Its BEIR folder (queries.jsonl, qrels/).")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--work", type=Path, required=True, help="Shard folder (replaced).")
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--ef", type=int, default=256, help="hnsw_ef floor (the backend's).")
    parser.add_argument("--factors", type=int, nargs="+", default=[1, 2, 3, 4])
    parser.add_argument("--max-questions", type=int, default=400)
    args = parser.parse_args()
    with open_kb(args.db) as kb:
        dim = kb.store.database.index_settings().dim  # type: ignore[union-attr]
        matrix = kb.store.vectors.table(dim).vectors
        texts = questions(args.beir, args.split)[: args.max_questions]
        queries = np.stack([kb.query_vector(t) for t in texts])
    edge = shard(args.work, matrix)
    info = edge.info()
    depth = min(args.depth, len(matrix) // 8)
    exact = np.argsort(-(queries @ matrix.T), axis=1, kind="stable")[:, :10]
    recall: dict[str, float] = {}
    for factor in [0, *args.factors]:  # 0: the quantized scores alone
        fetch = max(factor, 1) * depth
        hits = []
        for q, truth in zip(queries, exact, strict=True):
            found = edge.query(
                qe.QueryRequest(
                    limit=fetch,
                    query=qe.Query.Nearest(q.tolist(), using="dense"),
                    params=qe.SearchParams(
                        hnsw_ef=max(args.ef, fetch),
                        quantization=qe.QuantizationSearchParams(rescore=False),
                    ),
                )
            )
            ids = np.array([int(p.id) for p in found])
            if factor:
                ids = ids[np.argsort(-(matrix[ids] @ q), kind="stable")]
            hits.append(len(set(ids[:10].tolist()) & set(truth.tolist())) / 10)
        recall["quantized_only" if factor == 0 else f"x{factor}"] = round(float(np.mean(hits)), 3)
    edge.close()
    print(json.dumps({"db": str(args.db), "passages": len(matrix), "questions": len(queries),
                      "depth": depth, "indexed_vectors": info.indexed_vectors_count,
                      "recall_at_10": recall}))  # fmt: skip


if __name__ == "__main__":
    main()
