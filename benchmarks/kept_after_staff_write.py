"""What a public key's repeated search costs right after a staff-only write, in CPU
milliseconds of this process (``time.process_time``, every thread), as the server reads it
(:meth:`kbsearch.service.engine.Engine.read` keyed as ``GET /search``), on a copy of an
index: five demo questions searched once, then four rounds of (the five again, kept; one
staff-only document written; the five again). Before the public's kept results outlived a
staff-only write, the reads after a write searched again, so a public key could time when
one happened; the code measured is the ``kbsearch`` imported (``PYTHONPATH``).

    OPENBLAS_NUM_THREADS=1 python benchmarks/kept_after_staff_write.py \\
        --db ~/.local/share/kbsearch/demo/helpcentre.db
"""

from __future__ import annotations

import argparse
import inspect
import shutil
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from kbsearch.service import operations as ops
from kbsearch.service.engine import Engine

QUERIES = (
    "is there a student discount?",
    "which kit fits the PW-2200?",
    "do you take cheques?",
    "can I return opened compost",
    "how long does delivery take to Jersey",
)
ROUNDS = 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True, help="an index to copy (the demo's)")
    db = parser.parse_args().db
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copy(db, work / "kb.db")
        engine = Engine(work / "kb.db")
        try:
            kept, after = measure(engine, work)
        finally:
            engine.close()
    ms = lambda xs: 1000 * sum(xs) / len(xs)  # noqa: E731
    print(
        f"public repeated search: {ms(kept):.2f} ms CPU kept, {ms(after):.2f} ms CPU right"
        f" after a staff-only write ({len(after)} reads, {ROUNDS} writes)"
    )


def measure(engine: Engine, work: Path) -> tuple[list[float], list[float]]:
    """CPU seconds of each public read before and right after each staff-only write."""
    # the code before the change took no audience (every write emptied the kept results)
    audience = (
        {"audience": "public"} if "audience" in inspect.signature(engine.read).parameters else {}
    )

    def public(query: str) -> Any:
        args = ops.SearchArgs(query)
        return engine.read(
            lambda kb: ops.search(kb, "public", args, ops.Limits()),
            key=lambda: ("search", "public", args, date.today()),
            **audience,
        )

    def timed(query: str) -> float:
        start = time.process_time()
        public(query)
        return time.process_time() - start

    for query in QUERIES:
        public(query)  # searched once, kept
    kept: list[float] = []
    after: list[float] = []
    for round_ in range(ROUNDS):
        kept += [timed(q) for q in QUERIES]
        folder = work / f"staff{round_}"
        folder.mkdir()
        (folder / f"note{round_}.md").write_text(
            f"---\naccess: staff\n---\n# Staff note {round_}\n\n## Refunds\n\n"
            f"Staff may refund a kettle in full (round {round_}).\n",
            encoding="utf-8",
        )
        report = engine.write(lambda kb, folder=folder: kb.index([folder]))
        assert report.ok and report.added == 1, report
        after += [timed(q) for q in QUERIES]
    return kept, after


if __name__ == "__main__":
    main()
