"""An inventory's access labels are remembered by the index: a later run without
``--inventory`` cannot make a staff page public."""

from __future__ import annotations

from pathlib import Path

from support import write_files

import kbsearch
from kbsearch.ingest.inventory import COLUMNS
from kbsearch.records import Filters

HEADER = ",".join(COLUMNS) + "\n"


def test_reindex_without_inventory_keeps_its_staff_label(tmp_path: Path) -> None:
    docs = write_files(
        tmp_path / "docs",
        {
            "inventory.csv": HEADER + "a.md,a,A,1,2026-01-01,,,staff,en,,\n",
            "a.md": "# A\n\nSalary bands secret.\n",
            "b.md": "# B\n\nPublic holiday secret.\n",
        },
    )
    public, staff = Filters(audience="public"), Filters(audience="staff")
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv", default_access="public").ok
        report = kb.index([docs], default_access="public")
        assert report.ok and report.access_changed == []
        hits = kb.search("secret", k=10, route="lexical", filters=public)
        assert {h.doc_id for h in hits} == {"b"}
        hits = kb.search("salary", k=10, route="lexical", filters=staff)
        assert {h.doc_id for h in hits} == {"a"}


def test_a_new_inventory_label_replaces_the_remembered_one(tmp_path: Path) -> None:
    docs = write_files(
        tmp_path / "docs",
        {
            "inventory.csv": HEADER + "a.md,a,A,1,2026-01-01,,,staff,en,,\n",
            "a.md": "# A\n\nSalary bands.\n",
        },
    )
    public = Filters(audience="public")
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv").ok
        (docs / "inventory.csv").write_text(HEADER + "a.md,a,A,1,2026-01-01,,,public,en,,\n")
        assert kb.index([docs], inventory=docs / "inventory.csv").ok
        assert kb.index([docs]).ok
        assert kb.search("salary", k=10, route="lexical", filters=public)
