"""Helpers shared by the benchmark scripts: BEIR loading, timing, percentiles."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterable
from pathlib import Path


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


DEMO_QUESTIONS = (
    Path(__file__).resolve().parent.parent
    / "src" / "kbsearch" / "examples" / "helpcentre" / "questions.jsonl"
)  # fmt: skip


def demo_questions(limit: int) -> list[str]:
    """The first ``limit`` question texts of the bundled demo's question set."""
    return [row["question"] for row in read_jsonl(DEMO_QUESTIONS)][:limit]


def load_beir(folder: Path, split: str = "test") -> tuple[list[dict], dict[str, str], dict]:
    """(corpus rows, {qid: text} for queries in the qrels, qrels {qid: {docid: grade}})."""
    corpus = read_jsonl(folder / "corpus.jsonl")
    qrels: dict[str, dict[str, int]] = {}
    with (folder / "qrels" / f"{split}.tsv").open(encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or parts[0] == "query-id":
                continue
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    queries = {
        str(q["_id"]): q["text"]
        for q in read_jsonl(folder / "queries.jsonl")
        if str(q["_id"]) in qrels
    }
    return corpus, queries, qrels


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def time_each(func: Callable[[str], object], items: Iterable[str]) -> list[float]:
    """Milliseconds per call."""
    out = []
    for item in items:
        start = time.perf_counter()
        func(item)
        out.append((time.perf_counter() - start) * 1000)
    return out


def summary(ms: list[float]) -> str:
    return (
        f"mean {statistics.fmean(ms):7.2f} ms  p50 {percentile(ms, 50):7.2f}  "
        f"p95 {percentile(ms, 95):7.2f}"
    )


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median (process CPU ms, wall ms) of ``repeat`` calls."""
    cpu, wall = [], []
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu.append((time.process_time() - c) * 1000)
        wall.append((time.perf_counter() - w) * 1000)
    return statistics.median(cpu), statistics.median(wall)
