"""Per question, what went wrong with ``ask``'s answer: wrong passage, wrong span or wrong verdict.

Reads a dump of ``ask`` answers (``kbsearch eval QUESTIONS --answers --answers-dump FILE`` or
``benchmarks/answers.py dump``) beside its question set and index, and prints one line per
question:

- ``right``: the answer (answered or uncertain) holds the gold (every ``key``, SQuAD
  normalisation, :mod:`kbsearch.evaluation.answers`), or an unanswerable question is refused;
- ``wrong passage``: no passage of the top 5 (``nearest``) is a relevant one, or none of the
  relevant ones in the top 5 holds the gold (the retrieval is what failed);
- ``wrong span``: a relevant passage of the top 5 holds the gold but the answer does not
  (the span choice, or the citation of another passage, is what failed);
- ``wrong verdict``: a relevant top-5 passage holds the gold and the question was refused
  ("the documents don't say"), or an unanswerable question was answered.

``gold in`` gives the rank of each top-5 passage holding the gold (``R`` when it is also
relevant), so a span chosen from the wrong passage shows beside the one that held it.

    python benchmarks/answer_findings.py benchmarks/data/syncthing_en/questions.jsonl \
        --db /tmp/st.db --dump /tmp/st_answers.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from kbsearch.evaluation.answers import gold_of, holds_all, holds_any  # noqa: E402
from kbsearch.evaluation.formats import load_questions  # noqa: E402
from kbsearch.evaluation.judging import matches  # noqa: E402
from kbsearch.knowledge_base import open_kb  # noqa: E402
from kbsearch.records import Hit  # noqa: E402


def _holds(text: str | None, gold) -> bool:  # noqa: ANN001 - a kbsearch.evaluation Gold
    if not text:
        return False
    return holds_any(text, gold.answers) if gold.answers else holds_all(text, gold.keys)


def _hit(row: dict) -> Hit:
    return Hit(
        row["rank"], row["passage_id"], row["doc_id"], row["version"], row["section"],
        row["score"], "",
    )  # fmt: skip


def finding(question, row: dict, texts: dict[str, str]) -> tuple[str, str]:  # noqa: ANN001
    """``(outcome, where the gold is)`` of one answered question (module docstring)."""
    verdict = row.get("verdict") or ("answered" if row.get("answerable") else "dont_say")
    if question.abstain:
        return ("right" if verdict == "dont_say" else "wrong verdict"), "-"
    gold = gold_of(question.extra, {}, question.qid)
    nearest = row.get("nearest", [])[:5]
    relevant = [any(matches(item, _hit(n)) for item in question.relevant) for n in nearest]
    holding = [_holds(texts.get(n["passage_id"]), gold) for n in nearest]
    where = " ".join(
        f"{n['rank']}{'R' if rel else ''}"
        for n, rel, has in zip(nearest, relevant, holding, strict=True)
        if has
    )
    if verdict != "dont_say" and _holds(row.get("answer"), gold):
        return "right", where or "-"
    if not any(rel and has for rel, has in zip(relevant, holding, strict=True)):
        return "wrong passage", where or "-"
    return ("wrong verdict" if verdict == "dont_say" else "wrong span"), where


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("questions")
    parser.add_argument("--db", required=True)
    parser.add_argument("--dump", required=True)
    parser.add_argument("--split", default="test")
    args = parser.parse_args(argv)
    qset = load_questions(Path(args.questions), args.split)
    rows = {r["qid"]: r for r in map(json.loads, Path(args.dump).read_text().splitlines())}
    with open_kb(args.db) as kb:
        ids = {n["passage_id"] for r in rows.values() for n in r.get("nearest", [])[:5]}
        texts = {pid: kb.get_passage(pid, "staff").text for pid in ids}
    counts: Counter[str] = Counter()
    for q in qset.questions:
        row = rows.get(q.qid)
        if row is None:
            continue
        outcome, where = finding(q, row, texts)
        counts[outcome] += 1
        cited = (row.get("citation") or {}).get("passage_id", "-")
        answer = " ".join(str(row.get("answer", "")).split())[:90]
        print(
            f"{q.qid}\t{outcome}\t{row.get('verdict')}\t{row.get('confidence', 0):.2f}\t"
            f"gold in top-5: {where}\tcited {cited}\t{answer!r}"
        )
    print(dict(counts))


if __name__ == "__main__":
    main()
