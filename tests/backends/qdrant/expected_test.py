"""What SQLite says a Qdrant collection should hold: the points of given passages."""

from __future__ import annotations

from pathlib import Path

from kbsearch.backends.qdrant.expected import points_of
from kbsearch.records import Document, Passage
from kbsearch.store import Store
from kbsearch.text.analysis import Analyzer


def test_points_are_analysed_with_the_heading_weight_the_index_records(tmp_path: Path) -> None:
    """A Qdrant copy's sparse vectors count a passage's heading lines as its FTS5 body does
    (the index's ``heading_weight``), so the two lexical lists keep the same lengths and tfs."""
    s = Store(tmp_path / "kb.db", create=True)
    with s.database.transaction():
        s.database.set_settings({"analyzer": "stem", "chunking": "headings-1", "heading_weight": 3})
    text = "Cancel an order\n\nPress the button within the hour."
    doc = Document("faq", "1", "Cancel an order", "en", access="public")
    passage = Passage("faq@v1#top", "faq", "1", "", "text", text, 0)
    s.documents.write(doc, [passage], [Analyzer("stem", 3).body(text, "en")], None)
    (point,) = points_of(s, ["faq@v1#top"], None)
    (row,) = s.passages.rows(["faq@v1#top"]).values()
    assert point.sparse.length == s.fts.document_length(row.row_id, "staff") == 15
    s.close()
