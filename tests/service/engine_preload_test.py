"""A served index loads the parsers, the language identifier and (without an embedder) the
default embedder's token counter on its write thread at start-up, so its first upload does not
pay for them (a fresh process: nothing imported yet)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import FILES, write_files

import kbsearch

CHECK = """
import json, sys
from kbsearch.service.engine import Engine
from kbsearch.embedders import default_token_count
from kbsearch.text import language

def loaded():
    parsers = sorted(m for m in sys.modules if m.startswith("kbsearch.ingest.") and
                     m.rsplit(".", 1)[1] in ("html", "markdown", "pdf", "rst", "word"))
    counter = default_token_count.cache_info().currsize == 1
    return {"parsers": parsers, "identifier": bool(language._loaded), "counter": counter}

engine = Engine(sys.argv[1], embedder=None, background=sys.argv[2] == "1")
engine._writes.submit(lambda: None).result()  # what was queued before it has run
print(json.dumps(loaded()))
engine.close()
"""


@pytest.mark.parametrize("background", [True, False])
def test_the_write_thread_loads_the_parsers_first(tmp_path: Path, background: bool) -> None:
    docs = write_files(tmp_path / "docs", FILES)
    db = tmp_path / "lexical.db"
    with kbsearch.open_kb(db, create=True, embedder="none") as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv").added == 4
    done = subprocess.run(
        [sys.executable, "-c", CHECK, str(db), "1" if background else "0"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    if background:
        assert loaded == {
            "parsers": [f"kbsearch.ingest.{m}" for m in ("html", "markdown", "pdf", "rst", "word")],
            "identifier": True,
            "counter": True,  # an index without an embedder cuts passages with E5's counts
        }
    else:  # tests' engines: nothing loaded ahead
        assert loaded == {"parsers": [], "identifier": False, "counter": False}
