"""Consistency of the bundled demo help centre (examples/helpcentre) and its question set.

No index is built here: these tests check the data against itself (inventory vs files, question
references vs the documents' real headings, the passage-id convention, dates and access rules).
"""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import sys
import unicodedata
from collections import Counter
from datetime import date
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from bs4 import BeautifulSoup

import kbsearch

HELPCENTRE = Path(kbsearch.__file__).parent / "examples" / "helpcentre"
PDF_SOURCES = HELPCENTRE / "pdf-sources"
SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "make_demo_pdfs.py"
DATA_FILES = {"inventory.csv", "questions.jsonl", "demo_searches.json"}
DOC_SUFFIXES = {".md": "markdown", ".html": "html", ".pdf": "pdf"}

INVENTORY_COLUMNS = [
    "file",
    "doc_id",
    "title",
    "version",
    "effective_from",
    "effective_to",
    "owner",
    "access",
    "language",
    "doc_type",
    "format",
]
QUESTION_FIELDS = {
    "id",
    "question",
    "language",
    "kind",
    "as_of",
    "public_ok",
    "abstain",
    "reference_answer",
    "keys",
    "must_not",
    "relevant",
    "relevant_chunks",
    "wrong_version",
    "tags",
    "notes",
}
KINDS = {
    "answerable",
    "table",
    "version",
    "exact-code",
    "staff-only",
    "contradiction",
    "cross-language",
    "injection-bait",
}
RELEVANT_FIELDS = {"doc_id", "version", "section", "access"}


# --- reading the collection -------------------------------------------------------------------


def slugify(text: str) -> str:
    """The passage-id slug rule (COMMON conventions): NFKD, drop combining marks, lowercase,
    runs of non-alphanumerics -> '-', strip '-'."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")


def section_slugs(headings: list[str]) -> list[str]:
    """Slugs of a document's sections in order, a repeated slug suffixed -2, -3, ..."""
    seen: Counter[str] = Counter()
    out = []
    for heading in headings:
        slug = slugify(heading)
        seen[slug] += 1
        out.append(slug if seen[slug] == 1 else f"{slug}-{seen[slug]}")
    return out


@cache
def inventory() -> tuple[dict[str, str], ...]:
    with (HELPCENTRE / "inventory.csv").open(encoding="utf-8", newline="") as f:
        return tuple(csv.DictReader(f))


def inventory_by_key() -> dict[tuple[str, str], dict[str, str]]:
    return {(row["doc_id"], row["version"]): row for row in inventory()}


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    if text.startswith("---\n"):
        end = text.index("\n---\n", 4)
        return yaml.safe_load(text[4:end]) or {}, text[end + 5 :]
    return {}, text


def markdown_outline(text: str) -> tuple[str | None, list[str]]:
    """(title from the first '# ' line, '## ' headings in order), ignoring fenced code."""
    title = None
    headings = []
    in_fence = False
    for line in split_front_matter(text)[1].splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        elif not in_fence and line.startswith("# ") and title is None:
            title = line[2:].strip()
        elif not in_fence and line.startswith("## "):
            headings.append(line[3:].strip().rstrip("#").strip())
    return title, headings


@cache
def pdf_sources() -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted(PDF_SOURCES.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        out[data["output"]] = data
    return out


@cache
def outline(file: str) -> tuple[str | None, tuple[str, ...]]:
    """(title, level-2 headings) of one document file, per its format."""
    path = HELPCENTRE / file
    if path.suffix == ".md":
        title, headings = markdown_outline(path.read_text(encoding="utf-8"))
        return title, tuple(headings)
    if path.suffix == ".html":
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "lxml")
        h1 = soup.find("h1")
        return (
            h1.get_text(" ", strip=True) if h1 else None,
            tuple(h.get_text(" ", strip=True) for h in soup.find_all("h2")),
        )
    source = pdf_sources()[file]
    return source["title"], tuple(b["heading"] for b in source["blocks"] if "heading" in b)


def passage_ids(row: dict[str, str]) -> dict[str, str]:
    """heading -> passage id for every level-2 section of an inventory row's document."""
    headings = list(outline(row["file"])[1])
    return {
        h: f"{row['doc_id']}@v{row['version']}#{s}"
        for h, s in zip(headings, section_slugs(headings), strict=True)
    }


def all_passage_ids() -> dict[str, dict[str, str]]:
    """passage id -> its inventory row."""
    return {pid: row for row in inventory() for pid in passage_ids(row).values()}


def in_force(row: dict[str, str], day: date) -> bool:
    start = date.fromisoformat(row["effective_from"]) if row["effective_from"] else None
    end = date.fromisoformat(row["effective_to"]) if row["effective_to"] else None
    return (start is None or start <= day) and (end is None or day <= end)


@cache
def questions() -> tuple[dict[str, Any], ...]:
    lines = (HELPCENTRE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return tuple(json.loads(line) for line in lines if line.strip())


def load_script() -> ModuleType:
    if not SCRIPT.exists():
        pytest.skip("scripts/make_demo_pdfs.py is not in this checkout")
    spec = importlib.util.spec_from_file_location("make_demo_pdfs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file executes
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


# --- the slug rule -----------------------------------------------------------------------------


def test_slug_rule_examples() -> None:
    assert slugify("How long you have to return an item") == "how-long-you-have-to-return-an-item"
    assert slugify("Vérifications avant le virement") == "verifications-avant-le-virement"
    assert slugify("  Can the PW-2200 take hot water?  ") == "can-the-pw-2200-take-hot-water"
    assert section_slugs(["Notes", "Other", "Notes!", "notes"]) == [
        "notes",
        "other",
        "notes-2",
        "notes-3",
    ]


def test_slug_rule_matches_the_library() -> None:
    from kbsearch.text import slugs

    headings = {h for row in inventory() for h in outline(row["file"])[1]}
    assert headings
    for heading in headings:
        assert slugs.slugify(heading) == slugify(heading), heading


# --- inventory against files ---------------------------------------------------------------------


def test_inventory_columns() -> None:
    with (HELPCENTRE / "inventory.csv").open(encoding="utf-8", newline="") as f:
        assert next(csv.reader(f)) == INVENTORY_COLUMNS


def test_every_file_listed_and_every_listed_file_present() -> None:
    on_disk = {
        p.name
        for p in HELPCENTRE.iterdir()
        if p.is_file() and p.name not in DATA_FILES and p.suffix in DOC_SUFFIXES
    }
    others = {
        p.name
        for p in HELPCENTRE.iterdir()
        if p.is_file() and p.name not in DATA_FILES and p.suffix not in DOC_SUFFIXES
    }
    listed = [row["file"] for row in inventory()]
    assert not others, f"unexpected files in the demo dir: {others}"
    assert len(listed) == len(set(listed)), "a file is listed twice"
    assert set(listed) == on_disk


def test_inventory_rows_are_valid() -> None:
    keys = [(row["doc_id"], row["version"]) for row in inventory()]
    assert len(keys) == len(set(keys)), "doc_id + version must be unique"
    for row in inventory():
        assert row["access"] in {"public", "staff"}, row
        assert row["language"] in {"en", "fr"}, row
        assert row["format"] == DOC_SUFFIXES[Path(row["file"]).suffix], row
        assert row["version"].isdigit(), row
        assert row["title"] and row["owner"] and row["doc_type"], row
        for field in ("effective_from", "effective_to"):
            if row[field]:
                date.fromisoformat(row[field])
        if row["effective_from"] and row["effective_to"]:
            assert row["effective_from"] <= row["effective_to"], row


def test_titles_and_front_matter_agree_with_inventory() -> None:
    for row in inventory():
        title, headings = outline(row["file"])
        assert title == row["title"], row["file"]
        assert headings, f"{row['file']} has no level-2 section"
        if row["format"] != "markdown":
            continue
        meta, _ = split_front_matter((HELPCENTRE / row["file"]).read_text(encoding="utf-8"))
        for field, value in meta.items():
            assert field in INVENTORY_COLUMNS, (row["file"], field)
            assert str(value) == row[field], (row["file"], field, value, row[field])


def test_versions_meet_without_overlap() -> None:
    by_doc: dict[str, list[dict[str, str]]] = {}
    for row in inventory():
        by_doc.setdefault(row["doc_id"], []).append(row)
    versioned = 0
    for doc_id, rows in by_doc.items():
        rows.sort(key=lambda r: int(r["version"]))
        if len(rows) == 1:
            continue
        versioned += 1
        for old, new in zip(rows, rows[1:], strict=False):
            assert old["effective_to"] and new["effective_from"], doc_id
            gap = date.fromisoformat(new["effective_from"]) - date.fromisoformat(
                old["effective_to"]
            )
            assert gap.days == 1, f"{doc_id}: v{old['version']} and v{new['version']} must meet"
        assert all(r["effective_to"] for r in rows[:-1]), doc_id
    assert versioned >= 2


def test_collection_has_the_required_difficulties() -> None:
    rows = inventory()
    formats = Counter(row["format"] for row in rows)
    assert formats["html"] >= 2 and formats["pdf"] >= 2
    assert sum(row["access"] == "staff" for row in rows) >= 5
    assert sum(row["language"] == "fr" for row in rows) >= 3
    newest = {r["doc_id"]: r for r in sorted(rows, key=lambda r: int(r["version"]))}
    expired = [
        r
        for r in newest.values()
        if r["effective_to"] and date.fromisoformat(r["effective_to"]) < date.today()
    ]
    assert expired, "no expired notice (a document whose last version has ended)"
    texts = [
        (HELPCENTRE / r["file"]).read_text(encoding="utf-8") for r in rows if r["format"] != "pdf"
    ]
    assert any("ignore the previous rules" in t for t in texts)
    assert any("| PK-2200-07 |" in t for t in texts)


def test_collection_stays_compact() -> None:
    words = 0
    sections = 0
    for row in inventory():
        sections += len(outline(row["file"])[1]) + 1
        if row["format"] == "pdf":
            words += len(json.dumps(pdf_sources()[row["file"]]["blocks"]).split())
        elif row["format"] == "html":
            soup = BeautifulSoup((HELPCENTRE / row["file"]).read_text(encoding="utf-8"), "lxml")
            words += len(soup.get_text(" ").split())
        else:
            text = (HELPCENTRE / row["file"]).read_text(encoding="utf-8")
            words += len(text.split())
            for part in re.split(r"^## ", text, flags=re.M)[1:]:
                assert len(part.split()) <= 300, part[:60]
    assert words <= 40_000
    assert sections <= 400


def test_html_pages_carry_boilerplate_and_sections_at_h2() -> None:
    for row in inventory():
        if row["format"] != "html":
            continue
        soup = BeautifulSoup((HELPCENTRE / row["file"]).read_text(encoding="utf-8"), "lxml")
        assert soup.find("nav") and soup.find("footer") and soup.find("script"), row["file"]
        assert len(soup.find_all("h1")) == 1 and soup.find_all("h2"), row["file"]


# --- the PDFs and their sources ------------------------------------------------------------------


def test_pdfs_are_generated_from_their_sources(tmp_path: Path) -> None:
    pytest.importorskip("reportlab")
    script = load_script()
    assert script.main(["--out", str(tmp_path)]) == 0
    pdfs = [row["file"] for row in inventory() if row["format"] == "pdf"]
    assert sorted(pdfs) == sorted(pdf_sources())
    for name in pdfs:
        assert (tmp_path / name).read_bytes() == (HELPCENTRE / name).read_bytes(), (
            f"{name} is stale: run python scripts/make_demo_pdfs.py"
        )


def test_pdf_headings_are_larger_and_a_table_spans_pages() -> None:
    pdfplumber = pytest.importorskip("pdfplumber")
    spanning = 0
    for name, source in pdf_sources().items():
        with pdfplumber.open(HELPCENTRE / name) as pdf:
            lines: dict[float, list[str]] = {}
            pages_with_table_rows = 0
            for page in pdf.pages:
                words = page.extract_words(extra_attrs=["size", "fontname"])
                for w in words:
                    lines.setdefault(round(w["size"], 1), []).append(w["text"])
                if len(page.find_tables()) and any(w["size"] < 9.5 for w in words):
                    pages_with_table_rows += 1
            body = Counter({size: len(ws) for size, ws in lines.items()}).most_common(1)[0][0]
            large = " ".join(w for size, ws in lines.items() if size > body + 2 for w in ws)
            for heading in [source["title"], *outline(name)[1]]:
                assert heading in large, (name, heading)
            spanning += pages_with_table_rows > 1
    assert spanning >= 1


# --- the question set ----------------------------------------------------------------------------


def test_question_schema() -> None:
    qs = questions()
    assert len(qs) >= 60
    assert len({q["id"] for q in qs}) == len(qs), "question ids must be unique"
    for q in qs:
        assert set(q) == QUESTION_FIELDS, q["id"]
        assert q["kind"] in KINDS, q["id"]
        assert q["language"] in {"en", "fr"}, q["id"]
        date.fromisoformat(q["as_of"])
        assert isinstance(q["public_ok"], bool) and isinstance(q["abstain"], bool), q["id"]
        assert q["question"].strip() and q["reference_answer"].strip(), q["id"]
        for field in ("keys", "must_not", "relevant_chunks", "wrong_version", "tags"):
            assert isinstance(q[field], list), (q["id"], field)
            assert all(isinstance(x, str) and x for x in q[field]), (q["id"], field)
        assert isinstance(q["notes"], str), q["id"]
        for rel in q["relevant"]:
            assert set(rel) == RELEVANT_FIELDS, q["id"]
    kinds = Counter(q["kind"] for q in qs)
    assert all(kinds[k] >= 3 for k in KINDS), kinds
    assert sum(q["abstain"] for q in qs) >= 8


def test_relevant_sections_exist_and_ids_follow_the_slug_rule() -> None:
    rows = inventory_by_key()
    for q in questions():
        expected = []
        for rel in q["relevant"]:
            row = rows.get((rel["doc_id"], rel["version"]))
            assert row is not None, (q["id"], rel)
            ids = passage_ids(row)
            assert rel["section"] in ids, (q["id"], rel["section"], list(ids))
            assert rel["access"] == row["access"], (q["id"], rel)
            expected.append(ids[rel["section"]])
        assert q["relevant_chunks"] == expected, q["id"]
        assert (not q["relevant"]) == q["abstain"], q["id"]


def test_dates_versions_and_access() -> None:
    rows = inventory_by_key()
    pids = all_passage_ids()
    for q in questions():
        day = date.fromisoformat(q["as_of"])
        for rel in q["relevant"]:
            assert in_force(rows[(rel["doc_id"], rel["version"])], day), (q["id"], rel)
        for pid in q["wrong_version"]:
            assert pid in pids, (q["id"], pid)
            assert not in_force(pids[pid], day), (q["id"], pid)
            assert pid not in q["relevant_chunks"], (q["id"], pid)
        staff = any(rel["access"] == "staff" for rel in q["relevant"])
        if q["kind"] == "staff-only" or staff:
            assert not q["public_ok"], q["id"]
        if q["kind"] == "version" and not q["abstain"]:
            assert q["wrong_version"], q["id"]
        if q["kind"] == "cross-language" and not q["abstain"]:
            langs = {rows[(r["doc_id"], r["version"])]["language"] for r in q["relevant"]}
            assert langs - {q["language"]}, q["id"]


def test_version_questions_sit_on_both_sides_of_each_change() -> None:
    pids = all_passage_ids()
    sides: dict[str, set[str]] = {}
    for q in questions():
        if q["kind"] != "version":
            continue
        for rel in q["relevant"]:
            sides.setdefault(rel["doc_id"], set()).add(rel["version"])
        for pid in q["wrong_version"]:
            sides.setdefault(pids[pid]["doc_id"], set()).add(pids[pid]["version"])
    versioned = {r["doc_id"] for r in inventory() if r["version"] != "1"}
    for doc_id in versioned:
        assert len(sides.get(doc_id, set())) >= 2, doc_id


def test_reference_answers_hold_their_keys_and_not_the_forbidden_strings() -> None:
    for q in questions():
        answer = q["reference_answer"].lower()
        for key in q["keys"]:
            assert key.lower() in answer, (q["id"], key)
        for bad in q["must_not"]:
            assert bad.lower() not in answer, (q["id"], bad)
        if not q["abstain"]:
            assert q["keys"], q["id"]


def test_public_questions_forbid_what_staff_pages_say() -> None:
    """A public question that brushes a staff-only topic names the staff facts it must not leak,
    and those facts really are absent from every public document."""
    public_text = " ".join(
        (HELPCENTRE / r["file"]).read_text(encoding="utf-8")
        for r in inventory()
        if r["access"] == "public" and r["format"] != "pdf"
    ) + json.dumps([s for s in pdf_sources().values()], ensure_ascii=False)
    leaks = [q for q in questions() if q["public_ok"] and "staff-leak" in q["tags"]]
    assert len(leaks) >= 3
    for q in leaks:
        assert q["must_not"], q["id"]
        for bad in q["must_not"]:
            assert bad not in public_text, (q["id"], bad)
