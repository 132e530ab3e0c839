"""Reading passages back: every field of a written passage, per audience."""

from __future__ import annotations

from pathlib import Path

from kbsearch.records import Document, Passage
from kbsearch.store import Store


def test_a_passage_reads_back_field_for_field_and_staff_only_stays_staff(tmp_path: Path) -> None:
    store = Store(tmp_path / "kb.db", create=True)
    try:
        for doc_id, access in (("open", "public"), ("memo", "staff")):
            document = Document(doc_id, "2", doc_id, "en", access)
            passage = Passage(
                f"{doc_id}@v2#part", doc_id, "2", "Part", "text", f"{doc_id} words", 3,
                page=7, start=11, end=42, token_count=5,
            )  # fmt: skip
            store.documents.write(document, [passage], [f"{doc_id} words"], None)
        (row,) = store.passages.rows(["memo@v2#part"]).values()
        assert row.passage == Passage(
            "memo@v2#part", "memo", "2", "Part", "text", "memo words", 3,
            page=7, start=11, end=42, token_count=5,
        )  # fmt: skip
        assert (row.access, store.passages.count()) == ("staff", 2)
        assert store.passages.of_document("memo", None, "public") == []
        assert store.passages.of_document("memo", "2", "staff") == [row.passage]
        assert store.passages.languages_of(["open@v2#part", "memo@v2#part"], "public") == {
            "open@v2#part": "en"
        }
    finally:
        store.close()
