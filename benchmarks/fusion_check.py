"""Check the wired score fusion against an independent recomputation of the lab's formula.

    OPENBLAS_NUM_THREADS=1 python benchmarks/fusion_check.py ../shared/data/covid_faq_en \
        --db covid.db --split dev --alpha 0.6 --title 0.3

For every judged question, under the filters ``kbsearch eval`` searches it with: the lexical and
dense top ``--depth`` from the routes; every candidate's BM25 recomputed from the whole impact
index (kept terms; the clamped terms' for a passage holding no kept term), its cosine from the
whole vector matrix, and the cosine of the query with its document's own title embedded here
(``encode_queries``, not read from the index's cache); then ``benchmarks/ranking_lab.py``'s
array formula ``(1 - a) * minmax(lexical) + a * minmax(dense) + t * minmax(title)``. The top 10
of that is compared with ``KnowledgeBase.search(..., fusion="convex:alpha=a,title=t")``.
Prints the questions whose top 10 differ (ids) and the largest score difference.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ranking_lab import minmax  # noqa: E402

import kbsearch  # noqa: E402
from kbsearch.evaluation.formats import load_questions  # noqa: E402
from kbsearch.evaluation.judging import set_qrels  # noqa: E402
from kbsearch.evaluation.runner import question_filters  # noqa: E402
from kbsearch.index.headings import heading_text  # noqa: E402
from kbsearch.retrieve.routes import LexicalRoute  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--alpha", type=float, default=0.6)
    parser.add_argument("--title", type=float, default=0.3)
    parser.add_argument("--depth", type=int, default=100)
    args = parser.parse_args()
    qset = load_questions(args.questions, args.split)
    qrels = set_qrels(qset)
    spec = f"convex:alpha={args.alpha},title={args.title}"
    same = differ = 0
    worst = 0.0
    with kbsearch.open_kb(args.db) as kb:
        embedder = kb.embedder()
        assert embedder is not None
        route = kb.routes["lexical"]
        assert isinstance(route, LexicalRoute)
        own = {}
        for d in kb.documents():
            doc = d.document
            own[(doc.doc_id, doc.version)] = heading_text(doc.title, "", doc.doc_id)
        titles = sorted({t for t in own.values() if t})
        vectors = dict(zip(titles, embedder.encode_queries(titles), strict=True))
        dense_index = kb.dense_index()
        for q in qset.questions:
            if not qrels.get(q.qid):
                continue
            filters = question_filters(q, qset.access_aware, use_language=False)
            lexical = kb.ranking("lexical", q.text, filters, args.depth)
            dense = kb.ranking("dense", q.text, filters, args.depth)
            ids = list(dict.fromkeys([p for p, _ in lexical] + [p for p, _ in dense]))
            index = kb.impact_index(str(filters.audience))
            terms = route.terms(q.text, filters)
            kept = index.scores(terms.kept)
            if terms.clamped:
                kept = np.where(kept > 0, kept, index.scores(terms.clamped))
            at = {str(p): i for i, p in enumerate(index.passage_ids)}
            vector = kb.query_vector(q.text)
            cosines = dense_index.scores(vector)
            dat = {str(p): i for i, p in enumerate(dense_index.table.passage_ids)}
            rows = kb.passage_rows_of(ids)
            lex = np.array([kept[at[p]] for p in ids])
            den = np.array([cosines[dat[p]] for p in ids], dtype=np.float64)
            title = np.array(
                [
                    float(vectors[t] @ vector) if (t := own[(rows[p].passage.doc_id,
                                                             rows[p].passage.version)]) else np.nan
                    for p in ids
                ]
            )  # fmt: skip
            present = ~np.isnan(title)
            title[~present] = title[present].min() if present.any() else 0.0
            score = (1 - args.alpha) * minmax(lex) + args.alpha * minmax(den)
            score = score + args.title * minmax(title)
            lr = {p: i for i, (p, _) in enumerate(lexical, 1)}
            dr = {p: i for i, (p, _) in enumerate(dense, 1)}
            found = [(p in lr) + (p in dr) for p in ids]
            best = [min(lr.get(p, 1 << 30), dr.get(p, 1 << 30)) for p in ids]
            order = sorted(range(len(ids)), key=lambda i: (-score[i], -found[i], best[i], ids[i]))
            expected = [(ids[i], float(score[i])) for i in order[:10]]
            hits = kb.search(q.text, k=10, filters=filters, fusion=spec)
            got = [(h.passage_id, h.score) for h in hits]
            if [p for p, _ in got] == [p for p, _ in expected]:
                same += 1
                worst = max(
                    [worst] + [abs(a[1] - b[1]) for a, b in zip(got, expected, strict=True)]
                )
            else:
                differ += 1
                print(
                    f"{q.qid}: search {[p for p, _ in got][:5]} lab {[p for p, _ in expected][:5]}"
                )
    print(f"{spec}: {same} questions with the same top 10, {differ} different;"
          f" largest score difference {worst:.2e}")  # fmt: skip


if __name__ == "__main__":
    main()
