"""The demo collection indexed for real (fake embedder, no model): every passage the questions
name exists, and no staff-only passage reaches a public search in any route."""

from __future__ import annotations

import json
from datetime import date

import pytest
from support import FakeEmbedder

import kbsearch
from kbsearch.knowledge_base import KnowledgeBase
from kbsearch.records import ROUTES, Filters
from kbsearch.tasks.demo import demo_files, example_searches, examples_dir


@pytest.fixture(scope="module")
def demo_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    kb = kbsearch.open_kb(path, create=True, embedder=FakeEmbedder(dim=64))
    report = kb.index(demo_files(), inventory=examples_dir() / "inventory.csv")
    assert report.ok, report.failed
    assert report.default_access == 0
    return kb


def questions() -> list[dict]:
    lines = (examples_dir() / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_every_named_passage_exists(demo_kb: KnowledgeBase) -> None:
    named = {pid for q in questions() for pid in q["relevant_chunks"] + q["wrong_version"]}
    found = demo_kb.store.passages.rows(named)
    assert named - set(found) == set()


def test_every_relevant_section_is_indexed(demo_kb: KnowledgeBase) -> None:
    from kbsearch.text.slugs import slugify

    sections = {
        (d.document.doc_id, d.document.version, slugify(p.section.split(" > ")[-1]))
        for d in demo_kb.documents()
        for p in demo_kb.store.passages.in_document(d.row_id)
    }
    for q in questions():
        for rel in q["relevant"]:
            key = (rel["doc_id"], str(rel["version"]), slugify(rel["section"]))
            assert key in sections, (q["id"], key)


def staff_only_ids(kb: KnowledgeBase) -> set[str]:
    rows = kb.store.database.connection.execute(
        "SELECT passage_id FROM passages WHERE access != 'public'"
    )
    return {r[0] for r in rows}


@pytest.mark.parametrize("route", ROUTES)
def test_no_staff_passage_in_any_public_result(demo_kb: KnowledgeBase, route: str) -> None:
    staff = staff_only_ids(demo_kb)
    assert len({pid.split("@")[0] for pid in staff}) >= 5
    searched = 0
    for q in questions():
        as_of = date.fromisoformat(q["as_of"]) if q.get("as_of") else None
        hits = demo_kb.search(
            q["question"], k=100, route=route, filters=Filters(audience="public", as_of=as_of)
        )
        searched += 1
        assert not staff & {h.passage_id for h in hits}, q["id"]
        leaks = q["must_not"] if "staff-leak" in q.get("tags", []) else []
        for must_not in leaks:
            assert all(must_not not in h.text for h in hits), (q["id"], must_not)
    assert searched >= 60
    assert any("staff-leak" in q["tags"] and q["must_not"] for q in questions())


def test_example_searches_are_valid(demo_kb: KnowledgeBase) -> None:
    for example in example_searches():
        for _, filters in example.variants:
            assert demo_kb.search(example.query, k=3, route="lexical", filters=filters)
