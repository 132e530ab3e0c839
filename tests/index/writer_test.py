"""The writing half of indexing under the ingest limits (issue 22): passages per document
capped before any is embedded, the per-document time budget checked between embedding steps
(an injected clock, no timing), a progress total from the start, a warning for a large file;
a refused document leaves what is indexed as it was."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from hostile_files import docx_bomb
from support import FakeEmbedder

import kbsearch
from kbsearch.index.writer import EMBED_BATCH
from kbsearch.ingest.limits import IngestLimits
from kbsearch.records import Filters

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
    """Every embedding step takes 10 s on the injected clock; with ``max_seconds`` 25 the
    document is refused before its 4th step (of 5), and the old version stays."""
    docs = tmp_path / "docs"
    docs.mkdir()
    manual = docs / "manual.md"
    manual.write_text(_sections(3), encoding="utf-8")
    clock = Clock()
    embedder = SlowEmbedder(clock, seconds=10)
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
        assert embedder.batches == [EMBED_BATCH] * 3  # stopped where the time went
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
