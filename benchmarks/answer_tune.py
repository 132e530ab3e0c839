"""Choose the span settings and the verdict bands on a dev half (never on final or the demo).

``collect`` runs the search once per question and keeps what ``compose`` reads (hits,
decision, documents, question terms, cosines) in a pickle; ``grid`` then composes every
answer again under each setting of :mod:`kbsearch.judge.span` (module constants) and prints
the share of questions whose shown answer holds a gold answer, and the median length.

    python benchmarks/answer_tune.py collect --db /tmp/ans/piaf_fr.db \
        --questions /work/shared/data/piaf_fr --split dev --limit 400 --out /tmp/ans/piaf_dev.pkl
    python benchmarks/answer_tune.py grid /tmp/ans/piaf_dev.pkl \
        --gold /work/shared/data/piaf_fr/answers.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import pickle
import statistics
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from kbsearch.evaluation.answers import gold_of, read_gold_answers  # noqa: E402
from kbsearch.evaluation.formats import load_questions  # noqa: E402
from kbsearch.evaluation.runner import question_filters  # noqa: E402
from kbsearch.judge import span as span_module  # noqa: E402
from kbsearch.judge.answer import QuestionTerms, compose  # noqa: E402
from kbsearch.judge.confidence import Decision  # noqa: E402
from kbsearch.judge.evidence import term_statistics  # noqa: E402
from kbsearch.knowledge_base import open_kb  # noqa: E402


def collect(args: argparse.Namespace) -> None:
    qset = load_questions(Path(args.questions), args.split)
    chosen = sorted(qset.questions, key=lambda q: hashlib.sha256(q.qid.encode()).hexdigest())
    rows = []
    with open_kb(args.db) as kb:
        documents = {(d.document.doc_id, d.document.version): d.document
                     for d in kb.store.documents()}  # fmt: skip
        for q in chosen[: args.limit]:
            filters = question_filters(q, qset.access_aware, use_language=False)
            assessed = kb.assess(q.text, filters=filters)
            audience = str(filters.audience)
            languages = kb.store.languages(audience)
            stats = term_statistics(kb.impact_index(audience), kb.analyzer, q.text, languages)
            rows.append({
                "question": q,
                "hits": assessed.hits,
                "decision": assessed.decision,
                "documents": {(h.doc_id, h.version): documents[(h.doc_id, h.version)]
                              for h in assessed.hits},
                "languages": languages,
                "terms": QuestionTerms(stats.words, stats.idf, kb.analyzer.name),
                "cosines": dict(assessed.routes.get("dense", ())),
            })  # fmt: skip
    with open(args.out, "wb") as f:
        pickle.dump(rows, f)


def score(rows: list[dict], gold: dict) -> tuple[float, float, float]:
    """(shown answer holds the gold, the same when the cited passage is relevant, median
    length) with every question answered (the bands apart)."""
    right, cited_right, cited, lengths = 0, 0, 0, []
    for r in rows:
        q = r["question"]
        decision = Decision(True, 1.0, 0.0)
        a = compose(q.text, decision, r["hits"], r["documents"], r["languages"], r["terms"],
                    r["cosines"])  # fmt: skip
        g = gold_of(q.extra, gold, q.qid)
        ok = g.right(a.text)
        right += ok
        if a.text is not None:
            lengths.append(len(a.text))
        if a.citation is not None and any(rel.doc_id == a.citation.doc_id for rel in q.relevant):
            cited += 1
            cited_right += ok
    return right / len(rows), cited_right / max(cited, 1), statistics.median(lengths)


def grid(args: argparse.Namespace) -> None:
    with open(args.rows, "rb") as f:
        rows = pickle.load(f)
    gold = read_gold_answers(Path(args.gold)) if args.gold else {}
    settings = {
        "PASSAGES": [1, 2, 3, 5],
        "DENSE_WEIGHT": [0.0, 1.0, 3.0],
        "RANK_WEIGHT": [0.0, 0.05, 0.15],
        "SHORT_SPAN": [0, 60, 120],
    }
    for values in itertools.product(*settings.values()):
        for name, value in zip(settings, values, strict=True):
            setattr(span_module, name, value)
        held, cited, median = score(rows, gold)
        shown = ", ".join(f"{n}={v}" for n, v in zip(settings, values, strict=True))
        print(f"{shown}: holds {held:.3f}  when cited relevant {cited:.3f}  median {median:.0f}")


def bands(args: argparse.Namespace) -> None:
    """Per question: confidence, whether the shown answer is right (every question
    answered), for choosing the bands."""
    with open(args.rows, "rb") as f:
        rows = pickle.load(f)
    gold = read_gold_answers(Path(args.gold)) if args.gold else {}
    for r in rows:
        q, d = r["question"], r["decision"]
        a = compose(q.text, replace(d, floor=0.0, threshold=0.0), r["hits"], r["documents"],
                    r["languages"], r["terms"], r["cosines"])  # fmt: skip
        right = gold_of(q.extra, gold, q.qid).right(a.text)
        cover = a.span.coverage if a.span else 0.0
        print(f"{q.qid}\t{int(q.has_relevant)}\t{d.confidence:.4f}\t{cover:.3f}\t{int(right)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    for name in ("--db", "--questions", "--out"):
        c.add_argument(name, required=True)
    c.add_argument("--split", default="dev")
    c.add_argument("--limit", type=int, default=400)
    for name in ("grid", "bands"):
        g = sub.add_parser(name)
        g.add_argument("rows")
        g.add_argument("--gold", default=None)
    args = parser.parse_args()
    {"collect": collect, "grid": grid, "bands": bands}[args.command](args)


if __name__ == "__main__":
    main()
