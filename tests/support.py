"""Helpers shared by the tests (not a test module): a deterministic fake embedder, file
writers and small corpora."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st

from kbsearch.embedders import Role, check_token_limit, check_vectors, l2_normalise
from kbsearch.knowledge_base import KnowledgeBase, open_kb
from kbsearch.records import Document, Filters, Passage
from kbsearch.store import Store
from kbsearch.text.analysis import Analyzer, words

FIXTURES_ROOT = Path(__file__).parent / "fixtures"


class FakeEmbedder:
    """Bag-of-words hashing embedder: deterministic, fast, no model. Counts its calls."""

    query_prefix = "query: "
    passage_prefix = "passage: "

    def __init__(self, dim: int = 32, max_tokens: int = 512, name: str = "fake:bow") -> None:
        self.dim = dim
        self.max_tokens = max_tokens
        self.name = name
        self.spec = name
        self.calls = 0
        self.encoded = 0

    def token_count(self, text: str, role: Role) -> int:
        prefix = self.query_prefix if role == "query" else self.passage_prefix
        return len(words(prefix + text)) + 2

    def _encode(self, texts: Sequence[str], role: Role) -> np.ndarray:
        check_token_limit(self, texts, role)
        self.calls += 1
        self.encoded += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in words(text) or ["empty"]:
                h = int(hashlib.md5(w.encode()).hexdigest(), 16)
                out[i, h % self.dim] += 1.0 if (h >> 8) % 2 else -1.0
            out[i, 0] += 0.01  # never a zero vector
        return check_vectors(l2_normalise(out), len(texts), self.dim)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "query")

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "passage")


def write_files(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def damage_table(db: Path, table: str) -> None:
    """Overwrite ``table``'s root page in ``db`` (checkpointed first) with bytes that are no
    page type: a file SQLite opens but calls malformed when that table is read."""
    import sqlite3

    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        (root,) = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)
        ).fetchone()
    connection.close()
    with db.open("r+b") as fh:
        fh.seek((root - 1) * page_size)
        fh.write(b"\xff" * page_size)


INVENTORY_HEADER = (
    "file,doc_id,title,version,effective_from,effective_to,owner,access,language,doc_type,format\n"
)
INVENTORY = (
    INVENTORY_HEADER
    + """\
returns-v1.md,returns,Returns policy,1,2025-01-01,2026-03-31,ops,public,en,policy,md
returns-v2.md,returns,Returns policy,2,2026-04-01,,ops,public,en,policy,md
goodwill.md,goodwill,Goodwill credits,1,2025-01-01,,support,staff,en,procedure,md
delivery.md,delivery,Delivery,1,2025-01-01,,ops,public,en,policy,md
"""
)


def made_before(store: Store, table: str, copy: Path) -> None:
    """Make ``store``'s file one written before ``table`` existed (the table dropped, the store
    closed) and ``copy`` a copy of that file, made before any store opens it again."""
    import sqlite3

    store.database.connection.execute(f"DROP TABLE {table}")
    store.close()
    with sqlite3.connect(store.path) as source, sqlite3.connect(copy) as target:
        source.backup(target)


def pages_inventory(count: int) -> str:
    """An inventory of ``count`` public English FAQ pages ``p{i}.md`` (doc ``p{i}``, title
    ``Page {i}``, version 1, in force always)."""
    rows = "".join(f"p{i}.md,p{i},Page {i},1,,,ops,public,en,faq,md\n" for i in range(count))
    return INVENTORY_HEADER + rows


FILES = {
    "inventory.csv": INVENTORY,
    "returns-v1.md": "# Returns policy\n\n## Return window\n\nReturn unused items in 30 days.\n",
    "returns-v2.md": "# Returns policy\n\n## Return window\n\nReturn unused items in 45 days.\n",
    "goodwill.md": "# Goodwill credits\n\n## Goodwill amount\n\n"
    "Agents may grant a goodwill credit of 25 euros for a late parcel.\n",
    "delivery.md": "# Delivery\n\n## Late parcel\n\nA late parcel is tracked for 10 days.\n\n"
    "## Lost parcel\n\nA lost parcel is refunded in full.\n",
}


def indexed_kb(root: Path) -> KnowledgeBase:
    """A knowledge base in ``root`` with :data:`FILES` indexed by the :class:`FakeEmbedder`
    (versions, a staff document, headings): the module-scoped ``kb`` fixture of the search
    tests."""
    docs = write_files(root / "docs", FILES)
    kb = open_kb(root / "kb.db", create=True, embedder=FakeEmbedder())
    assert kb.index([docs], inventory=docs / "inventory.csv").ok
    return kb


SEED = {
    "A": "Kettle notice: stop using the kettle.",
    "B": "Kettle care: descale it every month.",
    "C": "Refund timing: we send it in 2 days.",
    "D": "Gift cards: a gift card has no refund.",
    "E": "Price drops: ask for a refund of the difference.",
    "F": "Delivery: parcels arrive in 3 to 5 days.",
    "G": "Returns: return unused items within 30 days.",
    "H": "Rewards: points expire after 18 months.",
}


def seed_store(path: Path, analyzer: Analyzer) -> Store:
    store = Store(path, create=True)
    for key, text in SEED.items():
        doc = Document(doc_id=key, version="1", title=key, language="en", access="public")
        passage = Passage(key, key, "1", "", "text", text, 0)
        store.documents.write(doc, [passage], [analyzer.body(text, "en")], None)
    return store


# Runs `kbsearch index` (argv after the script) in a child process with one document per
# write batch and a "batch" line on stdout after each, then a pause, or (pause None) a wait
# for one line on stdin, so a test can interrupt or kill it between batches, and be sure it
# has not finished meanwhile. `fake:` embedders are the FakeEmbedder above.
SLOW_INDEX = """
import sys, time
sys.path.insert(0, {tests!r})
import kbsearch.index.writer, kbsearch.index.embedder_slot
from support import FakeEmbedder
kbsearch.index.writer.EMBED_BATCH = 1
write = kbsearch.index.writer.DocumentWriter._write_batch
def slow(self, batch):
    write(self, batch)
    print("batch", flush=True)
    if {pause} is None:
        sys.stdin.readline()
    else:
        time.sleep({pause})
kbsearch.index.writer.DocumentWriter._write_batch = slow
load = kbsearch.index.embedder_slot.load_embedder
kbsearch.index.embedder_slot.load_embedder = (
    lambda spec: FakeEmbedder(name=spec) if spec.startswith("fake:") else load(spec))
kbsearch.index.embedder_slot.resolve_spec = lambda spec: spec or "fake:bow"
from kbsearch.cli import cli
cli(sys.argv[1:])
"""


def slow_index_command(*args: str, pause: float | None = 0.2) -> list[str]:
    """The argv of a child ``kbsearch index ARGS`` that pauses ``pause`` seconds after each
    document, or (``None``) waits for a line on its stdin."""
    script = SLOW_INDEX.format(tests=str(Path(__file__).parent), pause=pause)
    return [sys.executable, "-c", script, "index", *args]


def many_files(root: Path, count: int, access: str = "public", prefix: str = "doc") -> Path:
    """``count`` small Markdown documents with front matter, one passage each."""
    for i in range(count):
        path = root / f"{prefix}{i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"---\naccess: {access}\nlanguage: en\n---\n# Page {i}\n\n"
            f"Parcel number {i} travels by courier.\n",
            encoding="utf-8",
        )
    return root


class LengthReranker:
    """A fake reranker: scores a ``(query, text)`` pair by the text's length, after ``pause``
    seconds a pair, and keeps every pair it saw (registered by the ``fake_reranker``
    fixture as ``fake``, and a 50 ms-a-pair one as ``slow``)."""

    def __init__(self, pause: float = 0.0) -> None:
        self.pairs: list[tuple[str, str]] = []
        self.pause = pause

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.pairs.extend(pairs)
        time.sleep(self.pause * len(pairs))
        return [float(len(text)) for _, text in pairs]


# Runs `kbsearch ARGS` (argv after the script) in a child process whose `fake:` embedders are
# the FakeEmbedder above (no model), e.g. an MCP server over an index built with it.
FAKE_CLI = """
import sys
sys.path.insert(0, {tests!r})
import kbsearch.index.embedder_slot
from support import FakeEmbedder
load = kbsearch.index.embedder_slot.load_embedder
resolve = kbsearch.index.embedder_slot.resolve_spec
kbsearch.index.embedder_slot.load_embedder = (
    lambda spec: FakeEmbedder(name=spec) if spec.startswith("fake:") else load(spec))
kbsearch.index.embedder_slot.resolve_spec = (
    lambda spec: spec if spec and spec.startswith("fake:") else resolve(spec))
from kbsearch.cli import cli
cli(sys.argv[1:])
"""


def fake_cli_args(*args: str) -> list[str]:
    """The arguments of ``python`` running ``kbsearch ARGS`` with :class:`FakeEmbedder`s."""
    return ["-c", FAKE_CLI.format(tests=str(Path(__file__).parent)), *args]


def cli_indexed_db(root: Path, monkeypatch: pytest.MonkeyPatch, embedder: str = "fake") -> str:
    """:data:`FILES` indexed into ``root/kb.db`` by ``kbsearch index --embedder fake``, the
    :class:`FakeEmbedder` registered as ``fake`` for the test (so later commands load it);
    ``embedder="none"``: a lexical-only index (that another process can serve too)."""
    from click.testing import CliRunner

    from kbsearch import embedders
    from kbsearch.cli import cli

    monkeypatch.setitem(embedders.EMBEDDERS, "fake", (lambda arg, threads: FakeEmbedder(), "test"))
    docs = write_files(root / "docs", FILES)
    path = str(root / "kb.db")
    args = ["index", str(docs), "--db", path, "--inventory", str(docs / "inventory.csv")]
    result = CliRunner().invoke(cli, [*args, "--embedder", embedder])
    assert result.exit_code == 0, result.output
    return path


# hypothesis strategies of the lexical index tests: small collections, queries and filters
LEXICAL_VOCAB = ["kettle", "refund", "days", "gift", "card", "the", "a", "care", "x1", "café"]
LEXICAL_VOCAB += ["straße"]
LEXICAL_DAYS = st.sampled_from([None, date(2025, 1, 1), date(2025, 6, 1), date(2026, 1, 1)])
LEXICAL_DOCS = st.lists(
    st.tuples(
        st.lists(
            st.lists(st.sampled_from(LEXICAL_VOCAB), min_size=0, max_size=12),
            min_size=1,
            max_size=3,
        ),
        st.sampled_from(["public", "staff"]),
        st.sampled_from(["en", "fr"]),
        LEXICAL_DAYS,
        LEXICAL_DAYS,
    ),
    min_size=1,
    max_size=14,
)
LEXICAL_QUERIES = st.lists(
    st.sampled_from([*LEXICAL_VOCAB, "absent", "ünknown"]), min_size=1, max_size=4
)
LEXICAL_FILTERS = st.builds(
    Filters,
    audience=st.sampled_from(["public", "staff"]),
    as_of=st.sampled_from([date(2025, 3, 1), date(2025, 7, 1), date(2026, 2, 1)]),
    language=st.sampled_from([None, "en", "fr"]),
    doc_ids=st.sampled_from([None, ("d0",), ("d1", "d2", "d3")]),
)
LEXICAL_SEARCHES = st.lists(
    st.tuples(LEXICAL_QUERIES, LEXICAL_FILTERS, st.integers(1, 8)), min_size=1, max_size=5
)


def mirror(real: Path, into: Path) -> None:
    """``into`` made a tree of real directories whose files are symbolic links to ``real``'s:
    the converted models and unpacked arrays already there are read where they lie, while a
    file kbsearch writes (a piece table, an unpacked model, a conversion) is written by
    temporary file and rename into ``into``, replacing at most a link, never its target."""
    for top, dirs, files in os.walk(real):
        rel = Path(top).relative_to(real)
        (into / rel).mkdir(parents=True, exist_ok=True)
        dirs[:] = [d for d in dirs if not d.startswith(".")]  # half-written conversions
        for name in files:
            (into / rel / name).symlink_to(Path(top) / name)
