"""WAL size of a served index under steady uploads and reads: the served snapshot's pinned
readers must not keep the WAL from starting over.

    python benchmarks/wal_growth.py --writes 300            # the service's engine
    python benchmarks/wal_growth.py --writes 300 --inline   # no background builds

A lexical-only index (``--embedder none``) of one document, three threads searching it without
pause, and ``--writes`` uploads of a 2,000-word document through the engine's write path;
prints the WAL's size every 50 writes.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
from pathlib import Path

import kbsearch
from kbsearch.service.engine import Engine
from kbsearch.service.uploads import Upload, write_upload


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--inline", action="store_true", help="No background builds.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        docs.mkdir()
        (docs / "delivery.md").write_text("# Delivery\n\n## Late parcel\n\nTracked 10 days.\n")
        db = Path(tmp) / "kb.db"
        with kbsearch.open_kb(db, create=True, embedder="none") as kb:
            kb.index([docs], default_access="public")
        engine = Engine(db, embedder="none", background=not args.inline)
        stop = threading.Event()

        def reader() -> None:
            while not stop.is_set():
                engine.read(lambda kb: kb.search("parcel", k=5, route="lexical"))

        threads = [threading.Thread(target=reader) for _ in range(3)]
        for t in threads:
            t.start()
        text = "# Notice\n\n## Update\n\n" + "parcel words " * 1000 + "\n"
        try:
            for i in range(args.writes + 1):
                upload = Upload(doc_id="notice", filename="notice.md",
                                content=f"{text}{i}".encode(), access="public")  # fmt: skip
                engine.write(lambda kb, u=upload: write_upload(kb, u))
                if i % 50 == 0:
                    size = os.path.getsize(f"{db}-wal") / 2**20
                    print(f"after {i:4d} writes: WAL {size:6.1f} MB", flush=True)
        finally:
            stop.set()
            for t in threads:
                t.join()
            engine.close()


if __name__ == "__main__":
    main()
