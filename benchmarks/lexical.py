"""Lexical route speed, side by side with bm25s and rank-bm25, in one run.

    python benchmarks/lexical.py ../shared/data/scifact [--synthetic 100000]

On a BEIR folder: index time and single-thread query latency/throughput of kbsearch's lexical
route (the in-memory impact index, through ``KnowledgeBase.ranking``, after a warm-up query
that builds it; its build time is printed), of the FTS5 SQL route it reproduces, and of bm25s
and rank-bm25 on the same queries, with the same plain tokenisation (lower-cased letter/digit
runs, no stemming, no stopwords), printed as ratios; nDCG@10 of each as a sanity check that
they rank alike. Then, on a synthetic index of N passages, the latency of an unfiltered and of
a filtered query (audience + date + language) through both routes, and SQLite's plan for the
filtered one (FTS5 must drive it).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))

from _common import load_beir, percentile, summary, time_each  # noqa: E402

from kbsearch.knowledge_base import KnowledgeBase  # noqa: E402
from kbsearch.records import Document, Filters, Passage  # noqa: E402
from kbsearch.retrieve.lexical.sql import lexical_search  # noqa: E402
from kbsearch.store import Store  # noqa: E402
from kbsearch.text.analysis import Analyzer, words  # noqa: E402


def ndcg10(run: dict[str, list[str]], qrels: dict) -> float:
    import ir_measures
    from ir_measures import nDCG

    scored = {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in run.items()}
    return ir_measures.calc_aggregate([nDCG @ 10], qrels, scored)[nDCG @ 10]


def bench_beir(folder: Path, k: int) -> None:
    corpus, queries, qrels = load_beir(folder)
    texts = [f"{d.get('title', '')} {d['text']}".strip() for d in corpus]
    ids = [str(d["_id"]) for d in corpus]
    qids = list(queries)
    print(f"{folder.name}: {len(texts)} documents, {len(qids)} queries, top {k}, 1 thread\n")
    results: dict[str, dict[str, float]] = {}

    # kbsearch: the store as kbsearch writes it, one passage per document, plain analyzer
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        store = Store(Path(tmp) / "kb.db", create=True)
        analyzer = Analyzer("plain")
        for doc_id, text in zip(ids, texts, strict=True):
            doc = Document(doc_id=doc_id, version="1", title="", language="en", access="public")
            store.documents.write(
                doc, [Passage(doc_id, doc_id, "1", "", "text", text, 0)], [text], None
            )
        index_s = time.perf_counter() - start
        store.database.set_settings({"analyzer": "plain"})
        kb = KnowledgeBase(store)
        filters = Filters(audience="staff")

        def kb_search(q: str) -> list[tuple[str, float]]:
            return kb.routes["lexical"].candidates(q, filters, k)

        start = time.perf_counter()
        kb_search(queries[qids[0]])  # warm-up: builds the in-memory impact index
        build_s = time.perf_counter() - start
        impact = kb.impact_index("staff")
        print(
            f"kbsearch impact index: built on the first query in {build_s:.2f} s, "
            f"{len(impact.impacts)} postings, {impact.nbytes() / 2**20:.1f} MiB of arrays"
        )
        run = {q: [p for p, _ in kb_search(queries[q])] for q in qids}
        ms = time_each(kb_search, [queries[q] for q in qids])
        results["kbsearch"] = {
            "index_s": index_s,
            "ms": statistics.fmean(ms),
            "p50": percentile(ms, 50),
            "ndcg": ndcg10(run, qrels),
        }
        same = sum(
            kb_search(queries[q]) == lexical_search(store, analyzer, queries[q], filters, k)
            for q in qids
        )
        print(f"identical to the FTS5 SQL route (ids and scores): {same}/{len(qids)} queries")
        run = {
            q: [p for p, _ in lexical_search(store, analyzer, queries[q], filters, k)] for q in qids
        }
        ms = time_each(
            lambda q: lexical_search(store, analyzer, q, filters, k), [queries[q] for q in qids]
        )
        results["kbsearch FTS5 SQL"] = {
            "index_s": index_s,
            "ms": statistics.fmean(ms),
            "p50": percentile(ms, 50),
            "ndcg": ndcg10(run, qrels),
        }
        store.close()

    import bm25s

    start = time.perf_counter()
    tokens = [words(t) for t in texts]
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(
        bm25s.tokenize(texts, lower=True, stopwords=None, show_progress=False), show_progress=False
    )
    index_s = time.perf_counter() - start

    def vocab_tokenize(q: str) -> object:
        return bm25s.tokenize([q], lower=True, stopwords=None, show_progress=False)

    def bm25s_search(q: str) -> list[str]:
        docs, _ = retriever.retrieve(vocab_tokenize(q), k=k, n_threads=1, show_progress=False)
        return [ids[i] for i in docs[0]]

    run = {q: bm25s_search(queries[q]) for q in qids}
    ms = time_each(bm25s_search, [queries[q] for q in qids])
    results["bm25s"] = {
        "index_s": index_s,
        "ms": statistics.fmean(ms),
        "p50": percentile(ms, 50),
        "ndcg": ndcg10(run, qrels),
    }

    from rank_bm25 import BM25Okapi

    start = time.perf_counter()
    okapi = BM25Okapi(tokens, k1=1.2, b=0.75)
    index_s = time.perf_counter() - start

    def okapi_search(q: str) -> list[str]:
        scores = okapi.get_scores(words(q))
        top = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))[:k]
        return [ids[i] for i in top]

    sample = qids[:100]
    run = {q: okapi_search(queries[q]) for q in sample}
    ms = time_each(okapi_search, [queries[q] for q in sample])
    results["rank-bm25 (100 q)"] = {
        "index_s": index_s,
        "ms": statistics.fmean(ms),
        "p50": percentile(ms, 50),
        "ndcg": ndcg10(run, {q: qrels[q] for q in sample}),
    }

    base = results["kbsearch"]
    print(
        f"{'system':<20} {'index s':>8} {'ms/query':>9} {'p50 ms':>8} {'q/s':>8} "
        f"{'vs kbsearch':>12} {'nDCG@10':>8}"
    )
    for name, r in results.items():
        print(
            f"{name:<20} {r['index_s']:8.2f} {r['ms']:9.2f} {r['p50']:8.2f} "
            f"{1000 / r['ms']:8.1f} {base['ms'] / r['ms']:11.2f}x {r['ndcg']:8.3f}"
        )
    print("(vs kbsearch = kbsearch ms/query divided by that system's: >1 means it is faster)\n")


def synthetic(n: int, queries: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(20000)]
    weights = [1 / (i + 1) for i in range(len(vocab))]  # Zipf-like
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "kb.db", create=True)
        start = time.perf_counter()
        for i in range(n):
            text = " ".join(rng.choices(vocab, weights, k=60))
            doc = Document(
                doc_id=f"d{i}",
                version="1",
                title="",
                language="fr" if i % 3 == 0 else "en",
                access="staff" if i % 4 == 0 else "public",
                effective_from=date(2025, 1, 1) if i % 2 else None,
                effective_to=date(2025, 12, 31) if i % 10 == 0 else None,
            )
            store.documents.write(
                doc, [Passage(f"p{i}", f"d{i}", "1", "", "text", text, 0)], [text], None
            )
        print(f"synthetic: {n} passages written in {time.perf_counter() - start:.1f} s")
        analyzer = Analyzer("plain")
        qs = [" ".join(rng.choices(vocab[50:5000], k=4)) for _ in range(queries)]
        plain = Filters(audience="staff", as_of=date(2026, 6, 1))
        filtered = Filters(audience="public", as_of=date(2026, 6, 1), language="en")
        store.database.set_settings({"analyzer": "plain"})
        kb = KnowledgeBase(store)
        for audience in ("staff", "public"):
            start = time.perf_counter()
            kb.impact_index(audience)
            print(f"  impact index ({audience}) built in {time.perf_counter() - start:.2f} s")
        for label, filters in [("unfiltered", plain), ("filtered  ", filtered)]:
            ms = time_each(lambda q, f=filters: kb.routes["lexical"].candidates(q, f, 10), qs)
            print(f"  {label} top-10, impact index: {summary(ms)}")
            ms = time_each(lambda q, f=filters: lexical_search(store, analyzer, q, f, 10), qs)
            print(f"  {label} top-10, FTS5 SQL:     {summary(ms)}")
            same = sum(
                kb.routes["lexical"].candidates(q, filters, 10)
                == lexical_search(store, analyzer, q, filters, 10)
                for q in qs
            )
            print(f"  {label} identical results: {same}/{len(qs)} queries")
        from kbsearch.text.analysis import match_expression

        plan = store.fts.plan(match_expression(words(qs[0])), filtered, 10)
        print("  plan of the filtered query: " + " | ".join(plan))
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "dataset", type=Path, help="BEIR folder (corpus.jsonl, queries.jsonl, qrels/)"
    )
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--synthetic", type=int, default=100_000, help="0 to skip")
    parser.add_argument("--synthetic-queries", type=int, default=200)
    args = parser.parse_args()
    bench_beir(args.dataset, args.k)
    if args.synthetic:
        synthetic(args.synthetic, args.synthetic_queries)


if __name__ == "__main__":
    main()
