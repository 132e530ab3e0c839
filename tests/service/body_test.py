"""The JSON body of ``POST /search``: a key sent twice is refused (JSON parsers keep the last
value, and the first one a caller meant was dropped silently), as a repeated URL parameter is."""

from __future__ import annotations

import httpx
import pytest
from support_service import PUBLIC_READ, auth

JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize(
    ("body", "key"),
    [(b'{"q": "parcel", "k": 1, "k": 50}', "k"),
     (b'{"q": "lost parcel", "route": "dense", "q": "goodwill"}', "q"),
     (b'{"q": "parcel", "lang": "en", "lang": "fr", "lang": "en"}', "lang")],
)  # fmt: skip
def test_a_key_sent_twice_is_422_naming_it(client: httpx.Client, body: bytes, key: str) -> None:
    response = client.post("/search", content=body, headers=auth(PUBLIC_READ) | JSON)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert f"'{key}'" in error and "once" in error, error


def test_a_body_without_repeated_keys_is_served(client: httpx.Client) -> None:
    body = b'{"q": "parcel", "k": 2, "doc": ["delivery", "returns"]}'
    response = client.post("/search", content=body, headers=auth(PUBLIC_READ) | JSON)
    assert response.status_code == 200, response.text
    assert response.json()["k"] == 2
