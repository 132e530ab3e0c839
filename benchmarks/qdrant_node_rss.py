"""Resident memory of a ``kbsearch serve`` search node over a Qdrant Edge index, by size.

Builds (unless present) a Qdrant Edge-backed index of ``N`` synthetic passages for each size
given: documents of ``--per-document`` passages (1,000) whose texts draw words from a fixed
synthetic vocabulary and whose vectors are random unit vectors (the index records the default
embedder, so a query is encoded as usual; its vector is compared with random ones, which is
what costs memory, not what finds answers). Then for each index starts ``kbsearch serve`` in a
fresh process, sends ``--queries`` searches and asks (five questions in turn, or
``--distinct`` ones; their median latency, ms, as the client sees it), and reads the server's
resident set (``VmRSS``) and peak (``VmHWM``) from ``/proc``. Prints one JSON line per size
and the growth from the smallest to the largest.

    OPENBLAS_NUM_THREADS=1 python benchmarks/qdrant_node_rss.py --work /tmp/rss 10000 200000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

DIM = 384
VOCABULARY = 20_000
QUERIES = [
    "how long does a refund take",
    "where is my parcel",
    "can I return an opened item",
    "what does the warranty cover",
    "gift card balance",
]


def words(rng: random.Random, n: int) -> str:
    return " ".join(f"w{rng.randrange(VOCABULARY):05d}" for _ in range(n))


def synthetic_document(d: int, count: int, seed: Path) -> tuple[Any, list[Any], np.ndarray]:
    """Document ``d`` of ``count`` passages, its passages and their unit vectors, the same on
    every call (seeded by ``d``, so the Qdrant pass regenerates what the SQLite pass wrote)."""
    from kbsearch.records import Document, Passage

    rng, vectors_rng = random.Random(d), np.random.default_rng(d)
    doc = Document(
        doc_id=f"doc{d:06d}",
        version="1",
        title=f"Document {d}",
        language="en",
        access="public" if d % 4 else "staff",
        source=str(seed / f"doc{d:06d}.md"),
    )
    texts = [f"Document {d}\nSection {i}\n{words(rng, 30)}" for i in range(count)]
    rows = [
        Passage(f"{doc.doc_id}@v1#s{i}", doc.doc_id, "1", f"Section {i}", "text", t, i)
        for i, t in enumerate(texts)
    ]
    x = vectors_rng.standard_normal((count, DIM)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return doc, rows, x


def build(db: Path, edge: Path, passages: int, per_document: int) -> None:
    """An index of ``passages`` synthetic passages at ``db`` with its Qdrant Edge shard, written
    in bulk: every document into SQLite first (the store's one-transaction document write;
    the synthetic words are their own stems, so the lowercased text is the analysed body),
    then every point into the shard in batches of 5,000 with the final average lengths (what
    ``kbsearch sync`` writes), then the point ids' passage rows, the collection statistics and
    the shard's optimization (``QdrantBackend.record_point_ids``, ``save_statistics``,
    ``optimize``: what the end of an index run does)."""
    from kbsearch import open_kb
    from kbsearch.backends.qdrant.backend import QdrantBackend
    from kbsearch.backends.qdrant.points import passage_points
    from kbsearch.backends.qdrant.sparse import SparseWeights
    from kbsearch.backends.qdrant.target import QdrantTarget

    seed = db.parent / "seed"
    seed.mkdir(parents=True, exist_ok=True)
    (seed / "refunds.md").write_text(
        "# Refunds\n\n## Timing\n\nA refund reaches your card in 5 days.\n", encoding="utf-8"
    )
    documents = [
        (d, min(per_document, passages - d * per_document))
        for d in range((passages + per_document - 1) // per_document)
    ]
    with open_kb(db, create=True, qdrant=QdrantTarget(path=str(edge))) as kb:
        # one real document records the default embedder's settings and the Qdrant target
        if not kb.index([seed], default_access="public").ok:
            raise RuntimeError("the seed document was not indexed")
        backend = kb.backend
        if not isinstance(backend, QdrantBackend):
            raise RuntimeError(f"not a Qdrant backend: {backend!r}")
        started = time.monotonic()
        for d, count in documents:
            doc, rows, x = synthetic_document(d, count, seed)
            backend.sqlite.write_document(doc, rows, [r.text.lower() for r in rows], x)
        print(f"  SQLite: {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
        lengths, collection, points = backend.lengths(), backend.collection, []
        for d, count in documents:
            doc, rows, x = synthetic_document(d, count, seed)
            sparse = [SparseWeights.from_body(r.text.lower()) for r in rows]
            points += passage_points(doc, rows, sparse, x)
            if len(points) >= 5000 or d == documents[-1][0]:
                collection.upsert(points, lengths)
                points = []
        print(f"  points: {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
        backend.record_point_ids()
        backend.save_statistics()
        backend.optimize()
        segments, stored, indexed = collection.info()  # type: ignore[attr-defined]
        done = f"{time.monotonic() - started:.0f} s"
        print(f"  optimized: {done}, {segments} segments, {stored} points, {indexed} indexed "
              "vectors", file=sys.stderr, flush=True)  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def memory(pid: int) -> dict[str, int]:
    """``VmRSS``, ``VmHWM`` (peak), ``RssAnon`` (the process's own memory) and ``RssFile``
    (mapped file pages: the model, Qdrant Edge's segment files) of ``pid``, in kB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:", "RssAnon:", "RssFile:")):
            name, value = line.split(":", 1)
            out[name] = int(value.split()[0])
    return out


def shard_pages(pid: int, edge: Path) -> dict[str, int]:
    """Resident kB of each kind of file of the Qdrant Edge shard in ``edge`` that ``pid``
    maps (``/proc/PID/smaps``; kinds by file name, e.g. ``matrix.dat``: the dense vectors,
    ``links_compressed.bin``: the HNSW graph; ``wal``: any write-ahead log segment), over
    1 MB."""
    out: dict[str, int] = {}
    name = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if len(head) >= 5 and "-" in head[0] and ":" not in head[0]:
            name = head[5] if len(head) > 5 else ""
        elif line.startswith("Rss:") and name.startswith(str(edge)):
            kind = "wal" if "/wal/" in name else Path(name).name
            out[kind] = out.get(kind, 0) + int(head[1])
    return {k: v for k, v in sorted(out.items(), key=lambda kv: -kv[1]) if v >= 1024}


def get(port: int, path: str, **params: object) -> dict:
    url = f"http://127.0.0.1:{port}{path}?{urllib.parse.urlencode(params)}"
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.loads(response.read())


def questions(queries: int, distinct: bool) -> list[str]:
    """``queries`` questions: :data:`QUERIES` in turn, or (``distinct``) each one different
    (one of them with a word of the synthetic vocabulary: other vectors, other candidates)."""
    if not distinct:
        return [QUERIES[i % len(QUERIES)] for i in range(queries)]
    step = VOCABULARY // max(queries, 1)
    return [f"{QUERIES[i % len(QUERIES)]} w{i * step:05d}" for i in range(queries)]


def serve(db: Path, queries: int, distinct: bool = False) -> dict[str, object]:
    """Start ``kbsearch serve`` on ``db``, search and ask ``queries`` times (:func:`questions`),
    read its memory."""
    port = free_port()
    command = [sys.executable, "-m", "kbsearch", "serve", "--db", str(db), "--port", str(port),
               "--time-limit", "300"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        started = time.monotonic()
        while True:
            try:
                get(port, "/search", q="refund")
                break
            except OSError as exc:
                if process.poll() is not None or time.monotonic() - started > 300:
                    stderr = process.stderr.read().decode() if process.stderr else ""
                    raise RuntimeError(stderr) from exc
                time.sleep(0.5)
        first = memory(process.pid)
        took: dict[str, list[float]] = {"/search": [], "/ask": []}
        for question in questions(queries, distinct):
            for path, params in (("/search", {"k": 10}), ("/ask", {})):
                started = time.perf_counter()
                get(port, path, q=question, **params)
                took[path].append(time.perf_counter() - started)
        after = memory(process.pid)
        return {
            "rss_first_kb": first["VmRSS"],
            "rss_kb": after["VmRSS"],
            "peak_kb": after["VmHWM"],
            "anon_kb": after["RssAnon"],
            "file_kb": after["RssFile"],
            "shard_kb": shard_pages(process.pid, db.parent / "edge"),
            "search_ms_median": round(1000 * float(np.median(took["/search"])), 1),
            "ask_ms_median": round(1000 * float(np.median(took["/ask"])), 1),
        }
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", type=int, nargs="+", help="Passages per index.")
    parser.add_argument("--work", type=Path, required=True, help="Folder of the indexes.")
    parser.add_argument("--per-document", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=20, help="Searches and asks each.")
    parser.add_argument("--distinct", action="store_true", help="Every question different.")
    args = parser.parse_args()
    results = []
    for size in args.sizes:
        folder = args.work / str(size)
        db = folder / "kb.db"
        if not db.exists():
            folder.mkdir(parents=True, exist_ok=True)
            started = time.monotonic()
            build(db, folder / "edge", size, args.per_document)
            print(f"built {size} passages in {time.monotonic() - started:.0f} s", file=sys.stderr)
        result = {"passages": size, **serve(db, args.queries, args.distinct)}
        results.append(result)
        print(json.dumps(result), flush=True)
    if len(results) > 1:

        def growth(key: str) -> float:
            return round((results[-1][key] - results[0][key]) / 1024, 1)  # type: ignore[operator]

        print(json.dumps({f"{k}_growth_mb": growth(f"{k}_kb") for k in ("rss", "anon", "file")}))


if __name__ == "__main__":
    main()
