"""Why a collection's right spans get a low confidence: every confidence feature per set.

Reads ``benchmarks/answer_tune.py collect`` pickles (the dev halves, the demo as a report set)
and prints, per feature of the retrieval model and of the ``answer`` sub-model, its median per
group (A:R the question as asked, shown span right; A:W shown span wrong; U unanswerable or
its documents removed) and, for the shipped model's features, the mean of the feature's term
in the logit (``coef * (x - mean) / scale``): which terms pull a set's right spans down.

    python benchmarks/verdict_features.py piaf=/tmp/verdict/piaf_dev.pkl \
        covid=/tmp/verdict/covid_dev.pkl demo=/tmp/verdict/demo_test.pkl \
        --gold piaf=/work/shared/data/piaf_fr/answers.jsonl

A set's label is the one ``answer_tune.py table`` writes: a gold answer held (``--gold``), else
the demo's ``keys`` held, else the span lies in a relevant passage; a question without relevant
passages (the demo's ``abstain``) or searched with them removed is U. The rows are also
written with every feature (``--out``, TSV) for offline fits.
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import statistics
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from kbsearch.evaluation.answers import gold_of, read_gold_answers  # noqa: E402
from kbsearch.judge.answer import choose  # noqa: E402
from kbsearch.judge.confidence import ConfidenceModel  # noqa: E402
from kbsearch.judge.confidence_features import ALL_FEATURES, SPAN_FEATURES  # noqa: E402

GROUPS = ("A:R", "A:W", "U")
EXTRA = ("first_rank", "passages_listed", "relevant_top5")


def rows_of(name: str, path: str, gold: dict) -> list[dict]:
    """One dict per collected search: set, qid, condition, group, label, the span ``choose``
    picks now and every feature (the retrieval ones as collected, the span's of that span)."""
    with open(path, "rb") as f:
        collected = pickle.load(f)
    out = []
    for r in collected:
        q, hits = r["question"], r["hits"]
        usable = [h for h in hits if (h.doc_id, h.version) in r["documents"]]
        span = choose(usable, r["documents"], r["languages"], r["terms"], r["cosines"], q.text)
        removed = r.get("condition", "present") == "removed"
        label = 0
        if span is not None and not removed and q.relevant:
            hit = usable[span.passage]
            target = gold_of(q.extra, gold, q.qid)
            shown = hit.text[span.start : span.end]
            if target:
                label = int(target.right(shown))
            else:
                label = int(any(rel.doc_id == hit.doc_id for rel in q.relevant))
        group = "U" if removed or not q.relevant else ("A:R" if label else "A:W")
        values = dict(r["decision"].features)
        z = values["retrieval_logit"]
        retrieval = 1.0 / (1.0 + math.exp(-z))
        ranks = [i for i, h in enumerate(hits) if any(rel.doc_id == h.doc_id for rel in q.relevant)]
        out.append({
            "set": name, "qid": q.qid, "condition": r.get("condition", "present"),
            "kind": q.kind or "", "group": group, "label": label,
            "retrieval": retrieval, "shown": r["decision"].confidence,
            "first_rank": ranks[0] if ranks and not removed else -1,
            "passages_listed": len(hits), "span": span,
            "relevant_top5": int(bool(ranks) and ranks[0] < 5 and not removed),
            **{n: values.get(n, math.nan) for n in ALL_FEATURES},
            **{n: values.get(n, math.nan) for n in SPAN_FEATURES},
        })  # fmt: skip
    return out


def _median(values: list[float]) -> str:
    kept = [v for v in values if not math.isnan(v)]
    return f"{statistics.median(kept):.3f}" if kept else "-"


def report(rows: list[dict], sets: list[str]) -> None:
    """The medians table and the shipped model's mean logit terms (module docstring)."""
    model = ConfidenceModel.load()
    answer = model.answer
    cols = [(s, g) for s in sets for g in GROUPS]
    head = ["feature", *(f"{s} {g}" for s, g in cols)]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    count = ["n", *(str(sum(r["set"] == s and r["group"] == g for r in rows)) for s, g in cols)]
    print("| " + " | ".join(count) + " |")
    for name in ("retrieval", "shown", *ALL_FEATURES, *SPAN_FEATURES[1:]):
        cells = [
            _median([r[name] for r in rows if r["set"] == s and r["group"] == g]) for s, g in cols
        ]
        print("| " + " | ".join([name, *cells]) + " |")
    for title, m in (("retrieval model", model), ("answer sub-model", answer)):
        if m is None:
            continue
        print(f"\nmean term in the {title}'s logit (coef * (x - mean) / scale)\n")
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for n, mean, scale, coef in zip(m.names, m.mean, m.scale, m.coef, strict=True):
            cells = []
            for s, g in cols:
                terms = [
                    coef * (r[n] - mean) / scale
                    for r in rows
                    if r["set"] == s and r["group"] == g and not math.isnan(r[n])
                ]
                cells.append(f"{statistics.fmean(terms):+.2f}" if terms else "-")
            print("| " + " | ".join([n, *cells]) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sets", nargs="+", help="NAME=collected.pkl")
    parser.add_argument("--gold", action="append", default=[], help="NAME=answers.jsonl")
    parser.add_argument("--out", default=None, help="write every row's features here (TSV)")
    args = parser.parse_args()
    golds = dict(g.split("=", 1) for g in args.gold)
    rows: list[dict] = []
    names = []
    for spec in args.sets:
        name, path = spec.split("=", 1)
        names.append(name)
        gold = read_gold_answers(Path(golds[name])) if name in golds else {}
        rows += rows_of(name, path, gold)
    report(rows, names)
    if args.out:
        keys = [k for k in rows[0] if k != "span"]
        with open(args.out, "w", encoding="utf-8") as f:
            f.write("\t".join(keys) + "\n")
            for r in rows:
                f.write("\t".join(str(r[k]) for k in keys) + "\n")


if __name__ == "__main__":
    main()
