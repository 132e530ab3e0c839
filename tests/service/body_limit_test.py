"""Request bodies are limited before the app reads them: FastAPI reads a whole body (a JSON
search, an upload's form) before any dependency runs, the key check included, so without a
limit anyone who can reach the server could make it hold (or spool to disk) any amount."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
from support_service import PUBLIC_READ, STAFF_WRITE, auth

from kbsearch.service.app import MAX_BODY_BYTES, MAX_UPLOAD_BODY_BYTES


def json_body(size: int) -> bytes:
    return b'{"q": "' + b"a" * size + b'"}'


def test_a_search_body_over_the_limit_is_413_before_the_key_is_asked(
    client: httpx.Client,
) -> None:
    response = client.post(
        "/search", content=json_body(MAX_BODY_BYTES), headers={"content-type": "application/json"}
    )
    assert response.status_code == 413, response.text  # was 401, after reading it all
    assert "request body over" in response.json()["error"]


def test_a_chunked_body_is_counted_as_it_arrives(client: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: chunked transfer
        body = json_body(MAX_BODY_BYTES)
        for start in range(0, len(body), 65536):
            yield body[start : start + 65536]

    response = client.post(
        "/search",
        content=chunks(),
        headers={"content-type": "application/json", **auth(PUBLIC_READ)},
    )
    assert response.status_code == 413, response.text
    assert client.get("/healthz").status_code == 200


def test_bodies_within_the_limits_are_served(client: httpx.Client) -> None:
    response = client.post("/search", json={"q": "late parcel"}, headers=auth(PUBLIC_READ))
    assert response.status_code == 200
    upload = client.put(
        "/documents/leaflet",
        files={"file": ("leaflet.md", b"# Leaflet\n\n## Parts\n\nSpare parts ship weekly.\n")},
        data={"access": "public"},
        headers=auth(STAFF_WRITE),
    )
    assert upload.status_code == 201, upload.text
    assert MAX_UPLOAD_BODY_BYTES > MAX_BODY_BYTES


def test_an_upload_body_over_its_limit_is_413_without_a_key(client: httpx.Client) -> None:
    response = client.put(
        "/documents/leaflet",
        files={"file": ("leaflet.md", b"x" * MAX_UPLOAD_BODY_BYTES)},
        data={"access": "public"},
    )
    assert response.status_code == 413, response.text  # was 401, after spooling it all
