"""A one-shot ``kbsearch search`` and ``kbsearch ask``: process CPU and wall, two source trees
side by side in one run (alternating, so both see the same machine load).

    OPENBLAS_NUM_THREADS=1 python benchmarks/oneshot_cli.py --db COPY_OF_DEMO.db \\
        --before OLD_CHECKOUT/src --after src --cache COPY_OF_CACHE [--runs 3] [--upgrade]

Each command runs as its own process (``python -m kbsearch ...``) with ``PYTHONPATH`` the
tree and ``KBSEARCH_CACHE`` the cache; CPU is the child's user + system time (``os.wait4``).
``--upgrade`` first removes from ``--cache`` what a newer kbsearch derives on first use (the
tokenizer's piece tables and the unpacked language model; never a model) and times the first
``after`` search alone: what a user with an older cache pays once. Give a copy of the cache
and of the index (nothing is written to the index; the cache gains those derived files).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUERY = "how long does a refund take?"
COMMANDS = {
    "import kbsearch.cli.commands": ["-c", "import kbsearch.cli.commands"],
    "search": ["-m", "kbsearch", "search", "--db", "{db}", QUERY],
    "ask": ["-m", "kbsearch", "ask", "--db", "{db}", QUERY],
}


def run_once(tree: Path, cache: Path, argv: list[str]) -> tuple[float, float]:
    """(CPU s, wall s) of one process."""
    env = dict(os.environ, PYTHONPATH=str(tree), KBSEARCH_CACHE=str(cache))
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *argv], env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv} failed under {tree}")
    return usage.ru_utime + usage.ru_stime, wall


def upgrade(cache: Path, tree: Path, db: Path) -> tuple[float, float]:
    """Remove the derived files from ``cache``, then time one search that writes them."""
    for table in (cache / "models").glob("*/tokenizer.pieces.npz"):
        table.unlink()
    shutil.rmtree(cache / "langid", ignore_errors=True)
    found = run_once(tree, cache, [a.format(db=db) for a in COMMANDS["search"]])
    written = sorted(p.relative_to(cache) for p in cache.rglob("*") if p.is_file())
    print("derived files written:", [str(p) for p in written if "pieces" in str(p) or
                                     "langid" in str(p)][:3], "...")  # fmt: skip
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--upgrade", action="store_true")
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    if args.upgrade:
        cpu, wall = upgrade(args.cache, trees["after"], args.db)
        print(f"first search after the upgrade (writes the derived files): CPU {cpu:.2f} s,"
              f" wall {wall:.2f} s")  # fmt: skip
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(args.runs):
        for command, argv in COMMANDS.items():
            for label, tree in trees.items():
                found = run_once(tree, args.cache, [a.format(db=args.db) for a in argv])
                samples.setdefault((command, label), []).append(found)
    print(f"median of {args.runs} runs (CPU = user + system of the process)")
    print(f"  {'command':26s} {'CPU before':>10s} {'CPU after':>10s} {'ratio':>6s}"
          f" {'wall before':>11s} {'wall after':>10s}")  # fmt: skip
    for command in COMMANDS:
        b = samples[(command, "before")]
        a = samples[(command, "after")]
        cb, ca = statistics.median(c for c, _ in b), statistics.median(c for c, _ in a)
        wb, wa = statistics.median(w for _, w in b), statistics.median(w for _, w in a)
        print(f"  {command:26s} {cb:10.2f} {ca:10.2f} {cb / ca:6.2f} {wb:11.2f} {wa:10.2f}")


if __name__ == "__main__":
    main()
