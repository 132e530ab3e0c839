"""Choose the span settings and the verdict bands on a dev half (never on final or the demo).

``collect`` runs the search once per question and keeps what ``compose`` reads (hits,
decision, documents, question terms, cosines), as ``KnowledgeBase.ask`` gathers them, in a
pickle; ``vectors`` encodes the body sentences of each question's top passages and the
questions once (the sentence vectors an index could store; slow on a shared CPU) for the
span's sentence-level dense evidence; ``grid`` composes every answer again under each
setting of :mod:`kbsearch.judge.span` (module constants, ``--set NAME=[v1,v2]``) and prints
the share of questions whose shown answer holds a gold answer, the same when the cited
passage is relevant, how often the cited passage is relevant, and the median length (every
question answered: the bands apart).

    python benchmarks/answer_tune.py collect --db /tmp/span/piaf_fr.db \
        --questions /work/shared/data/piaf_fr --split dev --limit 400 --out /tmp/span/piaf_dev.pkl
    python benchmarks/answer_tune.py vectors /tmp/span/piaf_dev.pkl --db /tmp/span/piaf_fr.db \
        --out /tmp/span/piaf_dev_vec.pkl
    python benchmarks/answer_tune.py grid /tmp/span/piaf_dev.pkl \
        --gold /work/shared/data/piaf_fr/answers.jsonl --vectors /tmp/span/piaf_dev_vec.pkl \
        --set "RANK_WEIGHT=[0.05,0.3]" --set "SENTENCE_WEIGHT=[0.0,3.0]"
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import itertools
import math
import os
import pickle
import statistics
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from kbsearch.evaluation.answers import gold_of, read_gold_answers  # noqa: E402
from kbsearch.evaluation.formats import load_questions  # noqa: E402
from kbsearch.evaluation.runner import question_filters  # noqa: E402
from kbsearch.judge import span as span_module  # noqa: E402
from kbsearch.judge.answer import QuestionTerms, choose, compose  # noqa: E402
from kbsearch.judge.confidence import ConfidenceModel, Decision  # noqa: E402
from kbsearch.judge.confidence_features import (  # noqa: E402
    ANSWER_FEATURES,
    SPAN_FEATURES,
    span_features,
)
from kbsearch.judge.evidence import term_statistics  # noqa: E402
from kbsearch.knowledge_base import open_kb  # noqa: E402
from kbsearch.text.sentences import sentences  # noqa: E402

TOP = 5  # passages per question whose sentences ``vectors`` encodes


def collect(args: argparse.Namespace) -> None:
    """Each question searched under each of ``--conditions``: ``present`` as is, ``removed``
    with its relevant documents filtered out (an in-domain question the documents do not
    cover, as ``benchmarks/train_abstain.py``'s condition of that name)."""
    qset = load_questions(Path(args.questions), args.split)
    chosen = sorted(qset.questions, key=lambda q: hashlib.sha256(q.qid.encode()).hexdigest())
    rows = []
    with open_kb(args.db) as kb:
        every = sorted({d.document.doc_id for d in kb.documents()})
        jobs = [(q, c) for q in chosen[: args.limit] for c in args.conditions.split(",")]
        for q, condition in jobs:
            filters = question_filters(q, qset.access_aware, use_language=False)
            if condition == "removed":
                relevant = {r.doc_id for r in q.relevant}
                filters = replace(filters, doc_ids=[d for d in every if d not in relevant])
            assessed = kb.assess(q.text, filters=filters)
            audience = str(filters.audience)
            languages = kb.backend.languages(audience)
            stats = term_statistics(
                kb.backend.lexical_statistics(audience), kb.analyzer, q.text, languages
            )
            rows.append({
                "question": q,
                "condition": condition,
                "hits": assessed.hits,
                "decision": assessed.decision,
                "documents": kb.contents.cited(assessed.hits),
                "languages": languages,
                "terms": QuestionTerms(stats.words, stats.idf, kb.analyzer.name),
                "cosines": dict(assessed.routes.get("dense", ())),
                "headings": kb.backend.heading_scores(
                    kb.query_vector(q.text), [h.passage_id for h in assessed.hits[:TOP]]
                ),
            })  # fmt: skip
    with open(args.out, "wb") as f:
        pickle.dump(rows, f)


def vectors(args: argparse.Namespace) -> None:
    with open(args.rows, "rb") as f:
        rows = pickle.load(f)
    texts = {}
    for r in rows:
        for h in r["hits"][:TOP]:
            document = r["documents"].get((h.doc_id, h.version))
            texts[h.passage_id] = (h.text, document.language if document else None)
    keys, found = [], []
    for pid, (text, language) in texts.items():
        for s in sentences(text, language):
            keys.append((pid, s.start, s.end))
            found.append(s.text)
    with open_kb(args.db) as kb:
        embedder = kb.embedder()
        if embedder is None:
            raise SystemExit("this index has no embedder")
        batches = [embedder.encode_passages(found[i : i + 32]) for i in range(0, len(found), 32)]
        queries = {r["question"].qid: kb.query_vector(r["question"].text) for r in rows}
    with open(args.out, "wb") as f:
        pickle.dump({"keys": keys, "vectors": np.concatenate(batches), "queries": queries}, f)


def sentence_cosines(rows: list[dict], path: str | None) -> list[dict | None]:
    """Per row, its top passages' sentence cosines by passage id and offsets (``None``
    without a vectors file)."""
    if path is None:
        return [None] * len(rows)
    with open(path, "rb") as f:
        saved = pickle.load(f)
    by_passage: dict[str, dict[tuple[int, int], np.ndarray]] = {}
    for (pid, start, end), vector in zip(saved["keys"], saved["vectors"], strict=True):
        by_passage.setdefault(pid, {})[(start, end)] = vector
    out = []
    for r in rows:
        query = saved["queries"][r["question"].qid]
        found = {h.passage_id: by_passage.get(h.passage_id, {}) for h in r["hits"][:TOP]}
        out.append(
            {
                pid: {o: float(np.dot(v, query)) for o, v in own.items()}
                for pid, own in found.items()
            }
        )
    return out


def score(rows: list[dict], gold: dict, cosines: list[dict | None]) -> tuple[float, ...]:
    """(shown answer holds the gold, the same when the cited passage is relevant, cited
    passage relevant, median length) with every question answered (the bands apart)."""
    right, cited_right, cited, lengths, asked = 0, 0, 0, [], 0
    for r, own in zip(rows, cosines, strict=True):
        q = r["question"]
        if not q.has_relevant:
            continue
        asked += 1
        a = compose(q.text, Decision(True, 1.0, 0.0), r["hits"], r["documents"], r["languages"],
                    r["terms"], r["cosines"], own, r.get("headings"))  # fmt: skip
        ok = gold_of(q.extra, gold, q.qid).right(a.text)
        right += ok
        if a.text is not None:
            lengths.append(len(a.text))
        if a.citation is not None and any(rel.doc_id == a.citation.doc_id for rel in q.relevant):
            cited += 1
            cited_right += ok
    n = max(asked, 1)
    return right / n, cited_right / max(cited, 1), cited / n, statistics.median(lengths)


def grid(args: argparse.Namespace) -> None:
    with open(args.rows, "rb") as f:  # the questions as asked (a "removed" row cites no relevant)
        rows = [r for r in pickle.load(f) if r.get("condition", "present") == "present"]
    gold = read_gold_answers(Path(args.gold)) if args.gold else {}
    cosines = sentence_cosines(rows, args.vectors)
    settings = {}
    for item in args.settings:
        name, values = item.split("=", 1)
        getattr(span_module, name)  # an unknown setting fails here
        settings[name] = ast.literal_eval(values)
    for values in itertools.product(*settings.values()):
        for name, value in zip(settings, values, strict=True):
            setattr(span_module, name, value)
        held, cited_held, cited, median = score(rows, gold, cosines)
        shown = ", ".join(f"{n}={v}" for n, v in zip(settings, values, strict=True))
        print(
            f"{shown}: holds {held:.3f}  when cited relevant {cited_held:.3f}"
            f"  cited relevant {cited:.3f}  median {median:.0f}"
        )


def bands(args: argparse.Namespace) -> None:
    """Per question: confidence, whether the shown answer is right (every question
    answered), for choosing the bands."""
    with open(args.rows, "rb") as f:
        rows = pickle.load(f)
    gold = read_gold_answers(Path(args.gold)) if args.gold else {}
    for r in rows:
        q, d = r["question"], r["decision"]
        a = compose(q.text, replace(d, floor=0.0, threshold=0.0), r["hits"], r["documents"],
                    r["languages"], r["terms"], r["cosines"], None, r.get("headings"))  # fmt: skip
        right = gold_of(q.extra, gold, q.qid).right(a.text)
        cover = a.span.coverage if a.span else 0.0
        print(f"{q.qid}\t{int(q.has_relevant)}\t{d.confidence:.4f}\t{cover:.3f}\t{int(right)}")


TABLE = ("dataset", "qid", "condition", "label", "retrieval", *SPAN_FEATURES)


def retrieval_confidence(decision: Decision) -> float:
    """The retrieval stage's confidence of a collected decision: with the ``answer``
    sub-model shipped, ``decision.confidence`` is the span-aware one and the retrieval's is
    read back from its ``retrieval_logit`` feature (``1 / (1 + exp(-z))``, clipped as
    :func:`kbsearch.judge.confidence.span_features` clips it); without one (rows collected
    before it), ``decision.confidence`` itself."""
    z = decision.features.get("retrieval_logit")
    if z is None:
        return decision.confidence
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def table(args: argparse.Namespace) -> None:
    """One row per collected (question, condition): the span the stage would judge (the
    first passages of the hits) and its features; ``retrieval``: the retrieval confidence."""
    with open(args.rows, "rb") as f:
        rows = pickle.load(f)
    gold = read_gold_answers(Path(args.gold)) if args.gold else {}
    dataset = Path(args.rows).stem.split("_")[0]
    with open(args.out, "w", encoding="utf-8") as out:
        out.write("\t".join(TABLE) + "\n")
        for r in rows:
            q, hits = r["question"], r["hits"]
            usable = [h for h in hits if (h.doc_id, h.version) in r["documents"]]
            span = choose(usable, r["documents"], r["languages"], r["terms"], r["cosines"], q.text,
                          heading_cosines=r.get("headings"))  # fmt: skip
            label = 0
            if span is not None and r.get("condition", "present") == "present":
                hit = usable[span.passage]
                shown = hit.text[span.start : span.end]
                if gold:
                    label = int(gold_of(q.extra, gold, q.qid).right(shown))
                else:
                    label = int(any(rel.doc_id == hit.doc_id for rel in q.relevant))
            retrieval = retrieval_confidence(r["decision"])
            values = span_features(retrieval, span)
            cells = [dataset, q.qid, r.get("condition", "present"), str(label), f"{retrieval:.6g}"]
            out.write("\t".join(cells + [f"{values[n]:.6g}" for n in SPAN_FEATURES]) + "\n")


def _read(paths: list[str]) -> list[dict]:
    import csv

    found: list[dict] = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            found += list(csv.DictReader(f, delimiter="\t"))
    return found


def _training(table_rows: list[dict], names: tuple[str, ...] = ANSWER_FEATURES):  # noqa: ANN202
    from kbsearch.judge.confidence_fit import TrainingRow

    return [
        TrainingRow(
            stratum=r["dataset"],
            group=f"{r['dataset']}|{r['qid']}",
            covered=r["condition"] == "present",
            label=int(r["label"]),
            values={n: float(r[n]) for n in names},
        )
        for r in table_rows
    ]


def answer_model(rows: list[dict], trained_on: str, rule=None) -> ConfidenceModel:  # noqa: ANN001
    """The ``answer`` sub-model from dev table rows over
    :data:`~kbsearch.judge.confidence.ANSWER_FEATURES` (weights and calibration as
    :func:`kbsearch.judge.confidence_fit.fit`, on the half covered, half removed mix of each
    dataset; bands by ``rule``, a :class:`~kbsearch.judge.confidence_fit.BandRule`, default
    its defaults: what the questions as asked and those whose documents were removed see)."""
    from kbsearch.judge.confidence_fit import BandRule, fit

    return fit(
        _training(rows),
        ANSWER_FEATURES,
        bands=rule or BandRule(),
        info={"trained_on": trained_on, "label": "the shown span is right"},
    )


def fit_answer(args: argparse.Namespace) -> None:
    """The shipped model with its ``answer`` sub-model fitted on the dev tables."""
    from kbsearch.judge.confidence_fit import dumps

    rows = _read(args.tables)
    names = ", ".join(sorted({Path(t).name for t in args.tables}))
    from kbsearch.judge.confidence_fit import BandRule

    rule = BandRule(args.answered_precision, args.uncovered_answered, args.uncovered_shown)
    answer = answer_model(rows, names, rule)
    model = replace(ConfidenceModel.load(args.model), answer=answer)
    Path(args.out).write_text(dumps(model), encoding="utf-8")
    print(dict(zip(answer.names, answer.coef, strict=True)))
    print(f"answered from {answer.threshold}, uncertain from {answer.floor}")
    cross_validated_auroc(rows)


def cross_validated_auroc(rows: list[dict]) -> None:
    """Per dev dataset: AUROC of the cross-validated span-aware confidence and of the
    retrieval confidence alone, for the label (the shown span is right)."""
    from kbsearch.evaluation.abstention import auroc
    from kbsearch.judge.confidence_fit import cross_validated

    confidence = cross_validated(_training(rows), ANSWER_FEATURES)
    for dataset in sorted({r["dataset"] for r in rows}):
        for subset in ("all", "present"):
            keep = [
                i
                for i, r in enumerate(rows)
                if r["dataset"] == dataset and (subset == "all" or r["condition"] == "present")
            ]
            labels = [rows[i]["label"] == "1" for i in keep]
            span = auroc([float(confidence[i]) for i in keep], labels)
            alone = auroc([float(rows[i]["retrieval"]) for i in keep], labels)
            print(f"dev {dataset} {subset} ({len(keep)} rows, {sum(labels)} right): AUROC"
                  f" span-aware (CV) {span:.3f}, retrieval alone {alone:.3f}")  # fmt: skip


def transfer(args: argparse.Namespace) -> None:
    """Does a feature set carry from one collection to another? For each ordered pair of the
    table's datasets: fitted on one (:func:`kbsearch.judge.confidence_fit.fit`, its bands
    apart), the AUROC of "the shown span is right" on the other, over all rows and the
    ``present`` ones, for :data:`~kbsearch.judge.confidence.ANSWER_FEATURES` and
    :data:`~kbsearch.judge.confidence.SPAN_FEATURES`."""
    from kbsearch.evaluation.abstention import auroc
    from kbsearch.judge.confidence_fit import fit

    rows = _read(args.tables)
    datasets = sorted({r["dataset"] for r in rows})
    for names in (ANSWER_FEATURES, SPAN_FEATURES):
        for source, target in itertools.permutations(datasets, 2):
            model = fit(_training([r for r in rows if r["dataset"] == source], names), names)
            shown = []
            for subset in ("all", "present"):
                test = [r for r in rows if r["dataset"] == target]
                test = [r for r in test if subset == "all" or r["condition"] == "present"]
                c = [model.confidence({n: float(r[n]) for n in names}) for r in test]
                shown.append(f"{subset} {auroc(c, [r['label'] == '1' for r in test]):.3f}")
            print(f"{len(names)} features {source} -> {target}: AUROC " + ", ".join(shown))


def auroc_of(args: argparse.Namespace) -> None:
    """AUROC of the shipped span-aware confidence and of the retrieval confidence alone, for
    the label (shown span right) over all rows and over ``present`` rows, and the verdicts."""
    from kbsearch.evaluation.abstention import auroc

    model = ConfidenceModel.load(args.model)
    answer = model.answer
    threshold, floor = model.bands
    rows = _read(args.tables)
    if answer is None:
        raise SystemExit("the model has no answer sub-model")
    for subset in ("all", "present"):
        chosen = [r for r in rows if subset == "all" or r["condition"] == "present"]
        labels = [r["label"] == "1" for r in chosen]
        if len(set(labels)) < 2:
            continue
        span = [answer.confidence({n: float(r[n]) for n in answer.names}) for r in chosen]
        retrieval = [float(r["retrieval"]) for r in chosen]
        print(
            f"{subset} ({len(chosen)} rows, {sum(labels)} right): AUROC span-aware"
            f" {auroc(span, labels):.3f}, retrieval alone {auroc(retrieval, labels):.3f}"
        )
    for condition in sorted({r["condition"] for r in rows}):
        chosen = [r for r in rows if r["condition"] == condition]
        count = {"answered": [0, 0], "uncertain": [0, 0], "dont_say": [0, 0]}
        for r in chosen:
            c = answer.confidence({n: float(r[n]) for n in answer.names})
            v = "answered" if c >= threshold else "uncertain" if c >= (floor or 0) else "dont_say"
            count[v][0] += 1
            count[v][1] += r["label"] == "1"
        shown = ", ".join(f"{v} {n} ({right} right)" for v, (n, right) in count.items())
        print(f"{condition} ({len(chosen)}): {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    for name in ("--db", "--questions", "--out"):
        c.add_argument(name, required=True)
    c.add_argument("--split", default="dev")
    c.add_argument("--limit", type=int, default=400)
    c.add_argument("--conditions", default="present", help="present,removed")
    v = sub.add_parser("vectors")
    v.add_argument("rows")
    v.add_argument("--db", required=True)
    v.add_argument("--out", required=True)
    for name in ("grid", "bands"):
        g = sub.add_parser(name)
        g.add_argument("rows")
        g.add_argument("--gold", default=None)
    sub.choices["grid"].add_argument("--vectors", default=None)
    sub.choices["grid"].add_argument("--set", dest="settings", action="append", default=[])
    t = sub.add_parser("table")
    t.add_argument("rows")
    t.add_argument("--gold", default=None)
    t.add_argument("--out", required=True)
    f = sub.add_parser("fit")
    f.add_argument("tables", nargs="+")
    f.add_argument("--model", default=None, help="the model to attach to (default: shipped)")
    f.add_argument("--out", required=True)
    f.add_argument("--answered-precision", type=float, default=0.7)
    f.add_argument("--uncovered-answered", type=float, default=0.1)
    f.add_argument("--uncovered-shown", type=float, default=0.3)
    sub.add_parser("transfer").add_argument("tables", nargs="+")
    a = sub.add_parser("auroc")
    a.add_argument("tables", nargs="+")
    a.add_argument("--model", default=None)
    args = parser.parse_args()
    commands = {"collect": collect, "vectors": vectors, "grid": grid, "bands": bands}
    commands |= {"table": table, "fit": fit_answer, "auroc": auroc_of, "transfer": transfer}
    commands[args.command](args)


if __name__ == "__main__":
    main()
