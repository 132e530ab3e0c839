"""``kbsearch index`` throughput (passages per second) as the collection grows, in one run.

    nice -n 10 python benchmarks/index_rate.py --data /work/shared/data --sizes 10000 100000 \\
        [--work /tmp/kbrate] [--embedder none]

For each size N, writes (once, kept under ``--work``) a folder of N / 10 Markdown files of ten
sections each: a title, a heading and about 60 words cut from a random abstract or paragraph
of the BEIR corpora under ``--data`` (EN and FR, as :mod:`scale` recombines them), a fifth of
the files staff-only by front matter, the language left to detection. Then runs
``kbsearch index FOLDER --db NEW.db --embedder none`` in a fresh process per size (the CLI a
user runs, from an empty index) and prints its wall time, its CPU time (user + system of the
child, so the shared machine's load counts less) and both rates, with each size's CPU rate as
a ratio to the first size's (issue 23: 100k within 20% of 10k).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scale import PER_DOCUMENT, passage_text, read_corpora


def write_folder(folder: Path, size: int, data: Path, seed: int = 23) -> None:
    """``size`` passages as Markdown files under ``folder`` (module docstring)."""
    if (folder / "DONE").exists():
        return
    texts, _ = read_corpora(data)
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for doc in range((size + PER_DOCUMENT - 1) // PER_DOCUMENT):
        pool = texts["en" if doc % 2 == 0 else "fr"]
        title = " ".join(rng.choice(pool)[:4]).strip(".,;:#")
        access = "staff" if doc % 5 == 4 else "public"
        sections = []
        for i in range(min(PER_DOCUMENT, size - doc * PER_DOCUMENT)):
            heading = " ".join(rng.choice(pool)[:3]).strip(".,;:#")
            sections.append(f"## {heading} {i}\n\n{passage_text(rng, rng.choice(pool))}\n")
        body = "\n".join(sections)
        path = folder / f"{doc // 1000:03d}" / f"doc-{doc:06d}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"---\naccess: {access}\n---\n# {title}\n\n{body}", encoding="utf-8")
    (folder / "DONE").write_text(str(size))


def index_once(folder: Path, db: Path, embedder: str) -> tuple[float, float, int]:
    """``(wall s, CPU s, passages)`` of one ``kbsearch index`` run into a new ``db``."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    command = [sys.executable, "-m", "kbsearch", "index", str(folder), "--db", str(db),
               "--embedder", embedder, "--json"]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"kbsearch index failed: {done.stderr.strip()[-500:]}")
    report = json.loads(done.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, int(report["passages"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "kbrate")
    parser.add_argument("--embedder", default="none")
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    first: float | None = None
    print(f"load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)", flush=True)
    for size in args.sizes:
        folder = args.work / f"md-{size}"
        write_folder(folder, size, args.data)
        wall, cpu, passages = index_once(folder, args.work / f"index-{size}.db", args.embedder)
        rate = passages / cpu
        first = first or rate
        print(
            f"{size:>8} passages: {passages} indexed in {wall:7.1f} s wall, {cpu:7.1f} s CPU:"
            f" {passages / wall:6.0f} passages/s wall, {rate:6.0f} passages/CPU-s"
            f" ({rate / first:.2f}x of the first size); load {os.getloadavg()[0]:.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
