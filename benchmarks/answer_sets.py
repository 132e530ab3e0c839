"""Every answer set through ``kb.ask`` in one run: issue 21's verdict table per set.

Sets (:data:`SETS`): the bundled demo (93 questions, 14 unanswerable; right = the answer holds
every ``key``), the two documentation sets kept in ``benchmarks/data`` (syncthing_en,
datagouv_fr: 12 answerable + 3 not each; ``keys`` as the demo), PIAF ``final`` (the first
``--piaf-limit`` questions by id, 0 = all; right = the answer holds a gold answer of
``answers.jsonl``, SQuAD normalisation) and covid_faq_en ``final`` (no gold strings: right = the
cited passage is a relevant one). With ``--removed`` each PIAF and covid_faq_en question is also
asked with its relevant documents filtered out (an in-domain question the documents do not
cover) and counted as unanswerable.

Per set it prints the counts of :mod:`kbsearch.evaluation.answers`' outcomes, grouped as the
issue's table: right answer, answered without the gold, uncertain (right / without / on an
unanswerable question), wrong refusal, right refusal, wrong answer to an unanswerable question;
the median length of the shown answers (characters); and the AUROC of the confidence for
"the shown span is right" over the answerable questions, read from a second ``ask`` at
``min_confidence=0`` (every span shown; the confidence is the same).

Each set's index is ``DB_DIR/<set>.db`` (a set whose index is absent is skipped, with a line
saying so). Build them once:

    kbsearch demo --dir /tmp/v3/demo && cp /tmp/v3/demo/helpcentre.db /tmp/v3/demo.db
    kbsearch index benchmarks/data/syncthing_en/corpus --db /tmp/v3/syncthing_en.db \
        --default-access public --lang en          # datagouv_fr the same with --lang fr
    kbsearch index /work/shared/data/piaf_fr/corpus.jsonl --db /tmp/v3/piaf_fr.db \
        --default-access public --lang fr          # covid_faq_en the same with --lang en
    python benchmarks/answer_sets.py --db-dir /tmp/v3 --data /work/shared/data [--removed]

Measure another version of the code by putting its ``src`` first on PYTHONPATH (the script
reads only ``Answer.to_dict()`` and the evaluation helpers).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from kbsearch.evaluation.abstention import auroc  # noqa: E402
from kbsearch.evaluation.answers import (  # noqa: E402
    Gold,
    Judged,
    gold_of,
    judge,
    read_gold_answers,
    summarise,
)
from kbsearch.evaluation.formats import load_questions  # noqa: E402
from kbsearch.evaluation.judging import matches  # noqa: E402
from kbsearch.evaluation.runner import question_filters  # noqa: E402
from kbsearch.knowledge_base import open_kb  # noqa: E402
from kbsearch.records import Hit  # noqa: E402

HERE = Path(__file__).resolve().parent
DEMO = HERE.parent / "src" / "kbsearch" / "examples" / "helpcentre" / "questions.jsonl"


@dataclass(frozen=True)
class AnswerSet:
    """One set: its questions (a path, or a name under ``--data``), split, gold answers
    file (under ``--data``; ``None``: keys or cited relevance), and whether it is a shared
    dataset (limited and ``--removed``)."""

    name: str
    questions: Callable[[Path], Path]
    split: str = "test"
    gold: str | None = None
    shared: bool = False


SETS: tuple[AnswerSet, ...] = (
    AnswerSet("demo", lambda _: DEMO),
    AnswerSet("syncthing_en", lambda _: HERE / "data" / "syncthing_en" / "questions.jsonl"),
    AnswerSet("datagouv_fr", lambda _: HERE / "data" / "datagouv_fr" / "questions.jsonl"),
    AnswerSet("piaf_fr", lambda d: d / "piaf_fr", "final", "piaf_fr/answers.jsonl", True),
    AnswerSet("covid_faq_en", lambda d: d / "covid_faq_en", "final", None, True),
)
COLUMNS = (
    ("questions", "questions"),
    ("right", "right answer"),
    ("ans. w/o gold", "answered, misses the gold"),
    ("unc. right", "uncertain, right"),
    ("unc. w/o gold", "uncertain, misses the gold"),
    ("unc. unansw.", "uncertain, none"),
    ("wrong refusal", "wrong refusal"),
    ("right refusal", "right refusal"),
    ("wrong answer", "wrong answer"),
)


def _hit(row: dict) -> Hit:
    return Hit(
        row["rank"], row["passage_id"], row["doc_id"], row["version"], row["section"],
        row["score"], "",
    )  # fmt: skip


def is_right(row: dict, text: str | None, target: Gold, relevant: tuple) -> bool:
    """Whether the shown ``text`` of an answer ``row`` (``Answer.to_dict()``) is right: it
    holds the gold when there is one, else its cited passage is one of ``relevant``."""
    if text is None:
        return False
    if target:
        return target.right(text)
    cited = (row.get("citation") or {}).get("passage_id")
    hit = next((n for n in row["nearest"] if n["passage_id"] == cited), None)
    return hit is not None and any(matches(r, _hit(hit)) for r in relevant)


def _asked(kb, question, filters, removed: bool, every: list[str]) -> tuple[dict, dict]:  # noqa: ANN001
    if removed:
        relevant = {r.doc_id for r in question.relevant}
        filters = replace(filters, doc_ids=[d for d in every if d not in relevant])
    shown = kb.ask(question.text, filters=filters).to_dict()
    every_span = kb.ask(question.text, filters=filters, min_confidence=0.0).to_dict()
    return shown, every_span


def judged(kb, qset, gold: dict, limit: int, removed: bool) -> Iterator[tuple[Judged, float, bool]]:  # noqa: ANN001
    """``(judged answer, confidence, the span shown at min_confidence 0 is right)`` per
    question (and per removed question with ``removed``)."""
    questions = sorted(qset.questions, key=lambda q: q.qid)
    questions = questions[:limit] if limit else questions
    every = sorted({d.document.doc_id for d in kb.documents()}) if removed else []
    for q in questions:
        filters = question_filters(q, qset.access_aware, use_language=False)
        for condition in (False, True) if removed else (False,):
            shown, all_spans = _asked(kb, q, filters, condition, every)
            verdict = shown["verdict"]
            text = None if verdict == "dont_say" else shown["answer"]
            answerable = q.has_relevant and not condition
            target = gold_of(q.extra, gold, q.qid)
            relevant = () if q.abstain or condition else q.relevant

            item = judge(
                q.qid + ("/removed" if condition else ""), q.kind or "unknown",
                q.language or "unknown", answerable, verdict, text, target, None,
            )  # fmt: skip
            item = replace(item, right=is_right(shown, text, target, relevant))
            spanned = all_spans["answer"] if all_spans.get("citation") else None
            yield item, float(shown["confidence"]), is_right(all_spans, spanned, target, relevant)


def row_of(name: str, items: list[tuple[Judged, float, bool]]) -> dict:
    """The printed row of one set: outcome counts, median length, AUROC."""
    summary = summarise([i for i, _, _ in items])
    answerable = [(c, r) for i, c, r in items if i.answerable]
    found = auroc([c for c, _ in answerable], [r for _, r in answerable])
    return {
        "set": name,
        "questions": summary["questions"],
        **summary["outcomes"],
        "median_length": summary["median_length"],
        "auroc_right": None if found is None else round(found, 3),
        "every_span_right": sum(r for _, r in answerable),
        "answerable": summary["answerable"],
    }


def print_table(rows: list[dict]) -> None:
    head = ["set", *(c for c, _ in COLUMNS), "median chars", "AUROC right", "spans right"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        cells = [r["set"], *(str(r[k]) for _, k in COLUMNS)]
        median = r["median_length"]
        cells += [
            "-" if median is None else f"{median:.0f}",
            "-" if r["auroc_right"] is None else f"{r['auroc_right']:.3f}",
            f"{r['every_span_right']}/{r['answerable']}",
        ]
        print("| " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db-dir", required=True, type=Path)
    parser.add_argument("--data", default=Path("/work/shared/data"), type=Path)
    parser.add_argument("--piaf-limit", type=int, default=300, help="0: all of PIAF final")
    parser.add_argument("--removed", action="store_true")
    parser.add_argument("--sets", default=",".join(s.name for s in SETS))
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    rows = []
    for chosen in (s for s in SETS if s.name in args.sets.split(",")):
        db = args.db_dir / f"{chosen.name}.db"
        if not db.exists():
            print(f"{chosen.name}: no index at {db}, skipped", file=sys.stderr)
            continue
        qset = load_questions(chosen.questions(args.data), chosen.split)
        gold = read_gold_answers(args.data / chosen.gold) if chosen.gold else {}
        limit = args.piaf_limit if chosen.name == "piaf_fr" else 0
        with open_kb(db) as kb:
            items = list(judged(kb, qset, gold, limit, args.removed and chosen.shared))
        rows.append(row_of(chosen.name, items))
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
