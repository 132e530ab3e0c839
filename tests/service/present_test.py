"""No response shows the server's absolute paths: sources are shown as a search hit shows them
(relative to the indexed folder), in every response type."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import httpx
from support_service import PUBLIC_READ, STAFF_READ, auth

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
