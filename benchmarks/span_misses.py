"""Where the gold lies when the shown span misses it: the span choice's misses, counted.

Reads rows collected by ``benchmarks/answer_tune.py collect`` (present condition), composes
each answer as ``ask`` would with every question answered (the bands apart), and counts the
questions whose span misses the gold (PIAF's gold answers with ``--gold``, else the questions'
``keys``) by where the gold is:

- ``right``: the span holds it;
- ``in the cited passage``: the cited passage holds it but the span does not; with ``--gold``
  split by where its sentence stands from the span (``after by 1`` = the sentence right after
  the span's last one; ``across sentences`` = no one sentence holds it);
- ``in another of the top 3``: another of the first 3 passages holds it;
- ``in none of the top 3``; with ``--db INDEX``, split into ``in none of the top 3`` and
  ``in no passage of the index`` (no single passage holds the gold, e.g. the keys stand in two
  passages or in another language's words: no span of one passage can be right, whatever the
  ranking).

    python benchmarks/span_misses.py /tmp/spanx/piaf_dev.pkl \
        --gold /work/shared/data/piaf_fr/answers.jsonl
    python benchmarks/span_misses.py /tmp/spanx/syncthing_en.pkl --show
    python benchmarks/span_misses.py /tmp/spanx/demo.pkl \
        --db ~/.local/share/kbsearch/demo/helpcentre.db
"""

from __future__ import annotations

import argparse
import os
import pickle
from collections import Counter
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from kbsearch.evaluation.answers import Gold, gold_of, read_gold_answers  # noqa: E402
from kbsearch.judge.answer import compose  # noqa: E402
from kbsearch.judge.confidence import Decision  # noqa: E402
from kbsearch.knowledge_base import open_kb  # noqa: E402
from kbsearch.text.sentences import sentences  # noqa: E402

TOP = 3  # passages searched for the gold beside the cited one


def position(text: str, start: int, end: int, gold: Gold, language: str) -> str:
    """Where the gold's sentence stands from the span ``[start, end)`` of ``text``."""
    found = sentences(text, language)
    holding = [i for i, s in enumerate(found) if gold.right(s.text)]
    inside = [i for i, s in enumerate(found) if start <= s.start and s.end <= end]
    if not holding or not inside:
        return "across sentences"
    if holding[0] > inside[-1]:
        gap = holding[0] - inside[-1]
        return f"after by {gap if gap <= 2 else '>2'}"
    gap = inside[0] - max(i for i in holding if i < inside[0])
    return f"before by {gap if gap <= 2 else '>2'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rows")
    parser.add_argument("--gold", default=None)
    parser.add_argument("--show", action="store_true", help="print each miss in the cited one")
    parser.add_argument("--db", default=None, help="the index: count golds no passage holds")
    args = parser.parse_args()
    with open(args.rows, "rb") as f:
        rows = [r for r in pickle.load(f) if r.get("condition", "present") == "present"]
    answers = read_gold_answers(Path(args.gold)) if args.gold else {}
    counts: Counter[str] = Counter()
    texts: list[str] = []
    if args.db:
        with open_kb(args.db) as kb:  # every passage any audience may see
            for stored in kb.documents():
                d = stored.document
                texts += [p.text for p in kb.document_passages(f"{d.doc_id}@v{d.version}", "staff")]
    for r in rows:
        q = r["question"]
        gold = gold_of(q.extra, answers, q.qid)
        if not gold or not q.has_relevant:
            continue
        a = compose(q.text, Decision(True, 1.0, 0.0), r["hits"], r["documents"],
                    r["languages"], r["terms"], r["cosines"], None,
                    r.get("headings"))  # fmt: skip
        if gold.right(a.text):
            counts["right"] += 1
            continue
        pid = a.citation.passage_id if a.citation else None
        cited = next((h for h in r["hits"] if h.passage_id == pid), None)
        if cited is not None and gold.right(cited.text):
            where = "in the cited passage"
            if args.gold and a.start is not None and a.end is not None:
                language = r["documents"][(cited.doc_id, cited.version)].language or "en"
                where += ", " + position(cited.text, a.start, a.end, gold, language)
            if args.show:
                print(f"{q.qid}\t{q.text}\t{a.text!r}")
        elif any(gold.right(h.text) for h in r["hits"][:TOP]):
            where = f"in another of the top {TOP}"
        elif texts and not any(gold.right(t) for t in texts):
            where = "in no passage of the index"
        else:
            where = f"in none of the top {TOP}"
        counts[where] += 1
    print(f"{sum(counts.values())} questions")
    for where, n in counts.most_common():
        print(f"{n}\t{where}")


if __name__ == "__main__":
    main()
