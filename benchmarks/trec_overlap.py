"""Top-k agreement of two TREC runs of the same queries (e.g. one route on two backends).

    python benchmarks/trec_overlap.py RUN_A RUN_B [--k 10]

Prints the mean share of run A's top k found in run B's top k, and how many queries have
identical top-k lists (same ids in the same order).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path


def read_run(path: Path) -> dict[str, list[str]]:
    """``{query: [doc ids by rank]}`` from a TREC run file (qid Q0 docid rank score tag)."""
    ranked: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            qid, _, doc, rank, _score, _tag = line.split()
            ranked[qid].append((int(rank), doc))
    return {q: [d for _, d in sorted(items)] for q, items in ranked.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    a, b = read_run(args.run_a), read_run(args.run_b)
    k = args.k
    shares = [len(set(a[q][:k]) & set(b.get(q, [])[:k])) / max(1, min(k, len(a[q]))) for q in a]
    same = sum(a[q][:k] == b.get(q, [])[:k] for q in a)
    print(
        f"{len(a)} queries: mean top-{k} overlap {sum(shares) / len(shares):.3f}, "
        f"identical top-{k} lists {same}/{len(a)}"
    )


if __name__ == "__main__":
    main()
