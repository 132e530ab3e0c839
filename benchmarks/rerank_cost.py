"""What a cross-encoder costs per passage on this machine: one query against the first N
passages of a BEIR corpus, scored by a sentence-transformers ``CrossEncoder`` folder with each
torch thread count and batch size asked for (the rerank stage scores one pair at a time on the
CPU because of what this prints: a batch is padded to its longest pair).

    python benchmarks/rerank_cost.py /tmp/rr-ce ../shared/data/covid_faq_en \\
        --passages 30 --threads 1,2 --batches 1,4,30

Prints, per (threads, batch size), the wall time of scoring the N pairs (best of ``--repeat``,
after one warm-up call) and the time per pair. State the machine's load (``uptime``) with it.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from _common import read_jsonl

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", type=Path, help="a CrossEncoder folder")
    parser.add_argument("corpus", type=Path, help="a BEIR folder (its corpus.jsonl)")
    parser.add_argument("--query", default="Who is likely to develop COVID-19 symptoms?")
    parser.add_argument("--passages", type=int, default=30)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--batches", default="1,4,30")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import torch
    from sentence_transformers import CrossEncoder

    rows = read_jsonl(args.corpus / "corpus.jsonl")[: args.passages]
    pairs = [(args.query, f"{r.get('title', '')}\n{r['text']}".strip()) for r in rows]
    model = CrossEncoder(str(args.model), local_files_only=True)
    tokens = [len(model.tokenizer(q, t, truncation=True)["input_ids"]) for q, t in pairs]
    print(f"{len(pairs)} pairs, {sum(tokens) / len(tokens):.0f} tokens on average, "
          f"longest {max(tokens)}; load {os.getloadavg()[0]:.1f}")  # fmt: skip
    print("threads  batch  ms (all pairs)  ms a pair")
    for threads in (int(x) for x in args.threads.split(",")):
        torch.set_num_threads(threads)
        for batch in (int(x) for x in args.batches.split(",")):
            model.predict(pairs[:batch], batch_size=batch, show_progress_bar=False)
            best = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                model.predict(pairs, batch_size=batch, show_progress_bar=False)
                best = min(best, time.perf_counter() - start)
            print(
                f"{threads:>7}  {batch:>5}  {best * 1000:>14.0f}  {best * 1000 / len(pairs):>9.1f}"
            )


if __name__ == "__main__":
    main()
