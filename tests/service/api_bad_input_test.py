"""Bad input the API once answered with a bare 500 or accepted silently: deeply nested JSON,
repeated and empty form fields, invalid UTF-8 in the query string; and what it refused that
it should answer: document ids with ``/`` (every id the index makes), ``HEAD``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from support import FILES, FakeEmbedder, write_files
from support_service import PUBLIC_READ, STAFF_READ, STAFF_WRITE, Running, auth

import kbsearch

# -- nested JSON ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
     b'{"q": ' + b"[" * 5_000 + b"]" * 5_000 + b"}"],
    ids=["array", "object", "inside-q"],
)  # fmt: skip
@pytest.mark.parametrize("key", [PUBLIC_READ, STAFF_WRITE])
def test_deeply_nested_json_is_a_422_not_a_500(
    client: httpx.Client, body: bytes, key: str, caplog: pytest.LogCaptureFixture
) -> None:
    headers = auth(key) | {"Content-Type": "application/json"}
    response = client.post("/search", content=body, headers=headers)
    assert response.status_code == 422, response.text[:200]
    assert "error" in response.json()
    assert "RecursionError" not in caplog.text
    assert client.get("/search", params={"q": "parcel"}, headers=auth(key)).status_code == 200


# -- repeated, empty and undecodable values ------------------------------------------------------

NOTE = b"# Note\n\n## Opening\n\nThe desk opens at nine.\n"


def test_a_put_with_two_file_parts_is_422_and_writes_nothing(client: httpx.Client) -> None:
    files = [("file", ("a.md", NOTE)), ("file", ("b.md", NOTE.replace(b"nine", b"ten")))]
    response = client.put("/documents/note", files=files, headers=auth(STAFF_WRITE))
    assert response.status_code == 422
    assert "file" in response.json()["error"] and "once" in response.json()["error"]
    assert client.get("/documents/note", headers=auth(STAFF_READ)).status_code == 404


def test_a_repeated_form_field_is_422(client: httpx.Client) -> None:
    files = [("file", ("a.md", NOTE))]
    data = {"version": ["2", "3"]}
    response = client.put("/documents/note", files=files, data=data, headers=auth(STAFF_WRITE))
    assert response.status_code == 422 and "version" in response.json()["error"]


@pytest.mark.parametrize("field", ["version", "access"])
def test_an_empty_field_with_a_default_is_422_not_the_default(
    client: httpx.Client, field: str
) -> None:
    """``version=`` (empty) was stored as version 1: FastAPI reads an empty form value as
    the field left out."""
    files = {"file": ("a.md", NOTE)}
    response = client.put(
        "/documents/note", files=files, data={field: ""}, headers=auth(STAFF_WRITE)
    )
    assert response.status_code == 422
    assert field in response.json()["error"] and "empty" in response.json()["error"]
    assert client.get("/documents/note", headers=auth(STAFF_READ)).status_code == 404


@pytest.mark.parametrize(
    "path",
    ["/search?q=pass%FFword", "/search?q=parcel&lang=%C3", "/ask?q=%80%80",
     "/explain?q=%FF&passage_id=x", "/?q=pass%FFword"],
)  # fmt: skip
def test_invalid_utf8_in_the_query_string_is_422(client: httpx.Client, path: str) -> None:
    response = client.get(path, headers=auth(PUBLIC_READ))
    assert response.status_code == 422, response.text[:200]
    assert "UTF-8" in response.text


@pytest.mark.parametrize(
    ("method", "path", "params"),
    [("GET", "/search", {"q": "parcel", "lang": ""}),
     ("POST", "/search", {"q": "parcel", "lang": ""}),
     ("GET", "/ask", {"q": "parcel", "lang": ""}),
     ("GET", "/explain", {"q": "parcel", "passage_id": "delivery@v1#lost-parcel", "lang": ""}),
     ("GET", "/search", {"q": "parcel", "as_of": ""}),
     ("POST", "/search", {"q": "parcel", "as_of": ""}),
     ("GET", "/ask", {"q": "parcel", "as_of": ""})],
)  # fmt: skip
def test_an_empty_lang_or_date_is_422_as_the_cli_refuses_it(
    client: httpx.Client, method: str, path: str, params: dict[str, str]
) -> None:
    """``--lang ""`` and ``--as-of ""`` are usage errors; ``lang=`` searched every language
    and ``as_of=`` today (an MCP tool's too: tests/service/mcp_arguments_test.py)."""
    send = {"json": params} if method == "POST" else {"params": params}
    response = client.request(method, path, headers=auth(PUBLIC_READ), **send)  # type: ignore[arg-type]
    assert response.status_code == 422, response.text[:300]
    error = response.json()["error"]
    assert "unsupported lang ''" in error or "malformed date ''" in error, error


def test_invalid_utf8_without_a_key_is_still_401(client: httpx.Client) -> None:
    assert client.get("/search?q=pass%FFword").status_code == 401


def test_an_encoded_replacement_character_is_searched(client: httpx.Client) -> None:
    """U+FFFD sent as valid UTF-8 (``%EF%BF%BD``) is a character like any other."""
    response = client.get("/search?q=parcel%EF%BF%BD", headers=auth(PUBLIC_READ))
    assert response.status_code == 200


# -- ids with "/" --------------------------------------------------------------------------------


@pytest.fixture
def folder_server(serve: Callable[..., Running], tmp_path: Path, keys_file: Path) -> Running:
    """An index of a folder with subfolders: doc ids ``guide/parking`` and ``guide/fr/acces``
    (from the paths), beside the usual test corpus."""
    docs = write_files(tmp_path / "docs", FILES)
    write_files(
        docs,
        {
            "guide/parking.md": "---\naccess: public\n---\n# Parking\n\n## Spaces\n\n"
            "Staff park on level two.\n",
            "guide/fr/acces.md": "---\naccess: public\nlanguage: fr\n---\n# Accès\n\n"
            "## Badge\n\nLe badge ouvre la porte.\n",
        },
    )
    db = tmp_path / "folder.db"
    with kbsearch.open_kb(db, create=True, embedder=FakeEmbedder()) as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv").ok
    return serve(db, keys=keys_file)


@pytest.fixture
def folder_client(folder_server: Running) -> httpx.Client:
    with httpx.Client(base_url=folder_server.url, timeout=30) as c:
        yield c


@pytest.mark.parametrize("doc_id", ["guide/parking", "guide/fr/acces"])
@pytest.mark.parametrize("encode", [True, False], ids=["encoded", "plain"])
def test_get_a_document_whose_id_has_a_slash(
    folder_client: httpx.Client, doc_id: str, encode: bool
) -> None:
    path = "/documents/" + (quote(doc_id, safe="") if encode else doc_id)
    response = folder_client.get(path, headers=auth(PUBLIC_READ))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["doc_id"] == doc_id
    assert body["versions"][0]["passage_ids"][0].startswith(f"{doc_id}@v1#")


def test_every_listed_document_is_reachable_by_its_id(folder_client: httpx.Client) -> None:
    listed = folder_client.get("/documents", headers=auth(STAFF_READ)).json()["documents"]
    ids = {d["doc_id"] for d in listed}
    assert {"guide/parking", "guide/fr/acces"} <= ids
    for doc_id in ids:
        url = "/documents/" + quote(doc_id, safe="")
        assert folder_client.get(url, headers=auth(STAFF_READ)).status_code == 200, doc_id


def test_delete_a_document_whose_id_has_a_slash(folder_client: httpx.Client) -> None:
    url = "/documents/" + quote("guide/parking", safe="")
    response = folder_client.delete(url, headers=auth(STAFF_WRITE))
    assert response.status_code == 200, response.text
    assert response.json() == {"doc_id": "guide/parking", "deleted_versions": ["1"]}
    assert folder_client.get(url, headers=auth(STAFF_READ)).status_code == 404
    search = folder_client.get(
        "/search", params={"q": "park level two", "route": "lexical"}, headers=auth(STAFF_READ)
    )
    assert all(not h["passage_id"].startswith("guide/parking@") for h in search.json()["hits"])
    assert folder_client.get("/documents/guide%2Ffr%2Facces", headers=auth(STAFF_READ)).is_success


def test_put_replaces_a_document_whose_id_has_a_slash(folder_client: httpx.Client) -> None:
    url = "/documents/" + quote("guide/parking", safe="")
    new = b"# Parking\n\n## Spaces\n\nStaff park on level three.\n"
    response = folder_client.put(
        url, files={"file": ("parking.md", new)}, data={"access": "public"},
        headers=auth(STAFF_WRITE),
    )  # fmt: skip
    assert response.status_code == 200, response.text
    assert response.json()["doc_id"] == "guide/parking"
    got = folder_client.get(url, headers=auth(PUBLIC_READ)).json()
    (pid,) = got["versions"][0]["passage_ids"]
    passage = folder_client.get("/passages/" + quote(pid, safe=""), headers=auth(PUBLIC_READ))
    assert "level three" in passage.json()["text"]
    assert passage.json()["source"] == "uploads/guide%2Fparking/v1/parking.md"
    # a new id with a slash is added, and deleted, like any other
    added = folder_client.put(
        "/documents/guide%2Fnew", files={"file": ("n.md", NOTE)}, headers=auth(STAFF_WRITE)
    )
    assert added.status_code == 201, added.text
    gone = folder_client.delete("/documents/guide%2Fnew", headers=auth(STAFF_WRITE))
    assert gone.json()["deleted_versions"] == ["1"]


@pytest.mark.parametrize("doc_id", ["../escape", "guide/../x", "guide//x", "/x", "guide/./x"])
def test_put_refuses_an_id_with_an_empty_or_dot_segment(
    folder_client: httpx.Client, doc_id: str, tmp_path: Path
) -> None:
    url = "/documents/" + quote(doc_id, safe="")
    response = folder_client.put(url, files={"file": ("n.md", NOTE)}, headers=auth(STAFF_WRITE))
    assert response.status_code in (404, 422), response.text
    assert not (tmp_path / "escape").exists() and not (tmp_path / "x").exists()


def test_the_page_links_reach_passages_whose_id_has_a_slash(folder_client: httpx.Client) -> None:
    page = folder_client.get(
        "/", params={"q": "park level two", "route": "lexical"}, headers=auth(PUBLIC_READ)
    )
    assert page.status_code == 200
    links = [
        part.split('"', 1)[0] for part in page.text.split('href="')[1:]
        if part.startswith(("/passages/", "/ui/why"))
    ]  # fmt: skip
    assert any("guide/parking" in link or "guide%2Fparking" in link for link in links), links
    for link in links:
        response = folder_client.get(link.replace("&amp;", "&"), headers=auth(PUBLIC_READ))
        assert response.status_code == 200, link


# -- HEAD ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["/healthz", "/search?q=parcel", "/documents", "/documents/delivery",
     "/passages/delivery@v1%23lost-parcel", "/", "/?q=parcel"],
)  # fmt: skip
def test_head_answers_as_get_without_a_body(client: httpx.Client, path: str) -> None:
    got = client.get(path, headers=auth(PUBLIC_READ))
    head = client.head(path, headers=auth(PUBLIC_READ))
    assert head.status_code == got.status_code == 200
    assert head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]


def test_head_checks_the_key_as_get_does(client: httpx.Client) -> None:
    assert client.head("/search?q=parcel").status_code == 401
    assert client.head("/healthz").status_code == 200


def test_head_is_not_a_second_operation_in_the_openapi(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    assert all("head" not in operations for operations in spec["paths"].values())


@pytest.mark.parametrize(
    ("body", "reason"),
    [(b'{"q": "\\ud800 parcel"}', "hex escape"), (b'{"q": "a\x00b"}', "control character"),
     (b'{"q": "\xff"}', "unicode code point"), (b'{"q": "kit", "k": NaN}', "expected value")],
)  # fmt: skip
def test_a_body_that_is_not_json_says_why(client: httpx.Client, body: bytes, reason: str) -> None:
    headers = auth(PUBLIC_READ) | {"Content-Type": "application/json"}
    response = client.post("/search", content=body, headers=headers)
    assert response.status_code == 422
    message = response.json()["error"]
    assert message.startswith("the body is not JSON (") and reason in message, message
    assert "the body must be a JSON object" in message


@pytest.mark.parametrize("doc", ["", ",", " , "])
def test_a_doc_filter_naming_no_id_is_422_not_every_document(
    client: httpx.Client, doc: str
) -> None:
    for answer in (
        client.get("/search", params={"q": "parcel", "doc": doc}, headers=auth(PUBLIC_READ)),
        client.post("/search", json={"q": "parcel", "doc": [doc]}, headers=auth(PUBLIC_READ)),
    ):
        assert answer.status_code == 422
        assert answer.json()["error"].startswith("doc names no document id"), answer.text
    empty = client.post("/search", json={"q": "parcel", "doc": []}, headers=auth(PUBLIC_READ))
    assert empty.status_code == 200  # an empty list is no filter
