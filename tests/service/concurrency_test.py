"""Searches in several threads while documents are replaced through the API: every response
is a complete old or new version (never a mix) and never an error."""

from __future__ import annotations

import threading
from typing import Any

import httpx
from support_service import STAFF_WRITE, auth

ALPHA = (
    b"# Delivery\n\n## Late parcel\n\nA late parcel is tracked for 10 days, marker alpha.\n\n"
    b"## Lost parcel\n\nA lost parcel is refunded in full, marker alpha.\n"
)
BRAVO = (
    b"# Delivery\n\n## Late parcel\n\nA late parcel is tracked for 12 days, marker bravo.\n\n"
    b"## Lost parcel\n\nA lost parcel is refunded or resent, marker bravo.\n\n"
    b"## Damaged parcel\n\nA damaged parcel is replaced, marker bravo.\n"
)
SECTIONS = {"alpha": 2, "bravo": 3}


def _marker(text: str) -> str:
    found = {m for m in SECTIONS if f"marker {m}" in text}
    assert len(found) == 1, text
    return found.pop()


def _check_search(body: dict[str, Any]) -> None:
    markers = {_marker(h["text"]) for h in body["hits"] if h["doc_id"] == "delivery"}
    assert len(markers) <= 1, f"a mix of versions in one response: {markers}"
    if markers == {"alpha"}:
        assert "delivery@v1#damaged-parcel" not in {h["passage_id"] for h in body["hits"]}


def _check_document(body: dict[str, Any]) -> None:
    (version,) = body["versions"]
    assert len(version["passage_ids"]) == version["passages"]
    assert version["passages"] in SECTIONS.values()


def test_searches_see_whole_versions_while_documents_are_replaced(server: Any) -> None:
    failures: list[str] = []
    responses = [0]
    stop = threading.Event()

    def put(content: bytes) -> None:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            r = c.put(
                "/documents/delivery",
                files={"file": ("delivery.md", content)},
                data={"access": "public", "language": "en"},
                headers=auth(STAFF_WRITE),
            )
        assert r.status_code in (200, 201), r.text

    put(ALPHA)

    def reader(route: str) -> None:
        with httpx.Client(base_url=server.url, timeout=60, headers=auth(STAFF_WRITE)) as c:
            while not stop.is_set():
                try:
                    r = c.get("/search", params={"q": "parcel marker", "k": 10, "route": route})
                    assert r.status_code == 200, r.text
                    _check_search(r.json())
                    d = c.get("/documents/delivery")
                    assert d.status_code == 200, d.text
                    _check_document(d.json())
                    responses[0] += 2
                except AssertionError as exc:
                    failures.append(str(exc))
                    stop.set()

    threads = [
        threading.Thread(target=reader, args=(route,))
        for route in ("lexical", "hybrid", "dense", "hybrid")
    ]
    for t in threads:
        t.start()
    try:
        for content in (BRAVO, ALPHA) * 5:
            put(content)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
    assert not failures, failures[:3]
    assert responses[0] >= 20
