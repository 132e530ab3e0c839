"""Answers judged on a question set, and ``ask``'s latency: the figures of issue 21.

``dump`` runs ``kb.ask`` on every question and writes each answer's JSON (one a line). It only
reads ``Answer.to_dict()``, so it runs on any kbsearch version (an old one has ``answerable``
and no ``verdict``): measure the code before a change by putting its ``src`` first on
PYTHONPATH. ``score`` judges a dump with :mod:`kbsearch.evaluation.answers` (gold answer
strings from ``--gold``, else the questions' ``keys``), overall, per kind and per language,
and on the questions whose cited passage is relevant. ``latency`` times ``ask`` warm.

    # PIAF final, today's code and the new one
    PYTHONPATH=/work/main/src python benchmarks/answers.py dump --db /tmp/ans/piaf_fr.db \
        --questions /work/shared/data/piaf_fr --split final --out /tmp/ans/piaf_final_old.jsonl
    python benchmarks/answers.py score /tmp/ans/piaf_final_old.jsonl \
        --questions /work/shared/data/piaf_fr --split final \
        --gold /work/shared/data/piaf_fr/answers.jsonl
    # AUROC of the confidence for a right answer: a dump where every span is shown
    python benchmarks/answers.py dump ... --min-confidence 0 --out /tmp/ans/demo_all.jsonl
    # the demo (93 questions), and ask's latency on it (warm: every question asked once first)
    python benchmarks/answers.py dump --db /tmp/ans/demo/helpcentre.db \
        --questions src/kbsearch/examples/helpcentre/questions.jsonl --out /tmp/ans/demo.jsonl
    python benchmarks/answers.py latency --db /tmp/ans/demo/helpcentre.db \
        --questions src/kbsearch/examples/helpcentre/questions.jsonl --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from kbsearch.evaluation.formats import load_questions  # noqa: E402
from kbsearch.evaluation.runner import question_filters  # noqa: E402
from kbsearch.knowledge_base import open_kb  # noqa: E402


def _questions(args: argparse.Namespace):  # noqa: ANN202
    return load_questions(Path(args.questions), args.split)


def dump(args: argparse.Namespace) -> None:
    qset = _questions(args)
    with open_kb(args.db) as kb, open(args.out, "w", encoding="utf-8") as out:
        for q in qset.questions:
            filters = question_filters(q, qset.access_aware, use_language=False)
            try:
                data = kb.ask(q.text, filters=filters, min_confidence=args.min_confidence)
                data = data.to_dict()
            except Exception as exc:  # noqa: BLE001 - a refused question is recorded
                data = {"refused": f"{type(exc).__name__}: {exc}"}
            out.write(json.dumps({"qid": q.qid, **data}, ensure_ascii=False) + "\n")


def score(args: argparse.Namespace) -> None:
    from kbsearch.evaluation.answers import judge_question, read_gold_answers, summarise_groups
    from kbsearch.records import Hit

    qset = _questions(args)
    gold = read_gold_answers(Path(args.gold)) if args.gold else {}
    rows = {r["qid"]: r for r in map(json.loads, Path(args.dump).read_text().splitlines())}
    items = []
    for q in qset.questions:
        row = rows.get(q.qid)
        if row is None or "refused" in row:
            continue
        verdict = row.get("verdict") or ("answered" if row["answerable"] else "dont_say")
        text = None if verdict == "dont_say" else row["answer"]
        cited = None
        if row.get("citation"):
            pid = row["citation"]["passage_id"]
            n = next(h for h in row["nearest"] if h["passage_id"] == pid)
            cited = Hit(n["rank"], pid, n["doc_id"], n["version"], n["section"], n["score"], "")
        items.append(judge_question(q, verdict, text, gold, cited))
    groups = summarise_groups(items)
    separated = aurocs(items, [rows[i.qid]["confidence"] for i in items])
    if args.json:
        groups["auroc"] = separated  # type: ignore[assignment]
        print(json.dumps(groups, indent=1))
        return
    from rich.console import Console

    from kbsearch.cli.eval_answers import print_summary

    print_summary(groups, Console(width=160))
    print(", ".join(f"AUROC of the confidence, {k}: {v}" for k, v in separated.items()))


def aurocs(items: list, confidence: list[float]) -> dict[str, float | None]:
    """AUROC of the answers' confidence for two labels: the question is answerable, and the
    shown answer is right (read it on a dump made with ``--min-confidence 0``, where every
    span is shown: a refusal's text is not in the dump)."""
    from kbsearch.evaluation.abstention import auroc

    def of(labels: list[bool]) -> float | None:
        found = auroc(confidence, labels)
        return None if found is None else round(found, 3)

    return {
        "answerable": of([i.answerable for i in items]),
        "right answer": of([i.right for i in items]),
    }


def latency(args: argparse.Namespace) -> None:
    qset = _questions(args)
    with open_kb(args.db) as kb:
        asks = [(q.text, question_filters(q, qset.access_aware, False)) for q in qset.questions]
        for text, filters in asks:  # warm: model loaded, caches filled once
            kb.ask(text, filters=filters)
        ms = []
        for _ in range(args.rounds):
            for text, filters in asks:
                start = time.perf_counter()
                kb.ask(text, filters=filters)
                ms.append((time.perf_counter() - start) * 1000)
    ms.sort()
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    print(f"ask warm over {len(ms)} calls: p50 {statistics.median(ms):.1f} ms, p95 {p95:.1f} ms")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("dump", "score", "latency"):
        p = sub.add_parser(name)
        p.add_argument("--questions", required=True)
        p.add_argument("--split", default="test")
        if name != "score":
            p.add_argument("--db", required=True)
    sub.choices["dump"].add_argument("--out", required=True)
    sub.choices["dump"].add_argument("--min-confidence", type=float, default=None)
    sub.choices["score"].add_argument("dump")
    sub.choices["score"].add_argument("--gold", default=None)
    sub.choices["score"].add_argument("--json", action="store_true")
    sub.choices["latency"].add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    {"dump": dump, "score": score, "latency": latency}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
