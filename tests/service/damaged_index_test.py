"""A served index file damaged under the server: ``/healthz`` says so (503) and every route
answers 503 ``{"error"}`` (no bare 500), naming no server path; and the paths a writer's
error names are shown as search hits show them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from support import damage_table
from support_service import PUBLIC_READ, STAFF_READ, STAFF_WRITE, Running, auth

READS = [
    "/search?q=lost+parcel", "/search?q=lost+parcel&route=lexical", "/ask?q=lost+parcel",
    "/documents", "/documents/delivery", "/", "/?q=lost+parcel",
    "/passages/delivery@v1%23lost-parcel", "/explain?q=parcel&passage_id=delivery@v1%23lost-parcel",
]  # fmt: skip


@pytest.mark.parametrize("table", ["documents", "passages"])
def test_a_damaged_index_is_503_with_an_error_everywhere(
    serve: Callable[..., Running], kb_file: Path, keys_file: Path, table: str
) -> None:
    server = serve(kb_file, keys=keys_file)
    damage_table(kb_file, table)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        health = client.get("/healthz")
        assert health.status_code == 503, health.text
        assert health.json()["status"] == "error"
        for path in READS:
            for key in (PUBLIC_READ, STAFF_READ):
                response = client.get(path, headers=auth(key))
                if response.status_code == 200:  # served from the snapshot in memory
                    continue
                assert response.status_code == 503, (path, response.text[:300])
                page = response.headers["content-type"].startswith("text/html")
                message = response.text if page else response.json()["error"]
                assert "damaged" in message, (path, message)
                assert str(kb_file.parent) not in message and "kb.db" not in message
        statuses = {client.get(p, headers=auth(STAFF_READ)).status_code for p in READS}
        assert 503 in statuses  # the damage is seen, not only by /healthz


def test_health_stays_unhealthy_once_a_request_met_damage(
    serve: Callable[..., Running], kb_file: Path, keys_file: Path
) -> None:
    """A damaged page a probe does not read (here: met by a request first) keeps /healthz
    at 503: a damaged file does not heal."""
    server = serve(kb_file, keys=keys_file)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        assert client.get("/healthz").status_code == 200
        damage_table(kb_file, "documents")
        assert client.get("/documents", headers=auth(STAFF_READ)).status_code == 503
        assert client.get("/healthz").status_code == 503
        assert client.get("/healthz").status_code == 503


def test_a_writers_overlap_error_shows_the_source_as_hits_do(
    client: httpx.Client, kb_file: Path
) -> None:
    """A version whose dates overlap an indexed one: the message named the other version's
    file by its absolute server path (``/…/docs/returns-v2.md``)."""
    hit = client.get(
        "/search", params={"q": "return window", "k": 1}, headers=auth(STAFF_READ)
    ).json()["hits"][0]
    assert hit["passage_id"] == "returns@v2#return-window"
    files = {"file": ("r3.md", b"# Returns\n\n## Window\n\nReturn in 60 days.\n")}
    form = {"version": "3", "effective_from": "2026-05-01", "access": "public"}
    response = client.put("/documents/returns", files=files, data=form, headers=auth(STAFF_WRITE))
    assert response.status_code == 422, response.text
    message = response.json()["error"]
    assert "overlaps version 2" in message
    assert f"from {hit['source']})" in message, message
    assert str(kb_file.parent) not in message
