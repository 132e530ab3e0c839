"""Inventory CSV: parsing, defaults, and every validation error."""

from __future__ import annotations

import unicodedata
from datetime import date
from pathlib import Path

import pytest
from support import FIXTURES_ROOT

from kbsearch.errors import InventoryError
from kbsearch.ingest.inventory import COLUMNS, read_inventory, validate_periods

FIXTURES = FIXTURES_ROOT / "ingest"
HEADER = ",".join(COLUMNS)


def _csv(tmp_path: Path, *lines: str, header: str = HEADER) -> Path:
    path = tmp_path / "inventory.csv"
    path.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")
    return path


def test_read_inventory_fixture() -> None:
    rows = read_inventory(FIXTURES / "inventory.csv")
    assert list(rows) == [
        "policies/returns.md",
        "policies/returns_v2.md",
        "staff/escalation.html",
    ]
    first = rows["policies/returns.md"]
    assert first.doc_id == "returns"
    assert first.version == "1"
    assert first.effective_from == date(2024, 1, 1)
    assert first.effective_to == date(2024, 3, 31)
    assert first.access == "public" and first.language == "en"
    assert rows["policies/returns_v2.md"].effective_to is None
    escalation = rows["staff/escalation.html"]
    assert escalation.version == "1"  # empty version -> default
    assert escalation.access is None and escalation.language is None
    assert escalation.effective_from is None


def test_missing_column(tmp_path: Path) -> None:
    header = HEADER.replace(",access", "")
    path = _csv(tmp_path, "a.md,a,A,1,,,o,en,policy,md", header=header)
    with pytest.raises(InventoryError, match="missing column.*access"):
        read_inventory(path)


def test_a_column_given_twice_is_refused(tmp_path: Path) -> None:
    """csv kept the last of two ``access`` columns: staff, then public, went public."""
    path = _csv(tmp_path, "a.md,a,A,1,,,o,staff,en,policy,md,public", header=f"{HEADER},access")
    with pytest.raises(InventoryError, match="column.*'access' given twice"):
        read_inventory(path)


def test_duplicate_doc_id_and_version(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        "a.md,a,A,1,,,o,public,en,policy,md",
        "b.md,a,A,1,,,o,public,en,policy,md",
    )
    with pytest.raises(InventoryError, match=r"line 3: duplicate doc_id\+version a v1"):
        read_inventory(path)


@pytest.mark.parametrize("bad", ["2024-13-01", "01/02/2024", "20240101", "soon"])
def test_bad_date_names_line_and_value(tmp_path: Path, bad: str) -> None:
    path = _csv(
        tmp_path, "a.md,a,A,1,2024-01-01,,o,public,en,policy,md", f"b.md,b,B,1,{bad},,o,,,,"
    )
    with pytest.raises(InventoryError, match=f"line 3: effective_from '{bad}'"):
        read_inventory(path)


def test_end_before_start(tmp_path: Path) -> None:
    path = _csv(tmp_path, "a.md,a,A,1,2024-05-01,2024-04-30,o,public,en,policy,md")
    with pytest.raises(InventoryError, match="before effective_from"):
        read_inventory(path)


def test_overlapping_periods(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        "a.md,a,A,1,2024-01-01,2024-06-30,o,public,en,policy,md",
        "a2.md,a,A,2,2024-06-30,,o,public,en,policy,md",
    )
    with pytest.raises(InventoryError, match="versions 1 and 2 overlap"):
        read_inventory(path)


def test_overlap_hidden_behind_a_long_period(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        "a1.md,a,A,1,2024-01-01,2024-12-31,o,public,en,policy,md",
        "a2.md,a,A,2,2024-02-01,2024-02-28,o,public,en,policy,md",
        "a3.md,a,A,3,2024-03-01,2024-03-31,o,public,en,policy,md",
    )
    with pytest.raises(InventoryError, match="overlap"):
        read_inventory(path)


def test_consecutive_periods_are_fine(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        "a.md,a,A,1,,2024-03-31,o,public,en,policy,md",
        "a2.md,a,A,2,2024-04-01,,o,public,en,policy,md",
    )
    rows = read_inventory(path)
    validate_periods(rows.values())
    assert [r.version for r in rows.values()] == ["1", "2"]


def test_same_file_twice(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        "docs/a.md,a,A,1,,,o,public,en,policy,md",
        "./docs/a.md,b,B,1,,,o,public,en,policy,md",
    )
    with pytest.raises(InventoryError, match="listed twice"):
        read_inventory(path)


def test_unreadable_inventory(tmp_path: Path) -> None:
    with pytest.raises(InventoryError, match="cannot read"):
        read_inventory(tmp_path / "nope.csv")


# issue 22: a macOS-made tree names files in NFD; the inventory names them in NFC (or the
# reverse): the names are compared after NFC normalisation
NFC_NAME = unicodedata.normalize("NFC", "réglement-intérieur.md")
NFD_NAME = unicodedata.normalize("NFD", NFC_NAME)


def test_inventory_file_keys_are_nfc(tmp_path: Path) -> None:
    from kbsearch.ingest.inventory import normalize_file_key

    assert NFC_NAME != NFD_NAME
    assert normalize_file_key(NFD_NAME) == NFC_NAME == normalize_file_key(NFC_NAME)
    rows = read_inventory(_csv(tmp_path, f"rh/{NFD_NAME},reglement,Règlement,1,,,,public,fr,,"))
    assert list(rows) == [f"rh/{NFC_NAME}"]


@pytest.mark.parametrize(("on_disk", "listed"), [(NFD_NAME, NFC_NAME), (NFC_NAME, NFD_NAME)])
def test_a_file_named_in_another_normal_form_gets_its_inventory_row(
    tmp_path: Path, on_disk: str, listed: str
) -> None:
    import kbsearch
    from kbsearch.records import Filters

    docs = tmp_path / "docs"
    (docs / "rh").mkdir(parents=True)
    (docs / "rh" / on_disk).write_text("# Règlement\n\n## Horaires\n\nDe 9 h à 17 h.\n")
    inventory = _csv(docs, f"rh/{listed},reglement,Règlement intérieur,1,,,rh,public,fr,,")
    kb = kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none")
    report = kb.index([docs], inventory=inventory)
    assert report.failed == [] and report.ok
    (stored,) = kb.documents()
    assert (stored.document.doc_id, stored.document.title) == ("reglement", "Règlement intérieur")
    assert stored.document.access == "public"
    assert kb.search("horaires", route="lexical", filters=Filters())  # public: the row's access
