"""Fusion variants tried offline on the candidate dumps of ``benchmarks/ranking_dump.py``.

    python benchmarks/ranking_lab.py runs/ --split dev

For every dataset dumped in the folder (``DATASET.SPLIT.pkl``), nDCG@10 of: each route alone,
RRF (k = 10, today's default) over the default or stop-word lexical list, and the convex
combination of normalised scores (Bruch, Gai & Ingber, "An Analysis of Fusion Functions for
Hybrid Retrieval", ACM TOIS 42(1), 2023) over a grid of dense weights, optionally with a
title-vector term. Judging is the dump's: each candidate's key (document, section or passage),
the ranked list collapsed to distinct keys, nDCG@10 with graded gains as kbsearch computes it.
"""

from __future__ import annotations

import argparse
import math
import pickle
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kbsearch.fuse.convex import FusionCandidate, convex_fusion  # noqa: E402

DATASETS = ("scifact", "covid_faq_en", "spf_qr_fr", "piaf_fr")


def ndcg10(keys: Sequence[str], qrels: dict[str, int]) -> float:
    seen: dict[str, None] = {}
    for key in keys:
        seen.setdefault(key, None)
        if len(seen) >= 10:
            break
    dcg = sum(qrels.get(k, 0) / math.log2(i + 2) for i, k in enumerate(list(seen)[:10]))
    ideal = sorted(qrels.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal) if g > 0)
    return dcg / idcg if idcg else 0.0


def rrf(lists: dict[str, list[tuple[str, float]]], k: float = 10.0) -> list[str]:
    score: dict[str, float] = {}
    best: dict[str, int] = {}
    count: dict[str, int] = {}
    for ranked in lists.values():
        for rank, (pid, _) in enumerate(ranked, 1):
            score[pid] = score.get(pid, 0.0) + 1.0 / (k + rank)
            best[pid] = min(best.get(pid, rank), rank)
            count[pid] = count.get(pid, 0) + 1
    return sorted(score, key=lambda p: (-score[p], -count[p], best[p], p))


def candidates(q: dict, lexical: str, title: bool) -> list[FusionCandidate]:
    ranks = {r: {pid: i for i, (pid, _) in enumerate(q[r], 1)} for r in (lexical, "dense")}
    out = []
    for pid in sorted(set(ranks[lexical]) | set(ranks["dense"])):
        info = q["info"][pid]
        scores = {"lexical": info[f"{lexical}_score"], "dense": info["dense_score"]}
        if title and not math.isnan(title_cos(info)):
            scores["title"] = title_cos(info)
        found = {"lexical": ranks[lexical].get(pid), "dense": ranks["dense"].get(pid)}
        out.append(FusionCandidate(pid, scores, {r: v for r, v in found.items() if v}))
    return out


SHARED: set[str] = set()  # titles of more than one passage (filled by --unique-titles)


def title_cos(info: dict) -> float:
    """The candidate's title cosine; NaN when its document has no title of its own (the
    indexer names an untitled document after its id) or, with --unique-titles, when the title
    heads several passages."""
    if info["title"] in ("", info["doc"]) or info["title"] in SHARED:
        return math.nan
    return info["title_cos"]


class Arrays:
    """One question's candidates (union of the lexical and dense top lists) as arrays."""

    def __init__(self, q: dict, lexical: str, listed_only: bool = False) -> None:
        ranks = {r: {pid: i for i, (pid, _) in enumerate(q[r], 1)} for r in (lexical, "dense")}
        self.ids = sorted(set(ranks[lexical]) | set(ranks["dense"]))
        info = [q["info"][p] for p in self.ids]
        self.keys = [i["key"] for i in info]
        self.lex = np.array([i[f"{lexical}_score"] for i in info])
        self.dense = np.array([i["dense_score"] for i in info])
        if listed_only:  # a route's score only where its own top list holds the passage
            for attr, route in (("lex", lexical), ("dense", "dense")):
                listed = dict(q[route])
                low = min(listed.values()) if listed else 0.0
                setattr(self, attr, np.array([listed.get(p, low) for p in self.ids]))
        title = np.array([title_cos(i) for i in info])
        present = ~np.isnan(title)
        if present.any():
            title[~present] = title[present].min()
        self.title = np.where(present.any(), title, 0.0)
        lr = np.array([ranks[lexical].get(p, 0) for p in self.ids])
        dr = np.array([ranks["dense"].get(p, 0) for p in self.ids])
        self.found = (lr > 0).astype(int) + (dr > 0)
        big = 1 << 30
        self.best = np.minimum(np.where(lr > 0, lr, big), np.where(dr > 0, dr, big))
        self.qrels = q["qrels"]

    def order(self, score: np.ndarray) -> list[str]:
        """Keys best first: score, then evidence, then best rank, then passage id."""
        idx = np.lexsort((np.arange(len(self.ids)), self.best, -self.found, -score))
        return [self.keys[i] for i in idx]


def minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = x.min(), x.max()
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def zscore(x: np.ndarray) -> np.ndarray:
    sd = x.std()
    return (x - x.mean()) / sd if sd > 0 else np.zeros_like(x)


NORMS = {"minmax": minmax, "zscore": zscore}


def evaluate_arrays(arrays: list[Arrays], a: float, b: float, norm: str) -> np.ndarray:
    n = NORMS[norm]
    return np.array(
        [
            ndcg10(x.order((1 - a) * n(x.lex) + a * n(x.dense) + b * n(x.title)), x.qrels)
            for x in arrays
        ]
    )


Method = Callable[[dict], list[str]]


def evaluate(questions: list[dict], method: Method) -> np.ndarray:
    return np.array(
        [ndcg10([q["info"][pid]["key"] for pid in method(q)], q["qrels"]) for q in questions]
    )


def methods() -> dict[str, Method]:
    return {
        "lexical": lambda q: [p for p, _ in q["lexical"]],
        "lexical_stop": lambda q: [p for p, _ in q["lexical_stop"]],
        "dense": lambda q: [p for p, _ in q["dense"]],
        "rrf10": lambda q: rrf({"l": q["lexical"], "d": q["dense"]}),
        "rrf10_stop": lambda q: rrf({"l": q["lexical_stop"], "d": q["dense"]}),
    }


def check_against_module(questions: list[dict]) -> None:
    """The array shortcut ranks as :func:`kbsearch.fuse.convex.convex_fusion` does."""
    for q in questions[:20]:
        x = Arrays(q, "lexical_stop")
        w = {"lexical": 0.3, "dense": 0.7, "title": 0.2}
        ref = [
            q["info"][f.passage_id]["key"]
            for f in convex_fusion(candidates(q, "lexical_stop", True), w)
        ]
        got = x.order(0.3 * minmax(x.lex) + 0.7 * minmax(x.dense) + 0.2 * minmax(x.title))
        assert ref[:10] == got[:10], (q["qid"], ref[:10], got[:10])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--alphas", nargs="+", type=float, default=[0.5, 0.6, 0.7, 0.8, 0.9])
    parser.add_argument("--titles", nargs="+", type=float, default=[0.0, 0.2, 0.4])
    parser.add_argument("--lexical", nargs="+", default=["lexical_stop", "listed"])
    parser.add_argument("--unique-titles", action="store_true")
    parser.add_argument("--norms", nargs="+", default=["minmax"])
    args = parser.parse_args()
    data = {}
    for ds in DATASETS:
        path = args.folder / f"{ds}.{args.split}.pkl"
        if path.exists():
            with path.open("rb") as f:
                data[ds] = pickle.load(f)["questions"]
    if args.unique_titles:
        from collections import Counter

        for qs in data.values():
            seen: dict[str, str] = {}
            counts: Counter[str] = Counter()
            for q in qs:
                for pid, info in q["info"].items():
                    seen[pid] = info["title"]
            counts.update(seen.values())
            SHARED.update(t for t, n in counts.items() if n > 1)
    grid = [round(x, 2) for x in args.alphas]
    tgrid = list(args.titles)
    table: dict[str, dict[str, float]] = {}
    for name, method in methods().items():
        table[name] = {ds: float(evaluate(qs, method).mean()) for ds, qs in data.items()}
    for qs in data.values():
        check_against_module(qs)
    for lexical in args.lexical:
        lx, listed = ("lexical_stop", True) if lexical == "listed" else (lexical, False)
        arrays = {ds: [Arrays(q, lx, listed) for q in qs] for ds, qs in data.items()}
        for norm in args.norms:
            for a in grid:
                for b in tgrid:
                    name = f"cc_{norm}_{lexical}_a{a:.2f}_t{b:.1f}"
                    table[name] = {
                        ds: float(evaluate_arrays(xs, a, b, norm).mean())
                        for ds, xs in arrays.items()
                    }
    names = list(data)
    print("method".ljust(34) + "".join(n[:12].rjust(13) for n in names) + "         mean")
    for name, row in table.items():
        mean = float(np.mean([row[n] for n in names]))
        print(name.ljust(34) + "".join(f"{row[n]:13.4f}" for n in names) + f"{mean:13.4f}")


def report(folder: Path, split: str, settings: list[tuple[str, float, float]]) -> None:
    """nDCG@10 of today's default (rrf10), the single routes and each convex setting
    ``(lexical, a, t)``, with the paired randomization test (kbsearch's) against rrf10."""
    from kbsearch.evaluation.significance import randomization_test

    for ds in DATASETS:
        path = folder / f"{ds}.{split}.pkl"
        if not path.exists():
            continue
        with path.open("rb") as f:
            qs = pickle.load(f)["questions"]
        runs = {name: evaluate(qs, m) for name, m in methods().items()}
        for lexical, a, t in settings:
            xs = [Arrays(q, lexical) for q in qs]
            runs[f"cc_{lexical}_a{a}_t{t}"] = evaluate_arrays(xs, a, t, "minmax")
        base = runs["rrf10"]
        best_single = max(("lexical", "dense"), key=lambda r: runs[r].mean())
        print(f"{ds} ({split}, {len(qs)} questions)")
        for name, per in runs.items():
            vs = randomization_test(per.tolist(), base.tolist())
            vs_single = randomization_test(per.tolist(), runs[best_single].tolist())
            print(
                f"  {name:34s} {per.mean():.4f}  vs rrf10 {per.mean() - base.mean():+.4f}"
                f" p={vs.p_value:.4f}  vs {best_single}"
                f" {per.mean() - runs[best_single].mean():+.4f}"
                f" p={vs_single.p_value:.4f}"
            )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "report":
        report(
            Path(sys.argv[2]),
            sys.argv[3],
            [("lexical_stop", 0.6, 0.0), ("lexical_stop", 0.6, 0.2), ("lexical_stop", 0.6, 0.3)],
        )
    else:
        main()
