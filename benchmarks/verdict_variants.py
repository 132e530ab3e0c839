"""Try a confidence variant offline: the retrieval model refitted on another feature set, the
``answer`` sub-model refitted over it on dev, and every set's verdicts, without searching again.

Reads ``benchmarks/answer_tune.py collect`` pickles (each row keeps every retrieval feature the
search measured and what the span choice reads), fits the retrieval model on the retrieval dev
table (``benchmarks/data/abstain_dev.tsv``, as ``train_abstain.py fit``; the shipped dense-only
sub-model is kept: it decides for searches without lexical evidence whatever the main model's
features), then the ``answer`` sub-model on the ``--dev`` sets by the shipped band rule
(``answer_tune.py fit``), and prints per variant: the bands, the AUROC of "the shown span is
right" (dev: cross-validated, 5 folds by question; report sets: the fitted model), and the
verdict outcomes (dev: on the cross-validated confidences) as ``answer_sets.py`` counts them.
``--lodo`` adds, on the retrieval table, leave-one-collection-out AUROC (present and removed
rows) and level (on the held-out collection's questions as asked, the mean confidence minus
the share with a relevant passage in the top 5; and the mean confidence of its removed rows):
whether a feature set carries across collections, in order and in level.

    python benchmarks/verdict_variants.py --gold piaf=/work/shared/data/piaf_fr/answers.jsonl \
        --dev piaf=/tmp/verdict/piaf_dev.pkl --dev covid=/tmp/verdict/covid_dev.pkl \
        --report piaf_final=/tmp/verdict/piaf_final.pkl --report demo=/tmp/verdict/demo_test.pkl \
        --variant shipped: --variant "no-raw-cosine:-dense_top,-dense_margin,-dense_gap" --lodo

A variant is ``NAME:CHANGES``, comma-separated: ``-F`` drops retrieval feature F, ``+F`` adds
retrieval feature F to the answer sub-model, ``dev+S`` adds set S (given by ``--extra-dev``) to
the answer sub-model's dev sets. Labels as ``verdict_features.py`` gives them (a gold answer
held, else the demo's keys, else the span in a relevant passage).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from verdict_features import rows_of  # noqa: E402

from kbsearch.evaluation.abstention import auroc  # noqa: E402
from kbsearch.evaluation.answers import read_gold_answers  # noqa: E402
from kbsearch.judge.confidence import ConfidenceModel  # noqa: E402
from kbsearch.judge.confidence_features import (  # noqa: E402
    ALL_FEATURES,
    ANSWER_FEATURES,
    FEATURES,
    LEXICAL_FEATURES,
    span_features,
)
from kbsearch.judge.confidence_fit import (  # noqa: E402
    BandRule,
    TrainingRow,
    cross_validated,
    fit,
)

HERE = Path(__file__).resolve().parent
OUTCOMES = (
    "right", "ans. w/o gold", "unc. right", "unc. w/o gold", "unc. unansw.",
    "wrong refusal", "right refusal", "wrong answer",
)  # fmt: skip


def read_table(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def table_rows(table: list[dict], names: tuple[str, ...]) -> list[TrainingRow]:
    return [
        TrainingRow(
            r["dataset"], f"{r['dataset']}|{r['qid']}", r["covered"] == "1", int(r["label"]),
            {n: float(r[n]) for n in names},
        )
        for r in table
    ]  # fmt: skip


def retrieval_model(table: list[dict], names: tuple[str, ...]) -> ConfidenceModel:
    """As ``train_abstain.py fit`` over ``names``, the shipped dense-only sub-model kept."""
    found = fit(table_rows(table, names), names, precision=0.9, answer_precision=0.8)
    return replace(found, dense_only=ConfidenceModel.load().dense_only)


def retrieval_confidence(model: ConfidenceModel, values: dict) -> float:
    missing = any(math.isnan(values[n]) for n in LEXICAL_FEATURES)
    return (model.dense_only if missing and model.dense_only else model).confidence(values)


def answer_values(rows: list[dict], model: ConfidenceModel) -> list[dict]:
    """Each row's answer sub-model inputs: its retrieval features (NaN as 0) and
    :func:`span_features` of the retrieval confidence under ``model``."""
    out = []
    for r in rows:
        values = {n: r[n] for n in ALL_FEATURES}
        span = span_features(retrieval_confidence(model, values), r["span"])
        out.append({n: 0.0 if math.isnan(v) else v for n, v in values.items()} | span)
    return out


def outcomes(rows: list[dict], confidence: list[float], bands: tuple[float, float]) -> list[int]:
    """The counts of :data:`OUTCOMES` (``answer_sets.py``'s groups)."""
    count = dict.fromkeys(OUTCOMES, 0)
    for r, c in zip(rows, confidence, strict=True):
        verdict = 0 if c >= bands[0] else 1 if c >= bands[1] else 2
        if r["group"] == "U":
            count[("wrong answer", "unc. unansw.", "right refusal")[verdict]] += 1
        elif verdict == 2:
            count["wrong refusal"] += 1
        else:
            right = r["label"] == 1
            names = (("ans. w/o gold", "right"), ("unc. w/o gold", "unc. right"))[verdict]
            count[names[right]] += 1
    return [count[o] for o in OUTCOMES]


def _auroc(rows: list[dict], confidence, present: bool) -> str:  # noqa: ANN001
    keep = [i for i, r in enumerate(rows) if not present or r["group"] != "U"]
    found = auroc([float(confidence[i]) for i in keep], [rows[i]["label"] == 1 for i in keep])
    return "-" if found is None else f"{found:.3f}"


def run_variant(name: str, changes: list[str], sets: dict, table: list[dict]) -> list[list[str]]:
    """One variant's printed rows: ``[variant, set, bands, AUROC all, present, *outcomes]``."""
    drop = {c[1:] for c in changes if c.startswith("-")}
    add = tuple(c[1:] for c in changes if c.startswith("+"))
    extra = [c[4:] for c in changes if c.startswith("dev+")]
    model = retrieval_model(table, tuple(n for n in FEATURES if n not in drop))
    names = ANSWER_FEATURES + add
    dev_names = [s for s in sets if sets[s]["dev"] or s in extra]
    dev_rows = [r for s in dev_names for r in sets[s]["rows"]]
    dev_values = answer_values(dev_rows, model)
    training = [
        TrainingRow(r["set"], f"{r['set']}|{r['qid']}", r["group"] != "U", r["label"],
                    {n: v[n] for n in names})
        for r, v in zip(dev_rows, dev_values, strict=True)
    ]  # fmt: skip
    answer = fit(training, names, bands=BandRule())
    bands = (answer.threshold, answer.floor or 0.0)
    shown = f"{bands[0]:.3f} / {bands[1]:.3f}"
    held = cross_validated(training, names)
    printed = []
    for s, given in sets.items():
        rows = given["rows"]
        if s in dev_names:
            where = [i for i, r in enumerate(dev_rows) if r["set"] == s]
            confidence = [float(held[i]) for i in where]
            label = f"{s} (dev, CV)"
        elif given["dev"] or s in extra or not given["report"]:
            continue
        else:
            values = answer_values(rows, model)
            confidence = [answer.confidence(v) for v in values]
            label = s
        cells = [_auroc(rows, confidence, False), _auroc(rows, confidence, True)]
        counts = outcomes(rows, confidence, bands)
        printed.append([name, label, shown, *cells, *(str(c) for c in counts)])
    return printed


def lodo(table: list[dict], names: tuple[str, ...]) -> str:
    """Leave one collection out on the retrieval table (module docstring)."""
    rows = [r for r in table if r["condition"] in ("present", "removed")]
    shown = []
    for held in sorted({r["dataset"] for r in table}):
        model = fit(table_rows([r for r in table if r["dataset"] != held], names), names)
        test = [r for r in rows if r["dataset"] == held]
        c = np.array([model.confidence({n: float(r[n]) for n in names}) for r in test])
        y = np.array([int(r["label"]) for r in test])
        covered = np.array([r["covered"] == "1" for r in test])
        level = c[covered].mean() - y[covered].mean()
        found = auroc(list(c), list(y == 1))
        shown.append(f"{held} {found:.3f} ({level:+.3f}, removed {c[~covered].mean():.3f})")
    return ", ".join(shown)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for flag in ("--dev", "--extra-dev", "--report", "--gold"):
        parser.add_argument(flag, action="append", default=[], help="NAME=PATH")
    parser.add_argument("--table", default=str(HERE / "data" / "abstain_dev.tsv"))
    parser.add_argument("--variant", action="append", default=[], help="NAME:CHANGES")
    parser.add_argument("--lodo", action="store_true")
    args = parser.parse_args()
    golds = dict(g.split("=", 1) for g in args.gold)
    sets: dict[str, dict] = {}
    for flag, dev, report in (("dev", True, False), ("extra_dev", False, False),
                              ("report", False, True)):  # fmt: skip
        for spec in getattr(args, flag):
            name, path = spec.split("=", 1)
            gold = read_gold_answers(Path(golds[name])) if name in golds else {}
            sets[name] = {"rows": rows_of(name, path, gold), "dev": dev, "report": report}
    table = read_table(Path(args.table))
    head = ["variant", "set", "bands", "AUROC all", "AUROC present", *OUTCOMES]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    lodo_lines = []
    for spec in args.variant or ["shipped:"]:
        name, _, changes = spec.partition(":")
        parts = [c for c in changes.split(",") if c]
        for row in run_variant(name, parts, sets, table):
            print("| " + " | ".join(row) + " |")
        if args.lodo:
            drop = {c[1:] for c in parts if c.startswith("-")}
            lodo_lines.append(
                f"{name}: " + lodo(table, tuple(n for n in FEATURES if n not in drop))
            )
    for line in lodo_lines:
        print(line)


if __name__ == "__main__":
    main()
