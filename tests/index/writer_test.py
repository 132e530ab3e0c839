"""Passages written to an index fit the embedder's token limit: nothing is truncated."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import FakeEmbedder

import kbsearch
from kbsearch.embedders.base import check_token_limit
from kbsearch.errors import EmbeddingError


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
