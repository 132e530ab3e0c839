"""Dump each route's top-100 candidates (with scores and judged keys) for one dataset and split,
so that fusion and reranking variants can be tried offline in numpy (seconds) instead of
re-running search per variant (``benchmarks/ranking_lab.py`` reads these files).

    OPENBLAS_NUM_THREADS=1 python benchmarks/ranking_dump.py ../shared/data/scifact \
        --db scifact.db --split dev --out runs/scifact.dev.pkl [--titles]

Per question: its qrels, the lexical top 100 without stop words (the analysis before them), the
lexical top 100 with stop words and elisions dropped from the query (:mod:`kbsearch.text.stopwords`,
the default now), the dense top 100, and for every candidate its judged key, its doc title, its
score in every route and (with ``--titles``) the cosine of the query with the title's vector
(titles embedded once per dataset, cached next to ``--out``).
"""

from __future__ import annotations

import argparse
import os
import pickle
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import kbsearch  # noqa: E402
from kbsearch.evaluation.formats import load_questions  # noqa: E402
from kbsearch.evaluation.judging import judge_hits, set_qrels  # noqa: E402
from kbsearch.records import Filters, Hit  # noqa: E402
from kbsearch.retrieve.lexical.bm25 import CLAMPED_IDF, fts5_idf  # noqa: E402
from kbsearch.retrieve.lexical.impact import ImpactIndex  # noqa: E402
from kbsearch.retrieve.lexical.query_terms import QueryTerms  # noqa: E402
from kbsearch.text.analysis import Analyzer, fold_diacritics  # noqa: E402


def query_terms(index: ImpactIndex, analyzer: Analyzer, text: str, stopwords: bool) -> QueryTerms:
    """The query's terms as the lexical route splits them (kept / clamped), with or without
    stop words."""
    return _split(index, analyzer.query_terms(text, index.languages, stopwords=stopwords))


def _split(index: ImpactIndex, analysed: list[str]) -> QueryTerms:
    folded = [fold_diacritics(t) for t in analysed]
    clamped = [t for t in folded if fts5_idf(index.passages, index.frequency(t)) <= CLAMPED_IDF]
    if len(clamped) == len(folded):
        return QueryTerms(tuple(analysed), tuple(folded), ())
    kept = tuple(t for t in folded if t not in clamped)
    return QueryTerms(tuple(analysed), kept, tuple(clamped))


DEPTH = 100


def lookup(passage_ids: np.ndarray, scores: np.ndarray) -> dict[str, float]:
    return dict(zip(passage_ids.tolist(), scores.tolist(), strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--titles", action="store_true")
    parser.add_argument("--limit", type=int, help="only the first N questions with qrels")
    args = parser.parse_args()

    qset = load_questions(args.questions, args.split, format="beir")
    qrels = set_qrels(qset)
    out: dict[str, object] = {"rule": qset.rule, "questions": []}
    start = time.perf_counter()
    with kbsearch.open_kb(args.db) as kb:
        embedder = kb.embedder()
        assert embedder is not None
        analyzer = kb.analyzer
        docs = {(d.document.doc_id, d.document.version): d.document for d in kb.documents()}
        title_vecs: dict[str, np.ndarray] = {}
        if args.titles:
            cache = args.out.with_name(args.questions.name + ".titles.npz")
            titles = sorted({d.title for d in docs.values() if d.title})
            if cache.exists():
                z = np.load(cache, allow_pickle=True)
                title_vecs = dict(zip(z["titles"].tolist(), z["vectors"], strict=True))
            else:
                t0 = time.perf_counter()
                vecs = embedder.encode_queries(titles)  # titles of FAQs are questions
                title_vecs = dict(zip(titles, vecs, strict=True))
                np.savez(cache, titles=np.array(titles, dtype=object), vectors=vecs)
                print(f"embedded {len(titles)} titles in {time.perf_counter() - t0:.1f}s")
        questions = []
        judged = [q for q in qset.questions if qrels.get(q.qid)]
        for q in judged[: args.limit] if args.limit else judged:
            filters = Filters(audience="staff", as_of=q.as_of)
            index = kb.impact_index(filters.audience)
            plain = query_terms(index, analyzer, q.text, stopwords=False)  # no stop words
            lex = index.search_terms(plain, filters, DEPTH)
            stop = query_terms(index, analyzer, q.text, stopwords=True)
            lex_stop = index.search_terms(stop, filters, DEPTH)
            qvec = kb.query_vector(q.text)
            dense_index = kb.dense_index()
            dense = dense_index.search(qvec, filters, DEPTH)
            ids = {pid for ranked in (lex, lex_stop, dense) for pid, _ in ranked}
            # every candidate's score in every route (0 where no query term matches)
            full = {
                "lexical": lookup(index.passage_ids, index.scores(plain.kept)),
                "lexical_stop": lookup(index.passage_ids, index.scores(stop.kept)),
                "dense": lookup(dense_index.table.passage_ids, dense_index.scores(qvec)),
            }
            rows = kb.store.passages.rows(ids)
            info = {}
            for pid in ids:
                p = rows[pid].passage
                hit = Hit(1, pid, p.doc_id, p.version, p.section, 0.0, "")
                key = judge_hits(q, [hit], qset.rule)[0]
                title = docs[(p.doc_id, p.version)].title or ""
                tcos = float(title_vecs[title] @ qvec) if title in title_vecs else float("nan")
                info[pid] = {
                    "key": key,
                    "doc": p.doc_id,
                    "title": title,
                    "title_cos": tcos,
                    "len": len(p.text),
                    **{f"{r}_score": float(full[r].get(pid, 0.0)) for r in full},
                }
            questions.append(
                {
                    "qid": q.qid,
                    "text": q.text,
                    "qrels": qrels[q.qid],
                    "lexical": lex,
                    "lexical_stop": lex_stop,
                    "dense": dense,
                    "info": info,
                }
            )
        out["questions"] = questions
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("wb") as f:
        pickle.dump(out, f)
    print(f"{args.out}: {len(questions)} questions in {time.perf_counter() - start:.1f}s")


if __name__ == "__main__":
    main()
