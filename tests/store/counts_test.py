"""The collection counts each write keeps (title totals, languages, public folders) stay equal
to a count over every passage and document, per audience, through writes, rewrites, deletions
and a clear; reading them reads no passage or document row; a file made before them gets them
on open."""

from __future__ import annotations

import os
import random
import sqlite3
from collections import Counter
from pathlib import Path

from support import made_before

from kbsearch.records import Document, Passage
from kbsearch.store import Store

IDS = ["a", "b", "c", "d", "e", "f"]
TITLES = ["Returns", "Delivery", " Returns ", "", None]  # None: the document's own id
SOURCES = [
    "",
    "https://help.example/page",
    "/srv/kb/en/returns.md",
    "/srv/kb/en/delivery.md",
    "/srv/kb/fr/livraison.md",
    "/srv/staff/notes.md",
]


def reference(connection: sqlite3.Connection, audience: str) -> dict[str, object]:
    """What the counts must say, from every passage and document (the rule before them)."""
    public = "" if audience == "staff" else " WHERE d.access = 'public'"
    passages = connection.execute(
        "SELECT d.title, d.doc_id, d.language FROM passages p"
        f" JOIN documents d ON d.id = p.document{public}"
    ).fetchall()
    titles = [t.strip() for t, doc_id, _ in passages if t.strip() not in ("", doc_id.strip())]
    counts = Counter(titles)
    documents = connection.execute(f"SELECT d.language, d.source FROM documents d{public}")
    documents = documents.fetchall()
    folders = {
        os.path.dirname(s) for _, s in documents if s and not s.startswith(("http://", "https://"))
    }
    return {
        "totals": (
            len(passages),
            len(titles),
            sum(1 for n in counts.values() if n == 1),
            len(counts),
        ),
        "passage_languages": sorted({r[2] for r in passages}),
        "languages": sorted({r[0] for r in documents}),
        "folders": sorted(folders) if audience != "staff" else None,
    }


def kept(store: Store, audience: str) -> dict[str, object]:
    return {
        "totals": store.passages.title_totals(audience),
        "passage_languages": store.passages.languages(audience),
        "languages": store.documents.languages(audience),
        "folders": store.documents.public_folders() if audience != "staff" else None,
    }


def write(store: Store, rng: random.Random) -> None:
    doc_id, version = rng.choice(IDS), rng.choice(["1", "2"])
    title = rng.choice(TITLES)
    document = Document(
        doc_id=doc_id,
        version=version,
        title=doc_id if title is None else title,
        language=rng.choice(["en", "fr", "de"]),
        access=rng.choice(["public", "staff"]),
        source=rng.choice(SOURCES),
        content_hash=str(rng.random()),
    )
    passages = [
        Passage(f"{doc_id}@v{version}#s{i}", doc_id, version, f"s{i}", "text", f"text {i}", i)
        for i in range(rng.randrange(4))
    ]
    store.documents.write(document, passages, [p.text for p in passages], None)


def test_counts_follow_writes_rewrites_and_deletes_per_audience(tmp_path: Path) -> None:
    rng = random.Random(23)
    store = Store(tmp_path / "kb.db", create=True)
    for step in range(300):
        if step == 150:
            store.documents.clear()
        elif rng.random() < 0.25:
            store.documents.delete(rng.choice(IDS), rng.choice(["1", "2"]))
        else:
            write(store, rng)
        for audience in ("public", "staff"):
            assert kept(store, audience) == reference(store.database.connection, audience), step


def test_a_staff_document_never_counts_for_the_public(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.db", create=True)
    public = Document(
        doc_id="p", version="1", title="Returns", language="en", access="public",
        source="/srv/kb/returns.md",
    )  # fmt: skip
    staff = Document(
        doc_id="s", version="1", title="Salaries", language="fr", access="staff",
        source="/srv/hr/salaries.md",
    )  # fmt: skip
    for document in (public, staff):
        passage = Passage(f"{document.doc_id}#1", document.doc_id, "1", "", "text", "x", 0)
        store.documents.write(document, [passage], ["x"], None)
    assert store.passages.title_totals("public") == (1, 1, 1, 1)
    assert store.passages.title_totals("staff") == (2, 2, 2, 2)
    assert store.documents.languages("public") == store.passages.languages("public") == ["en"]
    assert store.documents.languages("staff") == ["en", "fr"]
    assert store.documents.public_folders() == ["/srv/kb"]


def test_reading_the_counts_reads_no_passage_or_document(tmp_path: Path) -> None:
    rng = random.Random(5)
    statements: list[str] = []
    store = Store(tmp_path / "kb.db", create=True, tracer=statements.append)
    for _ in range(20):
        write(store, rng)
    statements.clear()
    for audience in ("public", "staff"):
        store.passages.title_totals(audience)
        store.documents.languages(audience)
        store.passages.languages(audience)
    store.documents.public_folders()
    read = [s for s in statements if "passages" in s or "documents" in s]
    assert statements and not read


def test_a_file_made_before_the_counts_gets_them_on_open(tmp_path: Path) -> None:
    rng = random.Random(11)
    path = tmp_path / "kb.db"
    store = Store(path, create=True)
    for _ in range(30):
        write(store, rng)
    old = tmp_path / "old.db"
    made_before(store, "collection_counts", old)
    reopened = Store(path)
    for audience in ("public", "staff"):
        assert kept(reopened, audience) == reference(reopened.database.connection, audience)
    reopened.close()
    old.chmod(0o444)  # read-only: counted in memory, the file left as it was
    read_only = Store(old)
    for audience in ("public", "staff"):
        assert kept(read_only, audience) == reference(read_only.database.connection, audience)
    names = read_only.database.connection.execute("SELECT name FROM sqlite_master").fetchall()
    assert "collection_counts" not in {r[0] for r in names}
