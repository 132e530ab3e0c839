"""Server-side RRF (Qdrant's Query API: prefetch + ``Fusion.Rrf``) against kbsearch's RRF.

    OPENBLAS_NUM_THREADS=1 python benchmarks/qdrant_fusion.py QUESTIONS --db COPY.db \
        [--split final] [--limit 0]

``COPY.db`` is an index synced to Qdrant Edge (``kbsearch sync --db COPY.db --qdrant-path
DIR``). For each question (searched as ``kbsearch eval`` searches it: the question's audience,
language and day):

- kbsearch: the hybrid top 10 of the pipeline on the Qdrant backend (each route's top 100 from
  Qdrant Edge, fused by :func:`kbsearch.fuse.rrf.reciprocal_rank_fusion`, k 10, ties by
  evidence);
- Qdrant: one Edge query with two prefetches, the same dense query vector (exact) and the same
  sparse query (the kept terms) on the same sparse vector, each ``limit`` 100 with the same
  filter, fused by ``Fusion.Rrf(k=11)``, limit 10. Qdrant scores 0-based position ``p`` as
  ``1 / (p + k)``, so its k 11 is kbsearch's ``1 / (10 + rank)``.

Printed: questions whose top 10 is identical (same ids, same order), the same set, and the
mean overlap; each difference is put down to the first cause that applies: the lexical list
was filled with clamped-term matches (a prefetch has no such fill), kbsearch's fused scores tie
within the top 11 (Qdrant leaves ties in hash order), or other (float32 sums).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import qdrant_edge as qe  # noqa: E402

from kbsearch.backends.qdrant.backend import QdrantBackend  # noqa: E402
from kbsearch.backends.qdrant.edge import EdgeCollection, edge_filter  # noqa: E402
from kbsearch.backends.qdrant.filters import to_qdrant  # noqa: E402
from kbsearch.backends.qdrant.points import DENSE, SPARSE_ALL, SPARSE_PUBLIC  # noqa: E402
from kbsearch.backends.qdrant.sparse import query_vector  # noqa: E402
from kbsearch.evaluation.formats import load_questions  # noqa: E402
from kbsearch.filters import Audience, Filters  # noqa: E402
from kbsearch.knowledge_base import open_kb  # noqa: E402

K, DEPTH, RRF_K = 10, 100, 10


def server_fused(shard: Any, captured: dict[str, Any], filters: Filters) -> list[str]:
    """Qdrant Edge's own RRF of the two routes' queries (module docstring)."""
    where = edge_filter(to_qdrant(filters))
    using = SPARSE_ALL if filters.staff else SPARSE_PUBLIC
    prefetches = [
        qe.Prefetch(
            limit=DEPTH,
            query=qe.Query.Nearest([float(x) for x in captured["vector"]], using=DENSE),
            params=qe.SearchParams(exact=True),
            filter=where,
        )
    ]
    indices, values = query_vector(captured["terms"].kept)
    if indices:
        sparse = qe.SparseVector(indices=indices, values=values)
        prefetches.append(
            qe.Prefetch(limit=DEPTH, query=qe.Query.Nearest(sparse, using=using), filter=where)
        )
    found = shard.query(
        qe.QueryRequest(
            prefetches=prefetches,
            query=qe.Fusion.Rrf(k=RRF_K + 1),
            limit=K,
            with_payload=["passage_id"],
        )
    )
    return [str(p.payload["passage_id"]) for p in found]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--split", default="final")
    parser.add_argument("--limit", type=int, default=0, help="first N questions only (0: all)")
    args = parser.parse_args()
    qset = load_questions(args.questions, args.split)
    kb = open_kb(args.db)
    backend = kb.backend
    if not isinstance(backend, QdrantBackend) or not isinstance(backend.collection, EdgeCollection):
        sys.exit(f"{args.db} is not synced to Qdrant Edge (kbsearch sync --qdrant-path DIR)")
    captured: dict[str, Any] = {}
    lexical, dense = backend.lexical_candidates, backend.dense_candidates

    def lexical_spy(terms, filters, depth):  # type: ignore[no-untyped-def]
        captured["terms"] = terms
        return lexical(terms, filters, depth)

    def dense_spy(vector, filters, depth):  # type: ignore[no-untyped-def]
        captured["vector"] = vector
        return dense(vector, filters, depth)

    backend.lexical_candidates = lexical_spy  # type: ignore[method-assign]
    backend.dense_candidates = dense_spy  # type: ignore[method-assign]
    questions = qset.questions[: args.limit or None]
    same_list = same_set = 0
    overlap = 0.0
    causes: Counter[str] = Counter()
    for q in questions:
        audience = Audience.PUBLIC if qset.access_aware and q.public_ok else Audience.STAFF
        filters = Filters(audience=audience, as_of=q.as_of, language=q.language)
        captured.clear()
        hits = kb.search(
            q.text, k=K, route="hybrid", filters=filters, rrf_k=RRF_K, depth=DEPTH, fusion="rrf"
        )
        ours = [h.passage_id for h in hits]
        theirs = server_fused(backend.collection.shard, captured, filters)
        overlap += len(set(ours) & set(theirs)) / max(len(ours), 1)
        if ours == theirs:
            same_list += 1
            same_set += 1
            continue
        same_set += set(ours) == set(theirs)
        fused = kb.search(
            q.text, k=K + 1, route="hybrid", filters=filters, rrf_k=RRF_K, depth=DEPTH, fusion="rrf"
        )
        scores = [round(h.score, 12) for h in fused]
        lexical_len = len(backend.lexical_candidates(captured["terms"], filters, DEPTH))
        kept_len = len(
            backend.collection.query(
                SPARSE_ALL if filters.staff else SPARSE_PUBLIC,
                query_vector(captured["terms"].kept),
                to_qdrant(filters),
                DEPTH,
            )
        )
        if lexical_len > kept_len:
            causes["lexical list filled with clamped-term matches"] += 1
        elif len(set(scores)) < len(scores):
            causes["tied fused scores within the top 11"] += 1
        else:
            causes["other"] += 1
    n = len(questions)
    print(
        f"{args.questions.name} ({args.split}, {n} questions): identical top-{K} lists "
        f"{same_list}/{n}, identical sets {same_set}/{n}, mean overlap {overlap / n:.3f}"
    )
    for cause, count in causes.most_common():
        print(f"  differs: {cause}: {count}")
    kb.close()


if __name__ == "__main__":
    main()
