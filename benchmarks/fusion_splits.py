"""Why a hybrid score moved: the learned fusion's split thresholds that a feature crossed.

For the given queries of a BEIR folder, writes every hybrid candidate's feature row (the learned
fusion's :data:`FEATURES`, full precision) and fused score with the kbsearch on ``sys.path``,
once with ``--ref-src``'s code (``PYTHONPATH=REF_SRC``, this script run again there) and once
with the current code, both on a private copy of ``--db``; then, per query, lists the
candidates whose fused score differs by more than ``--tolerance`` and, for each, the model
splits ``(feature, threshold)`` that its old and new values of that feature lie on either side
of (LightGBM sends ``value <= threshold`` left). A feature moved by one float32 ulp (a dense
cosine computed another way) can flip a split whose threshold LightGBM placed between two
training values of the same passages (the shipped model was trained on the shared datasets'
``dev`` halves), which changes the leaf and so the score by far more than the ulp.

Wraps the feature function the learned fusion calls (``feature_columns``, or ``_features`` on
older commits) in ``kbsearch.fuse.learned`` (``kbsearch.search.fusion_learned`` before the
layout of issue 20) to record its rows.

    PYTHONPATH=src python benchmarks/fusion_splits.py ../shared/data/spf_qr_fr --db spf.db \
        --ref-src /tmp/f261/src --queries q-F15018,q-F2132
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_unchanged import copy_db  # noqa: E402  (the benchmarks folder is not a package)


def learned_module() -> object:
    for name in ("kbsearch.fuse.learned", "kbsearch.search.fusion_learned"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise SystemExit("no learned fusion module in this kbsearch")


def write_rows(dataset: Path, db: Path, qids: list[str], out: Path) -> None:
    """``{qid: {"hits": [[pid, score]...], "features": {pid: {feature: value}}}}`` as JSON,
    plus ``"model"``: the shipped model's text (its splits are read from it)."""
    from kbsearch import Filters, open_kb

    learned = learned_module()
    seen: list[tuple[list, object]] = []
    name = "feature_columns" if hasattr(learned, "feature_columns") else "_features"
    original = getattr(learned, name)

    def recording(candidates, collection):  # type: ignore[no-untyped-def]
        rows = original(candidates, collection)
        seen.append((list(candidates), rows[0]))
        return rows

    setattr(learned, name, recording)
    texts = {}
    for line in (dataset / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            texts[str(row["_id"])] = str(row["text"])
    result: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        private = Path(tmp) / "index.db"
        copy_db(db, private)
        with open_kb(private) as kb:
            for qid in qids:
                seen.clear()
                hits = kb.search(texts[qid], k=100, route="hybrid", filters=Filters(), depth=100)
                candidates, rows = seen[-1]
                names = learned.FEATURES  # type: ignore[attr-defined]
                result[qid] = {
                    "hits": [[h.passage_id, h.score] for h in hits],
                    "features": {
                        c.passage_id: dict(zip(names, map(float, row), strict=True))
                        for c, row in zip(candidates, rows, strict=True)  # type: ignore[call-overload]
                    },
                }
    model = Path(learned.__file__).parent / "models" / "fusion_lgbm.txt"  # type: ignore[attr-defined]
    result["model"] = model.read_text(encoding="utf-8")
    out.write_text(json.dumps(result), encoding="utf-8")


def model_splits(model_text: str) -> dict[str, set[float]]:
    """``feature -> thresholds`` of every split of a LightGBM model text."""
    names = re.search(r"feature_names=(.*)", model_text)
    assert names is not None
    features = names.group(1).split()
    splits: dict[str, set[float]] = {}
    for tree in model_text.split("Tree=")[1:]:
        which = re.search(r"split_feature=(.*)", tree)
        where = re.search(r"threshold=(.*)", tree)
        if which and where:
            for f, t in zip(which.group(1).split(), where.group(1).split(), strict=True):
                splits.setdefault(features[int(f)], set()).add(float(t))
    return splits


def report(old: dict, new: dict, tolerance: float) -> None:
    if old["model"] != new["model"]:
        print("the two sides ship different fusion models: splits read from the current one")
    splits = model_splits(new["model"])
    for qid in (q for q in old if q != "model"):
        a, b = dict(map(tuple, old[qid]["hits"])), dict(map(tuple, new[qid]["hits"]))
        same_order = [p for p, _ in old[qid]["hits"]] == [p for p, _ in new[qid]["hits"]]
        moved = [p for p in a if p in b and abs(a[p] - b[p]) > tolerance]
        print(
            f"{qid}: {len(moved)} of {len(a)} fused scores differ; same ids in order: {same_order}"
        )
        for pid in moved:
            fo, fn = old[qid]["features"][pid], new[qid]["features"][pid]
            change = max(abs(fo[f] - fn[f]) for f in fo if fo[f] == fo[f])
            crossed = [
                f"{f} {t!r} (old {fo[f]!r}, new {fn[f]!r})"
                for f, ts in sorted(splits.items())
                for t in sorted(ts)
                if (fo[f] <= t) != (fn[f] <= t)
            ]
            print(f"  {pid}: {a[pid]:.6f} -> {b[pid]:.6f}; largest feature change {change:.3g}")
            for line in crossed or ["no split crossed"]:
                print(f"    split crossed: {line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path, help="BEIR folder (queries.jsonl).")
    parser.add_argument("--db", type=Path, required=True, help="Index both sides search.")
    parser.add_argument("--queries", required=True, help="Comma-separated query ids.")
    parser.add_argument("--ref-src", type=Path, help="The reference code's src folder.")
    parser.add_argument("--write-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--tolerance", type=float, default=1e-9)
    args = parser.parse_args(argv)
    qids = [q for q in args.queries.split(",") if q]
    if args.write_only:
        write_rows(args.dataset, args.db, qids, args.write_only)
        return 0
    if not args.ref_src:
        parser.error("give --ref-src")
    with tempfile.TemporaryDirectory() as tmp:
        ref, now = Path(tmp) / "ref.json", Path(tmp) / "now.json"
        command = [sys.executable, __file__, str(args.dataset), "--db", str(args.db),
                   "--queries", args.queries, "--write-only", str(ref)]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(args.ref_src)}
        subprocess.run(command, check=True, env=env)
        write_rows(args.dataset, args.db, qids, now)
        old = json.loads(ref.read_text(encoding="utf-8"))
        new = json.loads(now.read_text(encoding="utf-8"))
    report(old, new, args.tolerance)
    return 0


if __name__ == "__main__":
    sys.exit(main())
