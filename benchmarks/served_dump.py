"""Write everything the server answers to a set of questions, to the digit, so that two
versions of the code can be compared with ``cmp``: per question, the ``/search`` body of each
route for each audience (:func:`kbsearch.service.operations.search`, as the server computes
it, from the served snapshot), the ``/ask`` body (public), and ``KnowledgeBase.assess``'s hits
and decision (verdict, confidence, every feature, the span and its passage). Floats are written
as ``repr`` (every digit). The index given is copied first, never written to.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/served_dump.py \\
        --db ~/.local/share/kbsearch/demo/helpcentre.db --out /tmp/after.jsonl
    cmp /tmp/before.jsonl /tmp/after.jsonl

``--queries``: a BEIR ``queries.jsonl`` (its ``text``) instead of the demo's questions.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from kbsearch.knowledge_base import KnowledgeBase
from kbsearch.service import operations as ops
from kbsearch.service.engine import Engine

sys.path.insert(0, str(Path(__file__).parent))

from _common import DEMO_QUESTIONS, read_jsonl  # noqa: E402


def exact(value: Any) -> Any:
    """``value`` with every float as its ``repr`` (JSON would write the same, but a reader
    comparing files should not depend on it)."""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return {str(k): exact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [exact(v) for v in value]
    return value


def assessed(kb: KnowledgeBase, q: str) -> dict[str, Any]:
    """``kb.assess(q)``'s hits and decision, span included."""
    found = kb.assess(q, k=10)
    d = found.decision
    decision = None
    if d is not None:
        decision = {
            "verdict": d.verdict,
            "confidence": d.confidence,
            "features": dict(d.features),
            "span": None if d.span is None else vars(d.span),
            "span_passage": d.span_passage,
        }
    return {"hits": [(h.passage_id, h.score) for h in found.hits], "decision": decision}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--queries", type=Path, help="A BEIR queries.jsonl (default: the demo's).")
    parser.add_argument("--limit", type=int, default=None, help="The first N questions only.")
    args = parser.parse_args()
    if args.queries:
        questions = [str(r["text"]) for r in read_jsonl(args.queries)]
    else:
        questions = [str(r["question"]) for r in read_jsonl(DEMO_QUESTIONS)]
    questions = questions[: args.limit]
    with tempfile.TemporaryDirectory() as tmp, args.out.open("w", encoding="utf-8") as out:
        db = Path(tmp) / "kb.db"
        shutil.copy(args.db, db)
        engine = Engine(db, workers=1)
        try:
            for q in questions:
                row: dict[str, Any] = {"q": q}
                for route in ("hybrid", "lexical", "dense"):
                    for audience in ("public", "staff"):
                        search = ops.SearchArgs(q=q, route=route)
                        row[f"search/{route}/{audience}"] = engine.read(
                            lambda kb, a=audience, s=search: ops.search(kb, a, s, ops.Limits())
                        )
                row["ask"] = engine.read(lambda kb, q=q: ops.ask(kb, "public", q, ops.Limits()))
                row["assess"] = engine.read(lambda kb, q=q: assessed(kb, q))
                out.write(json.dumps(exact(row), sort_keys=True, ensure_ascii=False) + "\n")
        finally:
            engine.close()
    print(f"wrote {len(questions)} questions to {args.out}")


if __name__ == "__main__":
    main()
