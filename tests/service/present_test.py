"""No response shows the server's absolute paths: sources are shown as a search hit shows them
(relative to the indexed folder), in every response type."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from support import FakeEmbedder
from support_service import PUBLIC_READ, STAFF_READ, STAFF_WRITE, auth

import kbsearch
from kbsearch.service import operations as ops
from kbsearch.service.present import snippet_of

QUERY = "is a lost parcel refunded"
PASSAGE = "delivery@v1#lost-parcel"


def test_no_response_shows_an_absolute_server_path(client: httpx.Client, kb_file: Path) -> None:
    folder = str(kb_file.parent)
    requests = [
        ("/search", {"q": QUERY}),
        ("/ask", {"q": QUERY, "min_confidence": 0}),
        ("/explain", {"q": QUERY, "passage_id": PASSAGE}),
        (f"/passages/{quote(PASSAGE, safe='')}", {}),
        ("/documents", {}),
        ("/documents/delivery", {}),
        ("/", {"q": QUERY}),
        ("/ui/why", {"q": QUERY, "passage_id": PASSAGE}),
    ]
    for key in (PUBLIC_READ, STAFF_READ):
        for path, params in requests:
            response = client.get(path, params=params, headers=auth(key))
            assert response.status_code == 200, (path, response.text)
            assert folder not in response.text, path
    cited = client.get("/ask", params={"q": QUERY, "min_confidence": 0}, headers=auth(PUBLIC_READ))
    assert cited.json()["citation"]["source"] == "delivery.md"
    hit = client.get("/search", params={"q": QUERY, "k": 1}, headers=auth(PUBLIC_READ))
    assert hit.json()["hits"][0]["source"] == "delivery.md"


def test_an_upload_shows_as_uploads_and_moves_no_other_source(
    client: httpx.Client, kb_file: Path
) -> None:
    """The uploads folder sits beside the index file (here beside the indexed folder): counting
    it as a public folder made every indexed file's shown path longer (``docs/delivery.md``)
    and, elsewhere, showed the server's folders above both."""
    page = b"# Gift wrap\n\n## Wrapping\n\nWe wrap lost parcels' gifts in recycled paper.\n"
    put = client.put(
        "/documents/giftwrap",
        files={"file": ("wrap.md", page)},
        data={"access": "public", "language": "en"},
        headers=auth(STAFF_WRITE),
    )
    assert put.status_code == 201, put.text
    hits = client.get(
        "/search", params={"q": "recycled paper gift wrap", "k": 10}, headers=auth(PUBLIC_READ)
    ).json()["hits"]
    sources = {hit["doc_id"]: hit["source"] for hit in hits}
    assert sources["giftwrap"] == "uploads/giftwrap/v1/wrap.md"
    cited = client.get("/ask", params={"q": QUERY, "min_confidence": 0}, headers=auth(PUBLIC_READ))
    assert cited.json()["citation"]["source"] == "delivery.md"
    listed = client.get("/documents", headers=auth(PUBLIC_READ)).text
    assert str(kb_file.parent) not in listed and "uploads/giftwrap/v1/wrap.md" in listed


def test_snippets_embed_nothing(kb_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dense search's page of hits sharing no word with the query used to embed every
    hit's sentences per request (0.4-5 s for 50 hits on the demo): now no request embeds
    a passage; the sentence sharing most character trigrams is shown."""

    def refuse(texts: object) -> None:
        raise AssertionError(f"embedded {texts!r} for a snippet")

    opening = "Our shop opens at nine" + " and closes at six" * 12 + "."  # too long to widen into
    text = f"Delivery\nTimes\n{opening} Delivery takes two days."
    monkeypatch.setattr(FakeEmbedder, "encode_passages", refuse)
    with kbsearch.open_kb(kb_file, embedder=FakeEmbedder()) as kb:
        snippet = snippet_of(kb, "deliverable", text, "Delivery", "Times", "en")
        assert snippet["text"].startswith("Delivery takes two days.")
        assert text[snippet["start"] : snippet["end"]] == snippet["text"]
        page = ops.search(kb, "public", ops.SearchArgs(q="xyzzy plugh", route="dense", k=50),
                          ops.Limits())  # fmt: skip
    assert page["hits"] and all("snippet" in hit for hit in page["hits"])
