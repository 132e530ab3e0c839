"""Train and measure the abstention model (kbsearch.judge.confidence) on the shared datasets.

Steps, each reproducible:

  # 1. features of every searched (question, condition), from built indexes (encodes queries);
  #    --evidence also keeps each row's Evidence so tables can be rebuilt without searching
  python benchmarks/train_abstain.py features --data /work/shared/data --idx /work/idx \
      --split dev --out benchmarks/data/abstain_dev.tsv [--evidence /tmp/ev_dev.pkl]
  # 1b. a table from kept evidence with today's feature definitions (no search)
  python benchmarks/train_abstain.py table /tmp/ev_dev.pkl --out benchmarks/data/abstain_dev.tsv
  # 2. fit the model on the dev table (deterministic: the same table gives the same file)
  python benchmarks/train_abstain.py fit benchmarks/data/abstain_dev.tsv \
      --out src/kbsearch/judge/models/abstain.json
  # 3. measure it on the final half
  python benchmarks/train_abstain.py features ... --split final \
      --out benchmarks/data/abstain_final.tsv
  python benchmarks/train_abstain.py report benchmarks/data/abstain_final.tsv
  # 3a. the risk-coverage trade-off on dev (cross-validated confidences per threshold)
  python benchmarks/train_abstain.py tradeoff benchmarks/data/abstain_dev.tsv
  # 3b. leave one collection out on the dev table (transfer to an unseen collection)
  python benchmarks/train_abstain.py lodo benchmarks/data/abstain_dev.tsv
  # 4. the demo question set (builds a demo index in --work when absent)
  python benchmarks/train_abstain.py demo

Conditions per question of a dataset's split (qrels/SPLIT.tsv):
  present  searched as is (its relevant documents are in the index);
  removed  searched with every passage of its relevant documents taken out of each route's
           candidates before the top ``depth`` is cut (as a document filter would), then fused:
           an in-domain question the documents do not cover;
  other    a question of the other collection in the same language (covid_faq_en <-> scifact,
           spf_qr_fr <-> piaf_fr), searched in this one.
``label`` is 1 when a relevant passage is in the fused top k (5); ``first_rank`` is the rank of
the first relevant passage in the fused list (0 when none).
Routes as kbsearch's defaults: lexical (stemmed BM25 impact index) and dense (stored vectors,
e5-int8) top 100 under the staff audience (BEIR sets carry no access labels), RRF k = 10.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import pickle
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from kbsearch.evaluation.abstention import summarise, summarise_groups
from kbsearch.evaluation.formats import load_questions
from kbsearch.filters import Filters
from kbsearch.fuse.rrf import DEFAULT_RRF_K, reciprocal_rank_fusion
from kbsearch.judge.confidence import ConfidenceModel
from kbsearch.judge.confidence_features import (
    ALL_FEATURES,
    DENSE_FEATURES,
    FEATURES,
    HUB_DEPTH,
    RELATIVE_FEATURES,
    features,
)
from kbsearch.judge.confidence_fit import TrainingRow, cross_validated, dumps, fit
from kbsearch.judge.evidence import Background, gather, term_statistics
from kbsearch.knowledge_base import open_kb
from kbsearch.retrieve.topk import top_k
from kbsearch.text.language import detect_language

PARTNER = {
    "covid_faq_en": "scifact",
    "scifact": "covid_faq_en",
    "spf_qr_fr": "piaf_fr",
    "piaf_fr": "spf_qr_fr",
}
DEPTH = 100
K = 5
LABEL = "hit"
COLUMNS = ("dataset", "qid", "condition", "covered", "label", "first_rank", "language")


def questions(data: Path, dataset: str, split: str, limit: int) -> list:
    """The split's questions with relevant documents, the first ``limit`` by sha256 of id."""
    found = [
        q for q in load_questions(data / dataset, split, format="beir").questions if q.relevant
    ]
    found.sort(key=lambda q: hashlib.sha256(q.qid.encode()).hexdigest())
    return found[:limit]


def ranked(scores, candidates, ids, depth):
    return top_k(candidates, scores[candidates], ids, depth)


class Searched(NamedTuple):
    """One searched (question, condition): each route's top ``DEPTH`` under the condition, the
    full score arrays they were cut from (``cos`` over the dense rows, ``bm`` over the impact
    rows), the dense rows the condition keeps, the RRF-fused list and the rank of its first
    relevant passage (0 when none, always 0 for ``other``)."""

    question: Any
    condition: str
    lexical: list
    dense: list
    cos: np.ndarray
    bm: np.ndarray
    keep_dense: np.ndarray
    fused: list
    first: int


def searched(kb, own, other, vectors):  # noqa: ANN001, ANN201
    """Every (question, condition) of a dataset searched as the module docstring says: its
    own questions ``present`` and ``removed``, the partner collection's ``other``."""
    impact = kb.impact_index("staff")
    dense = kb.dense_index()
    filters = Filters(audience="staff")
    dense_mask = dense.mask(filters)
    lexical_mask = impact.columns.mask(filters)
    jobs = [(q, "present") for q in own] + [(q, "removed") for q in own]
    jobs += [(q, "other") for q in other]
    for q, condition in jobs:
        relevant = {r.doc_id for r in q.relevant}
        vector = vectors[q.text]
        cos = dense.scores(vector)
        # the lexical route's own kept terms, in its order (stats groups them by query word)
        bm = impact.scores(impact.terms(kb.analyzer, q.text, filters).kept)
        keep_d, keep_l = dense_mask.copy(), lexical_mask & (bm > 0)
        if condition == "removed":
            keep_d &= ~np.isin(dense.table.doc_id, list(relevant))
            keep_l &= ~np.isin(impact.columns.doc_id, list(relevant))
        d_list = ranked(cos, np.flatnonzero(keep_d), dense.table.passage_ids, DEPTH)
        l_list = ranked(bm, np.flatnonzero(keep_l), impact.passage_ids, DEPTH)
        fused = reciprocal_rank_fusion({"lexical": l_list, "dense": d_list}, k=DEFAULT_RRF_K)
        first = 0
        if condition != "other":
            docs = kb.store.passages.rows(f.passage_id for f in fused)
            for rank, f in enumerate(fused, start=1):
                if docs[f.passage_id].passage.doc_id in relevant:
                    first = rank
                    break
        yield Searched(q, condition, l_list, d_list, cos, bm, keep_d, fused, first)


def search_rows(kb, dataset, own, other, out, vectors, kept_evidence):
    impact = kb.impact_index("staff")
    dense = kb.dense_index()
    background = Background.of(dense.table.vectors, dense.generation)
    centrality = np.asarray(dense.table.vectors, dtype=np.float64) @ background.mean
    row = {pid: i for i, pid in enumerate(dense.table.passage_ids)}
    languages = impact.languages
    for s in searched(kb, own, other, vectors):
        q, meta = s.question, row_meta(dataset, s)
        stats = term_statistics(impact, kb.analyzer, q.text, languages)
        language = meta[-1]
        evidence = gather(
            impact,
            stats,
            s.lexical,
            s.dense,
            background.of_query(vectors[q.text]),
            language,
            lambda ids: {p: r.passage.text for p, r in kb.store.passages.rows(ids).items()},
            kb.analyzer,
            languages,
            centrality=[float(centrality[row[p]]) for p, _ in s.dense[:HUB_DEPTH]],
        )
        kept_evidence.append((meta, evidence))
        out.writerow(table_row(meta, evidence))


def row_meta(dataset: str, s: Searched) -> list:
    """A table row's description: dataset, owner/qid, condition, covered, label, first rank,
    language."""
    owner = dataset if s.condition != "other" else PARTNER[dataset]
    meta = [dataset, f"{owner}/{s.question.qid}", s.condition, int(s.condition == "present")]
    return meta + [int(0 < s.first <= K), s.first, detect_language(s.question.text)]


def table_row(meta, evidence):
    """A feature table row: the row's description, then :data:`ALL_FEATURES` (6 digits)."""
    values = features(evidence)
    return [*meta, *(f"{values[n]:.6g}" for n in ALL_FEATURES)]


def query_vectors(kb, found: list) -> dict:  # noqa: ANN001
    """``{text: query vector}`` of the questions (the index's embedder, batches of 32)."""
    embedder = kb.embedder()
    texts = sorted({q.text for q in found})
    vectors = {}
    for i in range(0, len(texts), 32):
        batch = texts[i : i + 32]
        vectors.update(zip(batch, embedder.encode_queries(batch), strict=True))
    return vectors


def features_command(args) -> None:
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    kept_evidence: list = []
    with open(args.out, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle, delimiter="\t", lineterminator="\n")
        out.writerow(COLUMNS + ALL_FEATURES)
        for dataset in args.datasets.split(","):
            copy = work / f"{dataset}.db"
            if not copy.exists():
                shutil.copyfile(Path(args.idx) / f"{dataset}.db", copy)
            own = questions(Path(args.data), dataset, args.split, args.max_questions)
            other = questions(Path(args.data), PARTNER[dataset], args.split, args.max_questions)
            with open_kb(copy) as kb:
                vectors = query_vectors(kb, own + other)
                search_rows(kb, dataset, own, other, out, vectors, kept_evidence)
            print(
                f"{dataset}: {len(own)} questions, {len(other)} from {PARTNER[dataset]}",
                file=sys.stderr,
            )
    if args.evidence:
        with open(args.evidence, "wb") as handle:
            pickle.dump(kept_evidence, handle, protocol=5)


def table_command(args) -> None:
    """The feature table again from kept evidence, with today's feature definitions (no search)."""
    with open(args.evidence, "rb") as handle:
        kept_evidence = pickle.load(handle)
    with open(args.out, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle, delimiter="\t", lineterminator="\n")
        out.writerow(COLUMNS + ALL_FEATURES)
        for meta, evidence in kept_evidence:
            out.writerow(table_row(meta, evidence))


def read_table(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def training_rows(table: list[dict], names: tuple[str, ...] = ALL_FEATURES) -> list[TrainingRow]:
    """The table's rows as :class:`TrainingRow` with the features ``names`` (a table made
    before a feature existed lacks its column: read it with the names it has)."""
    return [
        TrainingRow(
            stratum=r["dataset"],
            group=f"{r['dataset']}|{r['qid']}",
            covered=r["covered"] == "1",
            label=int(r["label"]) if LABEL == "hit" else int(r["covered"]),
            values={n: float(r[n]) for n in names},
        )
        for r in table
    ]


# the shipped retrieval model's features
MODEL_FEATURES = FEATURES
# the absolute cosine and BM25 levels, which differ between collections and wordings
ABSOLUTE_LEVELS = (
    "dense_top",
    "dense_margin",
    "dense_gap",
    "dense_z",
    "lexical_top",
    "lexical_margin",
    "cross_lexical",
    "cross_dense",
)
RELATIVE = tuple(n for n in ALL_FEATURES if n not in ABSOLUTE_LEVELS)
# what ``lodo --features`` compares: the shipped model's, every measured one, those read within
# the query's own lists or as shares of its words (no absolute level), the same without hubness
FEATURE_SETS = {
    "model": MODEL_FEATURES,
    "all": ALL_FEATURES,
    "relative": RELATIVE,
    "relative-no-hubness": tuple(n for n in RELATIVE if n not in RELATIVE_FEATURES[3:]),
}
VERDICT_NOTE = (
    "the retrieval confidence (a relevant passage in the fused top k); its threshold and"
    " uncertain_from are decide()'s own cuts: the verdict every search shows is banded by the"
    " answer sub-model's"
)


def build_model(
    table: list[dict], path: str, precision: float = 0.9, answer_precision: float = 0.8
) -> ConfidenceModel:
    """The shipped retrieval model from the dev table at ``path``: :data:`MODEL_FEATURES`,
    the dense-only sub-model over those of them that read the dense route alone (for
    searches whose lexical evidence is missing), and its own cuts (answered from
    ``answer_precision``, uncertain from ``precision``'s cut; the verdict's bands are the
    ``answer`` sub-model's, fitted apart)."""
    return fit(
        training_rows(table, MODEL_FEATURES),
        MODEL_FEATURES,
        precision=precision,
        answer_precision=answer_precision,
        info={"trained_on": Path(path).name, "k": K, "note": VERDICT_NOTE},
        dense_only=tuple(n for n in MODEL_FEATURES if n in DENSE_FEATURES),
    )


def fit_command(args) -> None:
    """Fit the retrieval model; the ``answer`` sub-model of the file at ``--out`` (when there
    is one) is kept as it is: it is fitted apart (``benchmarks/answer_tune.py fit``)."""
    table = read_table(args.table)
    model = build_model(table, args.table, args.precision)
    if Path(args.out).exists():
        model = replace(model, answer=ConfidenceModel.load(args.out).answer)
    Path(args.out).write_text(dumps(model), encoding="utf-8")
    print(json.dumps({n: c for n, c in zip(model.names, model.coef, strict=True)}, indent=1))
    print(f"threshold {model.threshold}")
    if model.dense_only is not None:
        sub = model.dense_only
        print("dense only:", json.dumps(dict(zip(sub.names, sub.coef, strict=True)), indent=1))


def lodo_command(args) -> None:
    """Leave one collection out, on the dev table only: fit on three datasets, measure on the
    fourth (AUROC present vs removed and vs other, answered share of present at the fitted
    threshold): how the model transfers to a collection it never saw."""
    from kbsearch.evaluation.abstention import auroc

    table = read_table(args.table)
    result = {}
    for dataset in sorted({r["dataset"] for r in table}):
        train = [r for r in table if r["dataset"] != dataset]
        test = [r for r in table if r["dataset"] == dataset]
        names = FEATURE_SETS[args.features]
        model = fit(training_rows(train, names), names, precision=args.precision)
        conf = {id(r): model.confidence({n: float(r[n]) for n in names}) for r in test}
        entry = {}
        for other in ("removed", "other"):
            pair = [r for r in test if r["condition"] in ("present", other)]
            found = auroc([conf[id(r)] for r in pair], [r["condition"] == "present" for r in pair])
            entry[f"auroc_vs_{other}"] = found
        present = [conf[id(r)] for r in test if r["condition"] == "present"]
        entry["threshold"] = model.threshold
        entry["answered_present"] = sum(c >= model.threshold for c in present) / len(present)
        result[dataset] = entry
    print(json.dumps(result, indent=1))


def tradeoff_command(args) -> None:
    """The risk-coverage trade-off on dev (cross-validated calibrated confidences, no final
    data): per threshold, the share of covered questions answered (``present``; mean over the
    datasets, and the lowest), the risk among them (no relevant passage in the top k), the
    share abstained on of ``removed`` and of ``other`` questions, and the abstention precision
    for two mixes of in-domain questions: half covered (the training mix) and four covered for
    one not (a help centre whose documents cover most questions). Also the highest cut that
    answers ``--answered`` of the covered questions."""
    table = read_table(args.table)
    confidence = cross_validated(training_rows(table, MODEL_FEATURES), MODEL_FEATURES)
    condition = np.array([r["condition"] for r in table])
    dataset = np.array([r["dataset"] for r in table])
    hit = np.array([r["label"] == "1" for r in table])
    datasets = sorted(set(dataset))

    def share(kind: str, event: np.ndarray, given: np.ndarray | None = None) -> list[float]:
        """Per dataset: the share of its ``kind`` rows (and ``given``) where ``event`` holds."""
        out = []
        for d in datasets:
            rows = (condition == kind) & (dataset == d)
            if given is not None:
                rows &= given
            out.append(float(event[rows].mean()) if rows.any() else 0.0)
        return out

    candidates = sorted({round(float(c), 3) for c in confidence})
    coverage_cut = max(
        t for t in candidates if np.mean(share("present", confidence >= t)) >= args.answered
    )
    model = ConfidenceModel.load(args.model)
    cuts = sorted({*args.thresholds, model.threshold, coverage_cut})
    print(
        "| threshold | answered (covered) | lowest dataset | risk among answered |"
        " abstained: removed | abstained: other | precision 1:1 | precision 4:1 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for t in cuts:
        answer = confidence >= t
        answered = share("present", answer)
        a = float(np.mean(answered))
        risk = float(np.mean(share("present", ~hit, given=answer)))
        removed = float(np.mean(share("removed", ~answer)))
        other = float(np.mean(share("other", ~answer)))
        precision = [(1 - p) * removed / ((1 - p) * removed + p * (1 - a)) for p in (0.5, 0.8)]
        note = " (default)" if t == model.threshold else ""
        note += f" (answers {args.answered:.0%})" if t == coverage_cut else ""
        print(
            f"| {t:.3f}{note} | {a:.3f} | {min(answered):.3f} | {risk:.3f} | {removed:.3f}"
            f" | {other:.3f} | {precision[0]:.3f} | {precision[1]:.3f} |"
        )


def report_command(args) -> None:
    model = ConfidenceModel.load(args.model)
    threshold = model.threshold if args.threshold is None else args.threshold
    table = read_table(args.table)
    result = summarise(table, model, threshold, k=K)
    print(json.dumps(result, indent=1))


def demo_command(args) -> None:
    """Confidence of every demo question (public audience unless staff-only, its as_of),
    against a demo index built in ``--work`` (with the default embedder) if absent."""
    from kbsearch.evaluation.judging import matches
    from kbsearch.evaluation.runner import question_filters
    from kbsearch.judge.evidence import collect
    from kbsearch.tasks.demo import demo_files, examples_dir

    model = ConfidenceModel.load(args.model)
    threshold = model.threshold if args.threshold is None else args.threshold
    path = Path(args.work) / "demo.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    qset = load_questions(examples_dir() / "questions.jsonl")
    items = []
    with open_kb(path, create=not path.exists()) as kb:
        if not kb.settings:
            kb.index(demo_files(), inventory=examples_dir() / "inventory.csv")
        for q in qset.questions:
            filters = question_filters(q, qset.access_aware, use_language=False)
            lexical = kb.routes["lexical"].candidates(q.text, filters, DEPTH)
            dense = kb.routes["dense"].candidates(q.text, filters, DEPTH)
            hits = kb.search(q.text, k=K, filters=filters)
            hit = any(matches(r, h) for r in q.relevant for h in hits)
            evidence = collect(
                kb.backend,
                kb.analyzer,
                q.text,
                filters,
                lexical,
                dense,
                kb.query_vector(q.text),
                kb.passage_rows_of,
            )
            confidence = model.decide(evidence, threshold).confidence
            items.append(
                {
                    "qid": q.qid,
                    "kind": q.kind,
                    "language": q.language,
                    "answerable": not q.abstain,
                    "hit": hit,
                    "confidence": round(confidence, 4),
                    "answered": confidence >= threshold,
                }
            )
    if args.verbose:
        for item in items:
            print(json.dumps(item))
    result = summarise_groups(items, ["kind", "language"], threshold)
    print(json.dumps(result, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("features")
    f.add_argument("--data", required=True)
    f.add_argument("--idx", required=True)
    f.add_argument("--split", required=True, choices=("dev", "final"))
    f.add_argument("--out", required=True)
    f.add_argument("--datasets", default="covid_faq_en,spf_qr_fr,piaf_fr,scifact")
    f.add_argument("--max-questions", type=int, default=300)
    f.add_argument("--work", default="/tmp/abstain_idx", help="where the index copies go")
    f.add_argument("--evidence", default=None, help="also keep each row's evidence (pickle)")
    e = sub.add_parser("table", help="the feature table from kept evidence (no search)")
    e.add_argument("evidence")
    e.add_argument("--out", required=True)
    t = sub.add_parser("fit")
    t.add_argument("table")
    t.add_argument("--out", required=True)
    t.add_argument("--precision", type=float, default=0.9)
    lo = sub.add_parser("lodo", help="leave one collection out (dev table)")
    lo.add_argument("table")
    lo.add_argument("--precision", type=float, default=0.9)
    lo.add_argument("--features", choices=sorted(FEATURE_SETS), default="model")
    tr = sub.add_parser("tradeoff", help="risk-coverage trade-off on the dev table (CV)")
    tr.add_argument("table")
    tr.add_argument("--model", default=None)
    tr.add_argument("--answered", type=float, default=0.9)
    tr.add_argument("--thresholds", type=float, nargs="*", default=[0.05, 0.1, 0.15, 0.2, 0.3])
    r = sub.add_parser("report")
    r.add_argument("table")
    r.add_argument("--model", default=None)
    r.add_argument("--threshold", type=float, default=None)
    d = sub.add_parser("demo")
    d.add_argument("--model", default=None)
    d.add_argument("--threshold", type=float, default=None)
    d.add_argument("--work", default="/tmp/abstain_idx")
    d.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    commands = {
        "features": features_command,
        "table": table_command,
        "fit": fit_command,
        "report": report_command,
        "lodo": lodo_command,
        "tradeoff": tradeoff_command,
        "demo": demo_command,
    }
    commands[args.command](args)


if __name__ == "__main__":
    main()
