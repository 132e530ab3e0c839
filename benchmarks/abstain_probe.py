"""Probe candidate evidence for the abstention model (issue 12) on the dev halves: does a signal
add anything to the shipped model's features (:data:`kbsearch.judge.confidence_features.FEATURES`)?
Nothing here ships; the findings are in docs/benchmarks.md ("Answer or abstain").

    # 1. out-of-fold relevance models on the fusion dumps (benchmarks/ranking_dump.py --titles):
    #    LambdaRank in the shipped fusion's setting, and a pointwise (binary) LightGBM model
    python benchmarks/abstain_probe.py models /tmp/rk --db-dir /work/idx --work /tmp/probe
    # 2. the candidate features of every row of the abstention table (same questions, conditions
    #    and route lists as train_abstain.py features; encodes the queries)
    python benchmarks/abstain_probe.py rows --split dev --idx /work/idx2 --work /tmp/probe \\
        --out /tmp/probe/dev.tsv
    # 3. 5-fold CV and leave-one-collection-out AUROC vs removed, base vs base + each family
    python benchmarks/abstain_probe.py lab benchmarks/data/abstain_dev.tsv /tmp/probe/dev.tsv

Families (per searched question and condition):

- ``ltr_*`` / ``oof_*``: the learned fusion's (LambdaRank) scores of the candidates (both top
  lists, every candidate scored in both routes and by its heading vector, as the pipeline builds
  them): top score, margins over the 2nd and 5th, and the top's z-score over the candidates;
  ``ltr`` with the shipped model (trained on these dev questions: in-sample), ``oof`` with the
  fold model that did not see the question (on final both are the shipped model's).
- ``bin_*``: a pointwise LightGBM model's P(relevant) per candidate (out of fold on dev): the
  logit of the highest, and of P(any of the five highest is relevant).
- passage agreement: ``same_doc_top`` (both routes' top passages in one document),
  ``doc_overlap`` (share of the dense top 10's documents among the lexical top 10's),
  ``lex_doc_in_dense`` / ``dense_doc_in_lex``; ``head_cov_*``: IDF share of the query's words
  in the heading (title > section) of the dense top, the lexical top, the best of the first 3.
- phrases: ``big_*``: IDF-weighted share of the query's adjacent content-word pairs (stemmed,
  stop words dropped) found adjacent in the lexical top / dense top / best of the first three;
  ``run_best``: the longest run of query words in one of them, over the query's length.
- neighbourhood (CSLS, Conneau et al., ICLR 2018): ``csls_d``: the top cosine minus the mean
  cosine of the dense top passage with its 10 nearest passages (the condition's passages);
  ``nn1_d``: minus its nearest; ``rnn_d``: ln(1 + passages nearer to it than the query);
  ``csls_l``: the same for the lexical top passage.
"""

from __future__ import annotations

import argparse
import csv
import json
import sqlite3
import sys
import time
from functools import lru_cache
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import train_abstain as ta  # noqa: E402

from kbsearch.evaluation.abstention import auroc  # noqa: E402
from kbsearch.fuse.convex import FusionCandidate  # noqa: E402
from kbsearch.fuse.features import FEATURES as FUSION_FEATURES  # noqa: E402
from kbsearch.fuse.features import CollectionStats, features  # noqa: E402
from kbsearch.fuse.learned import (  # noqa: E402
    fuse_learned,
    load_model,
    shipped_model,
)
from kbsearch.index.headings import passage_headings  # noqa: E402
from kbsearch.judge import evidence as ev  # noqa: E402
from kbsearch.judge.confidence_features import FEATURES  # noqa: E402
from kbsearch.judge.confidence_fit import TrainingRow, _logistic, fold_of, weights  # noqa: E402
from kbsearch.knowledge_base import open_kb  # noqa: E402
from kbsearch.retrieve.lexical.bm25 import fts5_idf  # noqa: E402
from kbsearch.text.analysis import stem_words, words  # noqa: E402
from kbsearch.text.stopwords import content_words, strip_elisions  # noqa: E402

DATASETS = ["covid_faq_en", "piaf_fr", "scifact", "spf_qr_fr"]
FOLDS = 5
# the pointwise model: LambdaRank's settings (train_fusion.PARAMS) with a binary objective
LAMBDARANK_ONLY = ("metric", "eval_at", "lambdarank_truncation_level")


def models_main(args: argparse.Namespace) -> None:
    """Fold models (question i of a dump in fold i mod 5, as train_fusion.py cv) and the map
    ``{dataset/qid: fold}``; the full LambdaRank refit must equal the shipped file."""
    import lightgbm as lgb
    import train_fusion as tf

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    data = tf.load(Path(args.dumps), "dev", Path(args.db_dir))
    fold = {f"{ds}/{q.raw['qid']}": i % FOLDS for ds, qs in data.items() for i, q in enumerate(qs)}
    (work / "fold.json").write_text(json.dumps(fold), encoding="utf-8")
    ranking = {**tf.PARAMS, "num_leaves": 8, "monotone": True}
    names = tf.VARIANTS[tf.CHOSEN]
    pointwise = [f for f in tf.FEATURES if f not in tf.COLLECTION]
    cols = [tf.FEATURES.index(n) for n in pointwise]
    binary = {k: v for k, v in tf.PARAMS.items() if k not in LAMBDARANK_ONLY}
    binary |= {
        "objective": "binary",
        "monotone_constraints": [tf.DIRECTION.get(n, 0) for n in pointwise],
    }

    def fit_binary(train: list) -> lgb.Booster:
        per: dict[str, int] = {}
        for ds, _ in train:
            per[ds] = per.get(ds, 0) + 1
        x = np.vstack([q.x[:, cols] for _, q in train])
        y = np.concatenate([(q.gain > 0).astype(int) for _, q in train])
        w = [np.full(len(q.keys), len(train) / len(per) / per[ds]) for ds, q in train]
        found = lgb.Dataset(x, y, weight=np.concatenate(w), feature_name=pointwise)
        return lgb.train(binary, found, num_boost_round=200)

    every = [(ds, q) for ds, qs in data.items() for q in qs]
    (work / "ltr_full.txt").write_text(tf.fit(every, ranking, tf.ROUNDS, names).model_to_string())
    for k in range(FOLDS):
        train = [(ds, q) for ds, qs in data.items() for i, q in enumerate(qs) if i % FOLDS != k]
        booster = tf.fit(train, ranking, tf.ROUNDS, names)
        (work / f"ltr{k}.txt").write_text(booster.model_to_string())
        fit_binary(train).save_model(str(work / f"bin{k}.txt"))
        print(f"fold {k}", file=sys.stderr, flush=True)
    fit_binary(every).save_model(str(work / "bin_full.txt"))


def score_stats(scores: list[float]) -> list[float]:
    """Top, margins over the 2nd and 5th, and the top's z over the candidates (best first)."""
    s = np.array(scores)
    z = (s[0] - s.mean()) / s.std() if s.std() > 0 else 0.0
    return [s[0], s[0] - s[min(1, len(s) - 1)], s[0] - s[min(4, len(s) - 1)], z]


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return float(np.log(p / (1 - p)))


@lru_cache(maxsize=65536)
def stems(text: str, language: str) -> tuple[str, ...]:
    """Content words of ``text`` in order, stop words and elisions dropped, stemmed."""
    return tuple(stem_words(content_words(words(strip_elisions(text)), [language]), language))


def longest_run(query: tuple[str, ...], passage: tuple[str, ...]) -> int:
    at: dict[str, list[int]] = {}
    for j, t in enumerate(passage):
        at.setdefault(t, []).append(j)
    best = 0
    for i, t in enumerate(query):
        for j in at.get(t, []):
            n = 0
            while i + n < len(query) and j + n < len(passage) and query[i + n] == passage[j + n]:
                n += 1
            best = max(best, n)
    return best


COLUMNS = (
    *(f"{m}_{n}" for m in ("ltr", "oof") for n in ("top", "margin", "margin5", "z")),
    *("bin_top", "bin_any5", "same_doc_top", "doc_overlap", "lex_doc_in_dense"),
    *("dense_doc_in_lex", "head_cov_dense", "head_cov_lex", "head_cov_best"),
    *("big_lex", "big_dense", "big_best", "run_best", "csls_d", "nn1_d", "rnn_d", "csls_l"),
)


def rows_main(args: argparse.Namespace) -> None:
    import lightgbm as lgb

    work = Path(args.work)
    dev = args.split == "dev"
    fold = json.loads((work / "fold.json").read_text()) if dev else {}
    ranking = [load_model(work / f"ltr{k}.txt") for k in range(FOLDS)] if dev else []
    binary = [lgb.Booster(model_file=str(work / f"bin{k}.txt")) for k in range(FOLDS)]
    binary_full = lgb.Booster(model_file=str(work / "bin_full.txt"))
    bin_cols = [FUSION_FEATURES.index(n) for n in binary_full.feature_name()]
    fusing, searches = 0.0, 0
    with open(args.out, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle, delimiter="\t", lineterminator="\n")
        out.writerow(["dataset", "qid", "condition", "label", *COLUMNS])
        for dataset in args.datasets.split(","):
            copy = work / f"{dataset}.db"
            if not copy.exists():  # a copy: never write to the shared index
                source = sqlite3.connect(f"file:{Path(args.idx) / dataset}.db?mode=ro", uri=True)
                target = sqlite3.connect(copy)
                source.backup(target)
                target.close()
                source.close()
            own = ta.questions(Path(args.data), dataset, args.split, args.max_questions)
            other = ta.questions(
                Path(args.data), ta.PARTNER[dataset], args.split, args.max_questions
            )
            with open_kb(copy) as kb:
                vectors = ta.query_vectors(kb, own + other)
                impact, dense = kb.impact_index("staff"), kb.dense_index()
                heads = kb.backend.heading_index(dense.table.vectors.shape[1])
                counts = kb.backend.title_counts("staff")
                collection = CollectionStats(
                    counts.passages, counts.titled, counts.unique_titled, counts.titles
                )
                pids = [str(p) for p in dense.table.passage_ids]
                at = {p: i for i, p in enumerate(pids)}
                doc = dict(zip(pids, map(str, dense.table.doc_id), strict=True))
                row_pid = dict(zip(dense.table.row_ids.tolist(), pids, strict=True))
                head_rows, head_texts = passage_headings(kb.store)
                heading = {
                    row_pid.get(r, ""): h
                    for r, h in zip(head_rows.tolist(), head_texts, strict=True)
                }
                language = impact.languages[0] if impact.languages else "en"
                for s in ta.searched(kb, own, other, vectors):
                    meta = ta.row_meta(dataset, s)
                    vector = vectors[s.question.text]
                    start = time.perf_counter()
                    cands = candidates(s, impact, at, heads.scores_of(vector, _ids(s)))
                    shipped = fuse_learned(cands, collection, shipped_model())
                    fusing += time.perf_counter() - start
                    values = score_stats([f.score for f in shipped])
                    model = ranking[fold[meta[1]]] if dev else shipped_model()
                    values += score_stats([f.score for f in fuse_learned(cands, collection, model)])
                    booster = binary[fold[meta[1]]] if dev else binary_full
                    p = np.sort(booster.predict(features(cands, collection)[:, bin_cols]))[::-1]
                    values += [logit(p[0]), logit(1 - np.prod(1 - p[:5]))]
                    values += agreement(s, doc, heading, impact, kb.analyzer)
                    values += phrases(s, kb, impact, language)
                    values += neighbourhood(s, dense.table.vectors, at)
                    out.writerow([*meta[:3], meta[4], *(f"{v:.6g}" for v in values)])
                    searches += 1
            print(f"{dataset}: done", file=sys.stderr, flush=True)
    mean = 1000 * fusing / max(searches, 1)
    print(f"candidates + learned fusion: {mean:.2f} ms a search ({searches})", file=sys.stderr)


def _ids(s: ta.Searched) -> list[str]:
    return list(dict.fromkeys([p for p, _ in s.lexical] + [p for p, _ in s.dense]))


def candidates(s: ta.Searched, impact, at: dict[str, int], titles: dict) -> list[FusionCandidate]:  # noqa: ANN001
    """Both top lists' passages, each scored in both routes and by its heading vector."""
    ranks = {
        route: {p: r for r, (p, _) in enumerate(ranking, 1)}
        for route, ranking in (("lexical", s.lexical), ("dense", s.dense))
    }
    out = []
    for p in _ids(s):
        row = impact.position.get(p)
        scores = {"lexical": float(s.bm[row]) if row is not None else 0.0}
        scores["dense"] = float(s.cos[at[p]])
        if p in titles:
            scores["title"] = titles[p]
        out.append(FusionCandidate(p, scores, {r: ranks[r][p] for r in ranks if p in ranks[r]}))
    return out


def agreement(s: ta.Searched, doc: dict, heading: dict, impact, analyzer) -> list[float]:  # noqa: ANN001
    lex = [doc[p] for p, _ in s.lexical[:10]]
    den = [doc[p] for p, _ in s.dense[:10]]
    stats = ev.term_statistics(impact, analyzer, s.question.text, impact.languages)
    total = sum(stats.idf)

    def covered(pid: str) -> float:
        present = ev.text_terms(heading.get(pid, ""), analyzer, impact.languages)
        found = sum(w for g, w in zip(stats.words, stats.idf, strict=True) if set(g) & present)
        return found / total if total > 0 else 0.0

    firsts = [p for p, _ in s.lexical[:3] + s.dense[:3]]
    return [
        float(bool(lex and den) and lex[0] == den[0]),
        len(set(lex) & set(den)) / max(len(set(den)), 1) if lex else 0.0,
        float(bool(lex) and lex[0] in set(den)),
        float(bool(den) and den[0] in set(lex)),
        covered(s.dense[0][0]) if s.dense else 0.0,
        covered(s.lexical[0][0]) if s.lexical else 0.0,
        max((covered(p) for p in firsts), default=0.0),
    ]


def phrases(s: ta.Searched, kb, impact, language: str) -> list[float]:  # noqa: ANN001
    query = stems(s.question.text, language)
    pairs = list(dict.fromkeys(zip(query, query[1:], strict=False)))
    idf = {t: fts5_idf(impact.passages, impact.frequency(t)) for t in query}
    weight = [idf[a] + idf[b] for a, b in pairs]
    firsts = list(dict.fromkeys(p for p, _ in s.lexical[:3] + s.dense[:3]))
    rows = kb.store.passages.rows(firsts)
    seqs = {p: stems(rows[p].passage.text, language) for p in firsts if p in rows}

    def share(pid: str) -> float:
        if not pairs or pid not in seqs:
            return 0.0
        found = set(zip(seqs[pid], seqs[pid][1:], strict=False))
        return sum(w for b, w in zip(pairs, weight, strict=True) if b in found) / sum(weight)

    run = max((longest_run(query, seqs[p]) for p in seqs), default=0)
    return [
        share(s.lexical[0][0]) if s.lexical else 0.0,
        share(s.dense[0][0]) if s.dense else 0.0,
        max((share(p) for p in firsts), default=0.0),
        run / len(query) if query else 0.0,
    ]


def neighbourhood(s: ta.Searched, vectors: np.ndarray, at: dict[str, int]) -> list[float]:
    def near(pid: str) -> tuple[float, float, float]:
        i, c = at[pid], float(s.cos[at[pid]])
        keep = s.keep_dense.copy()
        keep[i] = False
        nearest = np.sort((vectors @ vectors[i])[keep])[::-1]
        if not len(nearest):
            return 0.0, 0.0, 0.0
        return (
            c - float(nearest[:10].mean()),
            c - float(nearest[0]),
            float(np.log1p((nearest > c).sum())),
        )

    d = near(s.dense[0][0]) if s.dense else (0.0, 0.0, 0.0)
    lexical = near(s.lexical[0][0])[0] if s.lexical else 0.0
    return [*d, lexical]


def read(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def joined(table: str, extra: str) -> list[dict]:
    found = {(r["dataset"], r["qid"], r["condition"]): r for r in read(extra)}
    out = []
    for r in read(table):
        e = found[(r["dataset"], r["qid"], r["condition"])]
        if e["label"] != r["label"]:
            raise SystemExit(f"label differs for {r['dataset']} {r['qid']} {r['condition']}")
        out.append({**e, **r})
    return out


def logistic(x: np.ndarray, y: np.ndarray, w: np.ndarray, test: np.ndarray) -> np.ndarray:
    """The shipped learner: standardised features, L2 logistic regression (C = 1)."""
    mean, scale = x.mean(0), x.std(0)
    scale[scale == 0] = 1
    coef, intercept = _logistic((x - mean) / scale, y, w, 1.0)
    return (test - mean) / scale @ coef + intercept


def boosted(x: np.ndarray, y: np.ndarray, w: np.ndarray, test: np.ndarray) -> np.ndarray:
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(
        max_depth=3, max_iter=200, learning_rate=0.05, min_samples_leaf=40, random_state=0
    )
    model.fit(x, y, sample_weight=w * len(w) / w.sum())
    return model.decision_function(test)


def paired(x: np.ndarray, y: np.ndarray, w: np.ndarray, test: np.ndarray) -> np.ndarray:
    """Logistic regression over the standardised features and all their pairwise products
    (C = 0.01: the 170 terms overfit at the shipped C = 1)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import PolynomialFeatures

    mean, scale = x.mean(0), x.std(0)
    scale[scale == 0] = 1
    pairs = PolynomialFeatures(2, include_bias=False)
    z = pairs.fit_transform((x - mean) / scale)
    zt = pairs.transform((test - mean) / scale)
    m, sd = z.mean(0), z.std(0)
    sd[sd == 0] = 1
    model = LogisticRegression(C=0.01, max_iter=5000)
    model.fit((z - m) / sd, y, sample_weight=w * len(w) / w.sum())
    return model.decision_function((zt - m) / sd)


def measured(table: list[dict], names: list[str], learner) -> tuple[dict, dict]:  # noqa: ANN001
    """Per dataset AUROC vs removed: 5-fold CV (folds by question, as the shipped fit) and
    leave one collection out."""
    rows = [
        TrainingRow(r["dataset"], f"{r['dataset']}|{r['qid']}", r["covered"] == "1",
                    int(r["label"]), {})
        for r in table
    ]  # fmt: skip
    x = np.array([[float(r[n]) for n in names] for r in table])
    y = np.array([r.label for r in rows])
    dataset = np.array([r["dataset"] for r in table])
    fold = fold_of([r.group for r in rows], FOLDS)
    cv = np.zeros(len(rows))
    for k in range(FOLDS):
        train = fold != k
        cv[~train] = learner(x[train], y[train], weights(rows)[train], x[~train])
    lodo = np.zeros(len(rows))
    for d in DATASETS:
        train = dataset != d
        w = weights([r for r, t in zip(rows, train, strict=True) if t])
        lodo[~train] = learner(x[train], y[train], w, x[~train])
    return removed_auroc(table, cv), removed_auroc(table, lodo)


def removed_auroc(table: list[dict], score: np.ndarray) -> dict[str, float]:
    out = {}
    for d in DATASETS:
        pick = [
            i
            for i, r in enumerate(table)
            if r["dataset"] == d and r["condition"] in ("present", "removed")
        ]
        out[d] = auroc([score[i] for i in pick], [table[i]["condition"] == "present" for i in pick])
    return out


VARIANTS = {
    "+ ltr z (shipped fusion model, in-sample on dev)": ["ltr_z"],
    "+ ltr top, margin, margin5, z (in-sample)": ["ltr_top", "ltr_margin", "ltr_margin5", "ltr_z"],
    "+ oof z (fold model)": ["oof_z"],
    "+ oof top, margin, margin5, z": ["oof_top", "oof_margin", "oof_margin5", "oof_z"],
    "+ pointwise P(relevant): top": ["bin_top"],
    "+ pointwise P(any of 5 relevant)": ["bin_any5"],
    "+ same_doc_top, doc_overlap": ["same_doc_top", "doc_overlap"],
    "+ lex_doc_in_dense, dense_doc_in_lex": ["lex_doc_in_dense", "dense_doc_in_lex"],
    "+ head_cov_dense": ["head_cov_dense"],
    "+ head_cov_dense, head_cov_lex, head_cov_best": ["head_cov_dense", "head_cov_lex",
                                                      "head_cov_best"],
    "+ big_lex, big_dense": ["big_lex", "big_dense"],
    "+ big_best, run_best": ["big_best", "run_best"],
    "+ csls_d": ["csls_d"],
    "+ csls_d, nn1_d, rnn_d, csls_l": ["csls_d", "nn1_d", "rnn_d", "csls_l"],
}  # fmt: skip


def lab_main(args: argparse.Namespace) -> None:
    table = joined(args.table, args.extra)
    print("single features, AUROC vs removed: " + " / ".join(DATASETS))
    for name in ("dense_z", "dense_top", *COLUMNS):
        found = removed_auroc(table, np.array([float(r[name]) for r in table]))
        print(f"  {name}: " + " ".join(f"{found[d]:.3f}" for d in DATASETS))
    print("| variant | 5-fold CV: " + " | ".join(DATASETS) + " | mean | lodo mean |")
    print("|---|" + "---|" * (len(DATASETS) + 2))
    base = list(FEATURES)
    runs = [("base (shipped features)", base, logistic)]
    runs += [(tag, base + extra, logistic) for tag, extra in VARIANTS.items()]
    hits = [r for r in table if r["condition"] == "removed" or r["label"] == "1"]
    cv, _ = measured(hits, base, logistic)
    cells = " | ".join(f"{cv[d]:.3f}" for d in DATASETS)
    print(f"| base, answerable side = present rows with a hit in the top 5 only | {cells} | "
          f"{np.mean(list(cv.values())):.4f} | |")  # fmt: skip
    runs += [("logistic + pairwise products, base", base, paired)]
    runs += [("HistGradientBoosting, base", base, boosted)]
    runs += [("HistGradientBoosting, base + oof", base + list(VARIANTS["+ oof z (fold model)"]),
              boosted)]  # fmt: skip
    for tag, names, learner in runs:
        cv, lodo = measured(table, names, learner)
        cells = " | ".join(f"{cv[d]:.3f}" for d in DATASETS)
        print(f"| {tag} | {cells} | {np.mean(list(cv.values())):.4f} | "
              f"{np.mean(list(lodo.values())):.4f} |", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("models")
    m.add_argument("dumps")
    m.add_argument("--db-dir", required=True)
    m.add_argument("--work", required=True)
    r = sub.add_parser("rows")
    r.add_argument("--split", required=True, choices=("dev", "final"))
    r.add_argument("--data", default="/work/shared/data")
    r.add_argument("--idx", required=True, help="indexes with heading vectors (read-only)")
    r.add_argument("--work", required=True, help="the models' folder; index copies go there")
    r.add_argument("--out", required=True)
    r.add_argument("--datasets", default="covid_faq_en,spf_qr_fr,piaf_fr,scifact")
    r.add_argument("--max-questions", type=int, default=300)
    lab = sub.add_parser("lab")
    lab.add_argument("table")
    lab.add_argument("extra")
    args = parser.parse_args()
    {"models": models_main, "rows": rows_main, "lab": lab_main}[args.command](args)


if __name__ == "__main__":
    main()
