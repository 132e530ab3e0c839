"""Fusion settings on a grid, from one pass of searches: which RRF k, route weights and depth
would serve a dataset, and the TREC runs to test a choice with ``kbsearch compare``.

    python benchmarks/fusion_grid.py ../shared/data/covid_faq_en --db covid.db \
        --write "k=60,w=1:1,d=100" --write "k=60,w=1:2,d=100" --run-dir runs/covid

Each question is searched once per route at depth 100 (the index's own filters and judging
rules, as ``kbsearch eval`` does); every setting is then fused from those lists, so a grid of
dozens of settings costs no more searches. Choose on one dataset, then check the choice with
``kbsearch compare`` on another: a setting is only worth keeping when the paired test calls its
gain significant on a dataset it was not chosen on.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import kbsearch  # noqa: E402
from kbsearch.evaluation.formats import load_questions  # noqa: E402
from kbsearch.evaluation.judging import judge_hits, set_qrels  # noqa: E402
from kbsearch.evaluation.metrics import evaluate_run  # noqa: E402
from kbsearch.evaluation.trec import write_trec_qrels, write_trec_run  # noqa: E402
from kbsearch.fuse.rrf import reciprocal_rank_fusion  # noqa: E402
from kbsearch.records import Filters, Hit  # noqa: E402

MEASURES = ("nDCG@10", "MRR@10", "R@5", "R@100")


def parse_setting(text: str) -> tuple[float, float, float, int]:
    """``k=60,w=1:2,d=100`` -> (k, lexical weight, dense weight, depth)."""
    parts = dict(p.split("=") for p in text.split(","))
    lexical, dense = (float(x) for x in parts.get("w", "1:1").split(":"))
    return float(parts.get("k", 60)), lexical, dense, int(parts.get("d", 100))


def label(k: float, wl: float, wd: float, depth: int) -> str:
    return f"k={k:g},w={wl:g}:{wd:g},d={depth}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", type=Path, help="BEIR folder or question file")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--write", action="append", default=[], help="setting to write a run of")
    parser.add_argument("--run-dir", type=Path)
    args = parser.parse_args()

    qset = load_questions(args.questions)
    qrels = set_qrels(qset)
    rankings: dict[str, dict[str, list[tuple[str, float]]]] = {}
    with kbsearch.open_kb(args.db) as kb:
        for q in qset.questions:
            audience = "staff" if not qset.access_aware or not q.public_ok else "public"
            filters = Filters(audience=audience, as_of=q.as_of)
            rankings[q.qid] = {
                r: kb.routes[r].candidates(q.text, filters, 100) for r in ("lexical", "dense")
            }
        ids = {pid for per in rankings.values() for ranked in per.values() for pid, _ in ranked}
        rows = kb.store.passages.rows(ids)

    def hits(ranked: list[tuple[str, float]]) -> list[Hit]:
        out = []
        for rank, (pid, score) in enumerate(ranked, start=1):
            p = rows[pid].passage
            out.append(Hit(rank, pid, p.doc_id, p.version, p.section, score, ""))
        return out

    def run_of(setting: tuple[float, float, float, int] | str) -> dict[str, list[str]]:
        run = {}
        for q in qset.questions:
            if isinstance(setting, str):
                ranked = rankings[q.qid][setting]
            else:
                k, wl, wd, depth = setting
                lists = {r: rankings[q.qid][r][:depth] for r in ("lexical", "dense")}
                fused = reciprocal_rank_fusion(lists, k=k, weights={"lexical": wl, "dense": wd})
                ranked = [(f.passage_id, f.score) for f in fused[:100]]
            run[q.qid] = judge_hits(q, hits(ranked), qset.rule)
        return run

    print(f"{args.questions}: {len(qset.questions)} questions")
    print(f"{'setting':<24}" + "".join(f"{m:>9}" for m in MEASURES))
    for name in ("lexical", "dense"):
        means = evaluate_run(qrels, run_of(name), MEASURES).means
        print(f"{name:<24}" + "".join(f"{means[m]:9.4f}" for m in MEASURES))
    grid = itertools.product(
        (10.0, 30.0, 60.0, 100.0), ((1, 1), (1, 1.5), (1, 2), (1.5, 1), (2, 1)), (20, 50, 100)
    )
    for k, (wl, wd), depth in grid:
        means = evaluate_run(qrels, run_of((k, wl, wd, depth)), MEASURES).means
        print(f"{label(k, wl, wd, depth):<24}" + "".join(f"{means[m]:9.4f}" for m in MEASURES))
    if args.run_dir:
        write_trec_qrels(args.run_dir / "qrels.txt", qrels)
        for name in ("lexical", "dense"):
            write_trec_run(args.run_dir / f"{name}.trec", run_of(name), name)
        for text in args.write:
            setting = parse_setting(text)
            tag = label(*setting).replace(",", "_").replace("=", "").replace(":", "-")
            write_trec_run(args.run_dir / f"{tag}.trec", run_of(setting), tag)
        print(f"runs written to {args.run_dir}", file=sys.stderr)


if __name__ == "__main__":
    main()
