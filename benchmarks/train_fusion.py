"""Train and evaluate the learned fusion (:mod:`kbsearch.fuse.learned`) on the candidate
dumps of ``benchmarks/ranking_dump.py`` (``DATASET.SPLIT.pkl`` in one folder).

    python benchmarks/train_fusion.py cv /tmp/rk --db-dir /work/idx          # dev: choose
    python benchmarks/train_fusion.py train /tmp/rk --db-dir /work/idx \\
        --out src/kbsearch/fuse/models/fusion_lgbm.txt                     # dev: fit, ship
    python benchmarks/train_fusion.py report /tmp/rk --db-dir /work/idx --split final
    python benchmarks/train_fusion.py time /tmp/rk --db-dir /work/idx --split dev   # ms/question

``cv``: nDCG@10 on the dev halves of the baselines (each route, RRF k = 10 with stop words =
today's default, the convex combination a = .6) and of LambdaRank models, each scored on
questions it was not trained on: 5-fold cross-validation by question over the pooled dev halves
(every dataset in every fold), and leave-one-dataset-out (trained on three datasets' dev halves,
scored on the fourth's: a collection the model never saw). ``train``: one model on all four dev
halves, written in LightGBM's text format (deterministic: one thread, fixed seeds, the same file
on a rerun). ``report``: the shipped model through :func:`fuse_learned` on ``--split`` with the
paired randomization test (kbsearch's, 10,000 resamples) against today's default and against the
best single route.

Collection statistics come from the index each dump was made from (``--db-dir/DATASET.db``,
opened read-only). Needs the ``rank`` extra (LightGBM).
"""

from __future__ import annotations

import argparse
import pickle
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from crosslang_sim import SEED, crossed, missing_sets  # noqa: E402
from ranking_lab import DATASETS, candidates, methods, minmax, ndcg10, rrf  # noqa: E402

from kbsearch.fuse.convex import FusionCandidate, convex_fusion  # noqa: E402
from kbsearch.fuse.features import FEATURES, CollectionStats, features  # noqa: E402
from kbsearch.fuse.learned import (  # noqa: E402
    fuse_learned,
    load_model,
)
from kbsearch.fuse.rrf import reciprocal_rank_fusion  # noqa: E402
from kbsearch.fuse.trees import TreeEnsemble  # noqa: E402

LEXICAL = "lexical_stop"  # the lexical route's default analysis (stop words dropped)
PARAMS = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "eval_at": [10],
    "num_leaves": 8,
    "max_depth": 4,
    "learning_rate": 0.05,
    "min_data_in_leaf": 200,
    "lambdarank_truncation_level": 20,
    "feature_pre_filter": False,
    "deterministic": True,
    "force_row_wise": True,
    "num_threads": 1,
    "seed": 0,
    "verbosity": -1,
}
ROUNDS = 100
AUGMENT = 0  # lexical-missing copies of each training question (crosslang_sim): none won on dev
# --monotone: a candidate never loses by scoring better in a route (LightGBM's monotone
# constraints; +1 rises with the feature, -1 falls, 0 free: the query and collection signals)
DIRECTION = {
    **dict.fromkeys(("lexical_norm", "dense_norm", "title_norm", "dense_cos", "title_cos"), 1),
    **dict.fromkeys(("lexical_share", "both", "rrf", "convex"), 1),
    **dict.fromkeys(("dense_gap", "title_gap", "lexical_rank", "dense_rank"), -1),
}


def collection_stats(db: Path) -> CollectionStats:
    """Counts over the index's passages (a title equal to the document id is the indexer's)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT d.title, d.doc_id FROM passages p JOIN documents d ON d.id = p.document"
        ).fetchall()
    finally:
        con.close()
    return CollectionStats.from_titles([t if t and t != doc else None for t, doc in rows])


@dataclass
class Query:
    """One question: its candidates' features, gains, judged keys and evidence for ties."""

    x: np.ndarray
    gain: np.ndarray
    keys: list[str]
    found: np.ndarray
    best: np.ndarray
    qrels: dict[str, int]
    raw: dict
    stats: CollectionStats
    cands: list[FusionCandidate]


def prepare(
    q: dict, stats: CollectionStats, missing: frozenset[str] = frozenset(), how: str = "missing"
) -> Query:
    """One question's candidates (sorted by passage id) and features; ``missing``: passages
    taken to be in another language (``crosslang_sim.crossed``)."""
    if missing:
        _, cands = crossed(q, missing, LEXICAL, how)
    else:
        cands = candidates(q, LEXICAL, True)
    x = features(cands, stats)
    keys = [q["info"][c.passage_id]["key"] for c in cands]
    gain = np.array([q["qrels"].get(k, 0) for k in keys], dtype=np.int32)
    found = np.array([len(c.ranks) for c in cands])
    best = np.array([min(c.ranks.values()) for c in cands])
    return Query(x, gain, keys, found, best, q["qrels"], q, stats, cands)


def augmented(queries: list[Query], copies: int, seed: int) -> list[Query]:
    """``copies`` copies of each question, each with a fresh random share of its candidates
    (relevant ones included) lexical-missing (training augmentation, ``crosslang_sim``)."""
    out = []
    for i in range(copies):
        raws = [q.raw for q in queries]
        for q, gone in zip(queries, missing_sets(raws, LEXICAL, seed + i, False), strict=True):
            out.append(prepare(q.raw, q.stats, gone))
    return out


def simulated(data: dict[str, list[Query]], how: str = "missing") -> dict[str, list[Query]]:
    """Each question once as a cross-language one: its relevant passages and a random share
    of the rest in another language (``crosslang_sim``); same draws for either ``how``."""
    out = {}
    for n, (ds, qs) in enumerate(data.items()):
        gone = missing_sets([q.raw for q in qs], LEXICAL, SEED + 1000 + n, True)
        out[ds] = [prepare(q.raw, q.stats, g, how) for q, g in zip(qs, gone, strict=True)]
    return out


def ndcg_of(query: Query, score: np.ndarray) -> float:
    """nDCG@10 of the candidates ordered by score, then evidence (as fuse_learned ties)."""
    idx = np.lexsort((np.arange(len(query.keys)), query.best, -query.found, -score))
    return ndcg10([query.keys[i] for i in idx], query.qrels)


def load(folder: Path, split: str, db_dir: Path) -> dict[str, list[Query]]:
    data = {}
    for ds in DATASETS:
        path = folder / f"{ds}.{split}.pkl"
        if not path.exists():
            continue
        with path.open("rb") as f:
            qs = pickle.load(f)["questions"]
        stats = collection_stats(db_dir / f"{ds}.db")
        print(f"{ds}: {len(qs)} questions, {stats} -> {stats.vector()}", file=sys.stderr)
        data[ds] = [prepare(q, stats) for q in qs]
    return data


def fit(train: list[tuple[str, Query]], params: dict, rounds: int, names: list[str]):  # noqa: ANN201
    """A LightGBM booster on the questions' ``names`` columns; every dataset weighs the same in
    total (a question's weight is the number of datasets' share over its dataset's questions)."""
    import lightgbm as lgb

    per_ds: dict[str, int] = {}
    for ds, _ in train:
        per_ds[ds] = per_ds.get(ds, 0) + 1
    cols = [FEATURES.index(n) for n in names]
    x = np.vstack([q.x[:, cols] for _, q in train])
    y = np.concatenate([q.gain for _, q in train])
    group = [len(q.keys) for _, q in train]
    scale = len(train) / len(per_ds)
    weight = np.concatenate([np.full(len(q.keys), scale / per_ds[ds]) for ds, q in train])
    if params.get("monotone"):
        params = {k: v for k, v in params.items() if k != "monotone"}
        params["monotone_constraints"] = [DIRECTION.get(n, 0) for n in names]
    data = lgb.Dataset(x, y, group=group, weight=weight, feature_name=names)
    return lgb.train(params, data, num_boost_round=rounds)


def scored(booster, queries: list[Query], names: list[str]) -> np.ndarray:  # noqa: ANN001
    cols = [FEATURES.index(n) for n in names]
    return np.array([ndcg_of(q, booster.predict(q.x[:, cols], num_threads=1)) for q in queries])


def baselines(data: dict[str, list[Query]]) -> dict[str, dict[str, np.ndarray]]:
    """Per-question nDCG@10 of the single routes, today's default and the convex combination."""
    table: dict[str, dict[str, np.ndarray]] = {}
    for name in ("lexical_stop", "dense", "rrf10_stop"):
        method = methods()[name]
        table[name] = {
            ds: np.array(
                [ndcg10([q.raw["info"][p]["key"] for p in method(q.raw)], q.qrels) for q in qs]
            )
            for ds, qs in data.items()
        }
    for a, t in ((0.6, 0.0), (0.6, 0.2)):
        j = {f: i for i, f in enumerate(FEATURES)}
        table[f"convex a={a} t={t}"] = {
            ds: np.array(
                [
                    ndcg_of(
                        q,
                        (1 - a) * q.x[:, j["lexical_norm"]]
                        + a * q.x[:, j["dense_norm"]]
                        + t * np.nan_to_num(minmax_present(q.x[:, j["title_cos"]])),
                    )
                    for q in qs
                ]
            )
            for ds, qs in data.items()
        }
    return table


def minmax_present(x: np.ndarray) -> np.ndarray:
    """The lab's title handling: an absent title gets the lowest present cosine."""
    present = ~np.isnan(x)
    if not present.any():
        return np.zeros_like(x)
    x = np.where(present, x, x[present].min())
    return minmax(x)


Scores = dict[str, dict[str, np.ndarray]]  # {test set: {dataset: per-question nDCG@10}}
Tests = dict[str, dict[str, list[Query]]]  # {test set: {dataset: questions aligned with dev}}


@dataclass(frozen=True)
class Setting:
    """A model to cross-validate: LightGBM parameters, trees, features read, and the
    lexical-missing copies of each training question (``crosslang_sim``)."""

    params: dict
    rounds: int
    names: list[str]
    augment: int = 0

    def fit(self, train: list[tuple[str, Query]], salt: int):  # noqa: ANN201
        return fit(train + copies(train, self.augment, salt), self.params, self.rounds, self.names)


def cross_validate(data: dict[str, list[Query]], setting: Setting, tests: Tests, folds: int = 5
                   ) -> Scores:  # fmt: skip
    """Per-question nDCG@10 on each test set (``tests``: the dev questions as they are, or
    simulated cross-language, aligned with ``data``), each question scored by a model trained
    on the other folds."""
    out = {t: {ds: np.zeros(len(qs)) for ds, qs in data.items()} for t in tests}
    for k in range(folds):
        train = [(ds, q) for ds, qs in data.items() for i, q in enumerate(qs) if i % folds != k]
        booster = setting.fit(train, k)
        for ds, qs in data.items():
            held = [i for i in range(len(qs)) if i % folds == k]
            for t, sets in tests.items():
                out[t][ds][held] = scored(booster, [sets[ds][i] for i in held], setting.names)
    return out


def leave_one_out(data: dict[str, list[Query]], setting: Setting, tests: Tests) -> Scores:
    """Per-question nDCG@10 on each test set, each dataset scored by a model trained on the
    three others."""
    out: Scores = {t: {} for t in tests}
    for n, held in enumerate(data):
        train = [(ds, q) for ds, qs in data.items() if ds != held for q in qs]
        booster = setting.fit(train, 100 + n)
        for t, sets in tests.items():
            out[t][held] = scored(booster, sets[held], setting.names)
    return out


def copies(train: list[tuple[str, Query]], augment: int, salt: int) -> list[tuple[str, Query]]:
    """``augment`` lexical-missing copies of each training question, per dataset."""
    if not augment:
        return []
    out = []
    for n, ds in enumerate(dict.fromkeys(ds for ds, _ in train)):
        mine = [q for d, q in train if d == ds]
        out += [(ds, q) for q in augmented(mine, augment, SEED + 10 * salt + 1000 * n)]
    return out


def row(name: str, per: dict[str, np.ndarray], names: list[str]) -> str:
    means = [float(per[n].mean()) for n in names]
    return f"| {name} | " + " | ".join(f"{m:.4f}" for m in means) + f" | {np.mean(means):.4f} |"


QUERY = ("lexical_top_gap", "dense_top_gap", "dense_max", "agreement")
COLLECTION = ("titled_share", "unique_title_share", "passages_per_title")
VARIANTS = {  # the features a model reads
    "all": list(FEATURES),
    "no collection": [f for f in FEATURES if f not in COLLECTION],
    "no query, no collection": [f for f in FEATURES if f not in QUERY + COLLECTION],
}
CHOSEN = "no query, no collection"  # on dev: see docs/benchmarks.md, issue 13


def cv_main(args: argparse.Namespace) -> None:
    data = load(args.folder, "dev", args.db_dir)
    sets = list(data)
    tests = {"dev": data, "sim missing": simulated(data), "sim zero": simulated(data, "zero")}
    print("| method | " + " | ".join(sets) + " | mean |")
    print("|---|" + "---|" * (len(sets) + 1))
    for name, per in baselines(data).items():
        print(row(name, per, sets), flush=True)
    for name, per in simulated_baselines(tests["sim missing"]).items():
        print(row(f"{name}, simulated cross-language", per, sets), flush=True)
    for variant in args.variants:
        names = VARIANTS[variant]
        for leaves, rounds in args.grid:
            for augment in args.augment:
                params = {**PARAMS, "num_leaves": leaves, "monotone": args.monotone}
                tag = f"lambdarank {variant}, {leaves} leaves, {rounds} trees"
                tag += ", monotone" if args.monotone else ""
                tag += f", {augment} augmented copies" if augment else ""
                setting = Setting(params, rounds, names, augment)
                runs = {"5-fold": cross_validate(data, setting, tests)}
                if args.lodo:
                    runs["LODO"] = leave_one_out(data, setting, tests)
                for how, scores in runs.items():
                    for t, per in scores.items():
                        print(row(f"{tag}: {how}, {t}", per, sets), flush=True)


def simulated_baselines(
    sim: dict[str, list[Query]], how: str = "missing"
) -> dict[str, dict[str, np.ndarray]]:
    """Per-question nDCG@10 of dense, RRF k = 10 and convex (a = .6, t = .2) on the simulated
    cross-language questions, with the lexical route read as zero (before) or as not
    applicable; ``how``: the questions' simulation (``crosslang_sim.crossed``)."""

    def keys(q: Query, ids: list[str]) -> float:
        return ndcg10([q.raw["info"][p]["key"] for p in ids], q.qrels)

    def lists(q: Query) -> dict[str, list[tuple[str, float]]]:
        gone = {c.passage_id for c in q.cands if c.not_applicable and how != "shared"}
        return {"lexical": [(p, v) for p, v in q.raw[LEXICAL] if p not in gone],
                "dense": q.raw["dense"]}  # fmt: skip

    def missing(q: Query) -> dict[str, frozenset[str]]:
        return {c.passage_id: c.not_applicable for c in q.cands if c.not_applicable}

    def zero(q: Query) -> list[FusionCandidate]:
        return [FusionCandidate(c.passage_id, {**c.scores, "lexical": 0.0}, c.ranks)
                if c.not_applicable else c for c in q.cands]  # fmt: skip

    w = {"lexical": 0.4, "dense": 0.6, "title": 0.2}
    fusions = {
        "dense": lambda q: [p for p, _ in q.raw["dense"]],
        "rrf10_stop, lexical zero": lambda q: rrf(lists(q)),
        "rrf10_stop, lexical missing": lambda q: [
            f.passage_id for f in reciprocal_rank_fusion(lists(q), 10.0, None, missing(q))
        ],
        "convex a=.6 t=.2, lexical zero": lambda q: [
            f.passage_id for f in convex_fusion(zero(q), w)
        ],
        "convex a=.6 t=.2, lexical missing": lambda q: [
            f.passage_id for f in convex_fusion(q.cands, w)
        ],
    }
    return {
        name: {ds: np.array([keys(q, fuse(q)) for q in qs]) for ds, qs in sim.items()}
        for name, fuse in fusions.items()
    }


def train_main(args: argparse.Namespace) -> None:
    data = load(args.folder, "dev", args.db_dir)
    train = [(ds, q) for ds, qs in data.items() for q in qs]
    if len(args.augment) != 1:
        raise SystemExit("train takes one --augment value")
    train += copies(train, args.augment[0], 0)
    params = {**PARAMS, "num_leaves": args.leaves, "monotone": args.monotone}
    booster = fit(train, params, args.rounds, VARIANTS[args.variant])
    args.out.write_text(booster.model_to_string(), encoding="utf-8")
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")


def report_main(args: argparse.Namespace) -> None:
    from kbsearch.evaluation.significance import randomization_test

    model = load_model(args.model)
    data = load(args.folder, args.split, args.db_dir)
    names = list(data)
    table = baselines(data)
    table["learned (shipped model)"] = learned_scores(data, model)
    before = load_model(args.before) if args.before else None
    if before is not None:
        table[f"learned ({args.before.name})"] = learned_scores(data, before)
    print("| method | " + " | ".join(f"{n} ({len(data[n])})" for n in names) + " |")
    print("|---|" + "---|" * len(names))
    for name, per in table.items():
        cells = []
        for ds in names:
            base = table["rrf10_stop"][ds]
            single = max((table["lexical_stop"][ds], table["dense"][ds]), key=np.mean)
            vs = randomization_test(per[ds].tolist(), base.tolist())
            vs1 = randomization_test(per[ds].tolist(), single.tolist())
            cells.append(
                f"{per[ds].mean():.4f} ({per[ds].mean() - base.mean():+.3f}, p {vs.p_value:.3f};"
                f" vs best single {per[ds].mean() - single.mean():+.3f}, p {vs1.p_value:.3f})"
            )
        print(f"| {name} | " + " | ".join(cells) + " |")
    sim = simulated(data)
    rows = simulated_baselines(sim)
    rows["learned (shipped model), lexical missing"] = learned_scores(sim, model)
    if before is not None:
        zero = simulated(data, "zero")
        rows[f"learned ({args.before.name}), lexical zero"] = learned_scores(zero, before)
    print("\nsimulated cross-language (relevant passages and a random share of the rest in")
    print("another language, sharing no word with the question), nDCG@10:\n")
    print_rows(rows, names)
    shared = simulated(data, "shared")
    rows = {
        k: v
        for k, v in simulated_baselines(shared, "shared").items()
        if "zero" not in k  # with the words shared, "zero" would be a one-language search
    }
    rows["learned (shipped model), lexical not applicable"] = learned_scores(shared, model)
    print("\nthe same passages in another language, sharing the words BM25 matched (marked, own")
    print("lexical score and rank kept), nDCG@10:\n")
    print_rows(rows, names)


def print_rows(rows: dict[str, dict[str, np.ndarray]], names: list[str]) -> None:
    print("| method | " + " | ".join(names) + " | mean |")
    print("|---|" + "---|" * (len(names) + 1))
    for name, per in rows.items():
        print(row(name, per, names))


def learned_scores(data: dict[str, list[Query]], model: TreeEnsemble) -> dict[str, np.ndarray]:
    """Per-question nDCG@10 of ``model`` through :func:`fuse_learned` (the questions'
    candidates as prepared, lexical-missing marks included)."""
    return {
        ds: np.array(
            [
                ndcg10(
                    [
                        q.raw["info"][f.passage_id]["key"]
                        for f in fuse_learned(q.cands, q.stats, model)
                    ],
                    q.qrels,
                )  # fmt: skip
                for q in qs
            ]
        )
        for ds, qs in data.items()
    }


def time_main(args: argparse.Namespace) -> None:
    """Median and p99 wall time of fuse_learned and convex_fusion per question (one thread),
    over the first 300 questions of each dataset's ``--split`` dump."""
    import os
    import time

    from kbsearch.fuse.convex import convex_fusion

    model = load_model(args.model)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for ds in DATASETS:
        path = args.folder / f"{ds}.{args.split}.pkl"
        if not path.exists():
            continue
        with path.open("rb") as f:
            qs = pickle.load(f)["questions"][:300]
        stats = collection_stats(args.db_dir / f"{ds}.db")
        sets = [candidates(q, LEXICAL, True) for q in qs]
        for name, fuse in (
            ("learned", lambda c, stats=stats: fuse_learned(c, stats, model)),
            ("convex", lambda c: convex_fusion(c, {"lexical": 0.4, "dense": 0.6})),
        ):
            took = []
            for cands in sets:
                t0 = time.perf_counter()
                fuse(cands)
                took.append((time.perf_counter() - t0) * 1e3)
            size = np.mean([len(c) for c in sets])
            print(
                f"{ds:13s} {name:8s} {size:5.0f} candidates: median {np.median(took):.3f} ms,"
                f" p99 {np.percentile(took, 99):.3f} ms"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("cv", "train", "report", "time"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--db-dir", type=Path, required=True)
    parser.add_argument("--split", default="final")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument(
        "--grid",
        nargs="+",
        type=lambda s: tuple(int(v) for v in s.split("x")),
        default=[(8, 100)],
        help="LEAVESxTREES settings, e.g. 8x100 4x50",
    )
    parser.add_argument("--lodo", action="store_true", help="also leave one dataset out")
    parser.add_argument(
        "--augment",
        nargs="+",
        type=int,
        default=[AUGMENT],
        help="lexical-missing copies of each training question (cv: settings to compare)",
    )
    parser.add_argument("--monotone", action="store_true", help="monotone in each route's score")
    parser.add_argument("--leaves", type=int, default=8)
    parser.add_argument("--before", type=Path, help="report: a model to compare with")
    parser.add_argument("--variant", choices=list(VARIANTS), default=CHOSEN)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--out", type=Path, default=Path("fusion_lgbm.txt"))
    parser.add_argument(
        "--model",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "src/kbsearch/fuse/models/fusion_lgbm.txt",
    )
    args = parser.parse_args()
    commands = {"cv": cv_main, "train": train_main, "report": report_main, "time": time_main}
    commands[args.command](args)


if __name__ == "__main__":
    main()
