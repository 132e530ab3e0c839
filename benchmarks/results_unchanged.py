"""Check that a code change leaves search results unchanged.

Writes the TREC run of every route (lexical, dense, hybrid; ``--depth`` hits each, passage ids
as returned by ``KnowledgeBase.search``) for the queries of one qrels split of a BEIR folder,
with the current code, and compares it with reference runs: the same queries, the same passage
ids in the same order, and scores equal within ``--tolerance`` (1e-9); and the abstention
stage's decision of each query (``KnowledgeBase.assess``: ``answerable`` equal, ``confidence``
within the tolerance). Prints a summary per route and exits 1 on any difference (2 on a usage
error).

The reference is either a directory of TREC runs (``--ref-runs``: ``lexical.trec``,
``dense.trec``, ``hybrid.trec``, e.g. written earlier with ``--write-runs``) or a git commit
(``--ref-commit``): the script then checks that commit out in a temporary worktree and runs
itself there (``PYTHONPATH=<worktree>/src``) to write the reference runs. Both sides search a
private copy of ``--db`` (SQLite's backup API), so the index given is never written to.

The run writer uses only the oldest public API (``open_kb``, ``KnowledgeBase.search``,
``Filters``) so that it runs on older commits too; filters are the defaults (public audience,
today's date, which is the same day for both sides).

    OPENBLAS_NUM_THREADS=1 python benchmarks/results_unchanged.py ../shared/data/covid_faq_en \
        --db /work/idx/covid_faq_en.db --ref-commit 1228c8a --write-runs runs/covid
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

ROUTES = ("lexical", "dense", "hybrid")
TOLERANCE = 1e-9

Ranked = list[tuple[str, float]]
Runs = dict[str, dict[str, Ranked]]  # route -> qid -> [(passage_id, score)] best first


def read_queries(dataset: Path, split: str) -> dict[str, str]:
    """``qid -> text`` for the queries judged in ``qrels/SPLIT.tsv``, in qrels order."""
    texts = {}
    with (dataset / "queries.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                texts[str(row["_id"])] = str(row["text"])
    qids: dict[str, None] = {}
    with (dataset / "qrels" / f"{split}.tsv").open(encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            fields = line.rstrip("\n").split("\t")
            if number == 0 and fields[0] == "query-id":
                continue
            if fields[0] in texts:
                qids[fields[0]] = None
    return {qid: texts[qid] for qid in qids}


def copy_db(source: Path, destination: Path) -> None:
    """A consistent copy of an SQLite file (WAL included), read through the backup API."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = sqlite3.connect(destination)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


def write_runs(dataset: Path, db: Path, split: str, depth: int, out: Path) -> None:
    """Search every query in every route with the kbsearch on ``sys.path``; write TREC runs.

    A query a route refuses (an error) is written as a comment line ``# qid error: ...``.
    """
    from kbsearch import Filters, open_kb

    queries = read_queries(dataset, split)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        private = Path(tmp) / "index.db"
        copy_db(db, private)
        with open_kb(private) as kb:
            for route in ROUTES:
                lines = []
                for qid, text in queries.items():
                    try:
                        hits = kb.search(text, k=depth, route=route, filters=Filters(), depth=depth)
                    except Exception as err:  # recorded and compared, not hidden
                        lines.append(f"# {qid} error: {type(err).__name__}: {err}\n")
                        continue
                    lines.extend(
                        f"{qid} Q0 {h.passage_id} {h.rank} {h.score!r} kbsearch-{route}\n"
                        for h in hits
                    )
                (out / f"{route}.trec").write_text("".join(lines), encoding="utf-8")
            (out / DECISIONS).write_text(json.dumps(decisions(kb, queries)), encoding="utf-8")


DECISIONS = "decisions.json"


def decisions(kb: object, queries: dict[str, str]) -> dict[str, object]:
    """``qid -> [answerable, confidence]`` of ``kb.assess`` (default arguments: the hybrid
    route, the default fusion), or the error's text; ``{}`` for an index without vectors."""
    from kbsearch import Filters

    out: dict[str, object] = {}
    for qid, text in queries.items():
        try:
            decision = kb.assess(text, filters=Filters()).decision  # type: ignore[attr-defined]
        except Exception as err:  # recorded and compared, not hidden
            out[qid] = f"{type(err).__name__}: {err}"
            continue
        out[qid] = None if decision is None else [decision.answerable, decision.confidence]
    return out


def compare_decisions(current: Path, reference: Path, tolerance: float) -> tuple[int, int, float]:
    """``(queries, queries differing, max |confidence difference|)``: a query differs when
    its answerable flag or error differs, or its confidence by more than ``tolerance``."""
    if not (reference / DECISIONS).is_file():  # reference runs written before decisions were
        return 0, 0, 0.0
    now = json.loads((current / DECISIONS).read_text(encoding="utf-8"))
    ref = json.loads((reference / DECISIONS).read_text(encoding="utf-8"))
    differing, gap = 0, 0.0
    for qid in sorted(set(now) | set(ref)):
        a, b = ref.get(qid), now.get(qid)
        if isinstance(a, list) and isinstance(b, list):
            gap = max(gap, abs(a[1] - b[1]))
            differing += a[0] != b[0] or abs(a[1] - b[1]) > tolerance
        else:
            differing += a != b
    return len(set(now) | set(ref)), differing, gap


def read_run(path: Path) -> tuple[dict[str, Ranked], dict[str, str]]:
    """Rankings per query (file order) and the errors recorded per query."""
    ranked: dict[str, Ranked] = {}
    errors: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            qid, _, message = line[2:].partition(" error: ")
            errors[qid] = message
            continue
        qid, _, pid, _, score, _ = line.split()
        ranked.setdefault(qid, []).append((pid, float(score)))
    return ranked, errors


@dataclass
class RouteDiff:
    """How one route's current run differs from the reference."""

    route: str
    queries: int = 0
    hits: int = 0
    queries_differing: int = 0
    id_or_order_differences: int = 0
    score_differences: int = 0
    error_differences: int = 0
    max_score_difference: float = 0.0
    first: str = ""

    @property
    def same(self) -> bool:
        return not (self.queries_differing or self.error_differences)


def compare_route(route: str, current: Path, reference: Path, tolerance: float) -> RouteDiff:
    now, now_errors = read_run(current / f"{route}.trec")
    ref, ref_errors = read_run(reference / f"{route}.trec")
    diff = RouteDiff(route)
    qids = sorted(set(now) | set(ref) | set(now_errors) | set(ref_errors))
    diff.queries = len(qids)
    for qid in qids:
        if now_errors.get(qid) != ref_errors.get(qid):
            diff.error_differences += 1
            change = f"error {ref_errors.get(qid)!r} -> {now_errors.get(qid)!r}"
            diff.first = diff.first or f"{qid}: {change}"
        a, b = ref.get(qid, []), now.get(qid, [])
        diff.hits += len(b)
        differs = len(a) != len(b)
        where = f"{len(a)} vs {len(b)} hits" if differs else ""
        for rank, ((pid_a, score_a), (pid_b, score_b)) in enumerate(zip(a, b, strict=False), 1):
            gap = abs(score_a - score_b)
            wrong_id = pid_a != pid_b
            wrong_score = not (gap <= tolerance or (math.isnan(score_a) and math.isnan(score_b)))
            diff.id_or_order_differences += wrong_id
            diff.score_differences += wrong_score
            diff.max_score_difference = max(diff.max_score_difference, gap)
            if (wrong_id or wrong_score) and not where:
                where = f"rank {rank}: {pid_a} {score_a!r} -> {pid_b} {score_b!r}"
            differs = differs or wrong_id or wrong_score
        if differs:
            diff.queries_differing += 1
            diff.first = diff.first or f"{qid} {where}"
    return diff


def reference_from_commit(commit: str, dataset: Path, db: Path, split: str, depth: int,
                          out: Path) -> None:  # fmt: skip
    """Write the reference runs with the code of ``commit`` (a temporary git worktree)."""
    repo = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "ref"
        subprocess.run(
            ["git", "-C", str(repo), "worktree", "add", "--detach", str(tree), commit],
            check=True, capture_output=True,
        )  # fmt: skip
        try:
            env = {**os.environ, "PYTHONPATH": str(tree / "src")}
            command = [sys.executable, __file__, str(dataset), "--db", str(db), "--split", split,
                       "--depth", str(depth), "--write-only", str(out)]  # fmt: skip
            subprocess.run(command, check=True, env=env)
        finally:
            subprocess.run(
                ["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)], check=False
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path, help="BEIR folder (queries.jsonl, qrels/).")
    parser.add_argument("--db", type=Path, required=True, help="Index built from the corpus.")
    parser.add_argument("--split", default="test", help="qrels split whose queries run.")
    parser.add_argument("--depth", type=int, default=100, help="Hits per query and route.")
    reference = parser.add_mutually_exclusive_group()
    reference.add_argument("--ref-commit", help="Git commit whose code writes the reference.")
    reference.add_argument("--ref-runs", type=Path, help="Directory of reference TREC runs.")
    reference.add_argument("--write-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--write-runs", type=Path, help="Keep the current runs here.")
    parser.add_argument("--keep-ref", type=Path, help="Keep the reference runs here.")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE)
    args = parser.parse_args(argv)
    if not args.db.is_file():
        parser.error(f"no index file {args.db}")
    if args.write_only:
        write_runs(args.dataset, args.db, args.split, args.depth, args.write_only)
        return 0
    if not (args.ref_commit or args.ref_runs):
        parser.error("give --ref-commit or --ref-runs")
    with tempfile.TemporaryDirectory() as tmp:
        current = args.write_runs or Path(tmp) / "current"
        ref_dir = args.ref_runs or args.keep_ref or Path(tmp) / "reference"
        if args.ref_commit:
            reference_from_commit(
                args.ref_commit, args.dataset, args.db, args.split, args.depth, ref_dir
            )
        write_runs(args.dataset, args.db, args.split, args.depth, current)
        diffs = [compare_route(r, current, ref_dir, args.tolerance) for r in ROUTES]
        judged = compare_decisions(current, ref_dir, args.tolerance)
    label = args.ref_commit or str(args.ref_runs)
    print(f"{args.dataset.name} ({args.split}, depth {args.depth}) against {label}:")
    for d in diffs:
        verdict = "identical" if d.same else "DIFFERENT"
        print(
            f"  {d.route:8} {verdict:9} queries {d.queries}, hits {d.hits}, queries differing "
            f"{d.queries_differing}, id/order differences {d.id_or_order_differences}, scores "
            f"beyond {args.tolerance:g}: {d.score_differences}, errors differing "
            f"{d.error_differences}, max |score difference| {d.max_score_difference:.3g}"
        )
        if d.first:
            print(f"           first difference: {d.first}")
    queries, differing, gap = judged
    print(
        f"  assess   {'identical' if not differing else 'DIFFERENT':9} queries {queries},"
        f" answerable or confidence beyond {args.tolerance:g} differing: {differing},"
        f" max |confidence difference| {gap:.3g}"
    )
    return 0 if all(d.same for d in diffs) and not differing else 1


if __name__ == "__main__":
    sys.exit(main())
