"""The JSON API through an HTTP client against the running app: every endpoint, every error
code, and the audience rules (a staff-only passage never reaches a public key)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import re
import socket
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import numpy as np
import pytest
from support import FakeEmbedder
from support_service import PUBLIC_READ, STAFF_READ, STAFF_WRITE, auth

from kbsearch.service import access_log
from kbsearch.text.analysis import MAX_QUERY_CHARS

STAFF_PASSAGE = "goodwill@v1#goodwill-amount"
STAFF_WORDS = ("goodwill", "25 euros")


def get(client: httpx.Client, path: str, key: str = PUBLIC_READ, **params: Any) -> httpx.Response:
    return client.get(path, params=params, headers=auth(key))


def passage_url(passage_id: str) -> str:
    return "/passages/" + quote(passage_id, safe="@")


def no_staff_text(response: httpx.Response) -> None:
    body = response.text.lower()
    for word in STAFF_WORDS:
        assert word not in body, f"staff text {word!r} in {response.request.url.path}"


# -- search ------------------------------------------------------------------------------------


def test_search_returns_readable_hits(client: httpx.Client) -> None:
    response = get(client, "/search", q="return unused items", k=2)
    assert response.status_code == 200
    body = response.json()
    assert body["query"] == "return unused items" and body["route"] == "hybrid"
    top = body["hits"][0]
    assert top["passage_id"] == "returns@v2#return-window"
    assert top["rank"] == 1 and top["title"] == "Returns policy"
    assert top["section"] == "Return window" and top["version"] == "2"
    assert top["effective_from"] == "2026-04-01" and top["effective_to"] is None
    assert top["language"] == "en" and top["source"] == "returns-v2.md"
    assert set(top["routes"]) == {"lexical", "dense"}
    snippet = top["snippet"]
    assert snippet["text"] == "Return unused items in 45 days."
    assert top["text"][snippet["start"] : snippet["end"]] == snippet["text"]
    marked = [snippet["text"][s:e] for s, e in snippet["marks"]]
    assert marked == ["Return", "unused", "items"]


def test_dense_only_hit_gets_its_closest_sentence(client: httpx.Client) -> None:
    body = get(client, "/search", q="zzz qqq", k=5, route="dense").json()
    for hit in body["hits"]:
        snippet = hit["snippet"]
        assert snippet["marks"] == [] and snippet["text"]
        assert hit["text"][snippet["start"] : snippet["end"]] == snippet["text"]


def test_post_search_matches_get(client: httpx.Client) -> None:
    params = {"q": "late parcel", "k": 3, "route": "lexical", "as_of": "2026-01-01"}
    via_get = get(client, "/search", **params).json()
    via_post = client.post("/search", json=params, headers=auth(PUBLIC_READ)).json()
    assert via_post == via_get
    assert via_get["hits"][0]["passage_id"] == "delivery@v1#late-parcel"


def test_paging_continues_the_ranking(client: httpx.Client) -> None:
    whole = get(client, "/search", q="parcel items return", k=4, route="lexical").json()
    first = get(client, "/search", q="parcel items return", k=2, route="lexical").json()
    assert first["next_offset"] == 2
    second = get(client, "/search", q="parcel items return", k=2, route="lexical", offset=2).json()
    assert [h["rank"] for h in second["hits"]] == [3, 4][: len(second["hits"])]
    ids = [h["passage_id"] for h in first["hits"] + second["hits"]]
    assert ids == [h["passage_id"] for h in whole["hits"]]
    assert whole["next_offset"] is None


def test_as_of_picks_the_version_in_force(client: httpx.Client) -> None:
    old = get(client, "/search", q="return window", k=1, as_of="2025-06-01").json()
    new = get(client, "/search", q="return window", k=1, as_of="2026-06-01").json()
    assert old["hits"][0]["passage_id"] == "returns@v1#return-window"
    assert "30 days" in old["hits"][0]["text"]
    assert new["hits"][0]["passage_id"] == "returns@v2#return-window"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"q": "x" * (MAX_QUERY_CHARS + 1)}, f"exceeds the limit of {MAX_QUERY_CHARS}"),
        ({"q": "parcel", "route": "semantic"}, "unknown route 'semantic'"),
        ({"q": "parcel", "as_of": "2026-02-30"}, "no such day"),
        ({"q": "parcel", "as_of": "01/02/2026"}, "expected YYYY-MM-DD"),
        ({"q": "parcel", "k": 0}, "k must be from 1 to 100"),
        ({"q": "parcel", "k": 101}, "k must be from 1 to 100"),
        ({"q": "parcel", "k": "ten"}, "k: "),
        ({"q": "parcel", "offset": -1}, "offset must be from 0"),
        ({"q": "   "}, "empty"),
        ({}, "q: "),
        ({"q": "parcel", "audience": "staff"}, "comes from the API key"),
        ({"q": "parcel", "fusion": "bogus"}, "unknown parameter(s) fusion;"),
        ({"q": "parcel", "rrf_k": 3, "weights": "1,2"}, "unknown parameter(s) rrf_k, weights"),
    ],
)
def test_bad_search_arguments_are_422(
    client: httpx.Client, params: dict[str, Any], message: str
) -> None:
    response = get(client, "/search", **params)
    assert response.status_code == 422
    assert message in response.json()["error"]


def test_post_search_refuses_an_audience_field(client: httpx.Client) -> None:
    body = {"q": "goodwill credit", "audience": "staff"}
    response = client.post("/search", json=body, headers=auth(PUBLIC_READ))
    assert response.status_code == 422
    assert "audience" in response.json()["error"]
    no_staff_text(response)


@pytest.mark.parametrize(
    ("send", "message"),
    [
        ({"json": {"query": "kit"}}, "unknown field 'query' (did you mean 'q'?)"),
        ({"json": {"q": "kit", "asof": "2026-01-01"}}, "'asof' (did you mean 'as_of'"),
        ({"data": {"q": "kit"}}, "the body must be a JSON object"),
        ({"content": b"q=kit", "headers": {"Content-Type": "application/json"}},
         "the body must be a JSON object"),
        ({"json": ["kit"]}, "the body must be a JSON object"),
        ({"json": {"q": "kit", "audience": "public"}},
         "audience comes from the API key, not the request"),
        ({"json": {}}, "field 'q' is required"),
        ({"json": {"q": "kit", "k": "ten"}}, "k: Input should be a valid integer"),
        # a JSON true or "5" is not a number of hits (was taken as 1 and 5)
        ({"json": {"q": "kit", "k": True}}, "k: Input should be a valid integer"),
        ({"json": {"q": "kit", "k": "5"}}, "k: Input should be a valid integer"),
        ({"json": {"q": "kit", "offset": False}}, "offset: Input should be a valid integer"),
    ],
)  # fmt: skip
def test_post_search_names_what_is_wrong_with_the_body(
    client: httpx.Client, send: dict[str, Any], message: str
) -> None:
    headers = auth(PUBLIC_READ) | send.pop("headers", {})
    response = client.post("/search", headers=headers, **send)
    assert response.status_code == 422
    assert message in response.json()["error"]


@pytest.mark.parametrize("body", [b"q=kit", b'{"query": "kit"}', b"{"])
def test_post_search_without_a_key_is_401_whatever_the_body(
    client: httpx.Client, body: bytes
) -> None:
    response = client.post("/search", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 401


def test_post_search_body_is_documented(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    schema = spec["paths"]["/search"]["post"]["requestBody"]["content"]["application/json"]
    schema = schema["schema"]
    if "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    assert schema["required"] == ["q"] and "min_confidence" in schema["properties"]


# -- keys --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer not-a-key-at-all-000"}, {"X-API-Key": "wrong-key-123456789"}],
)
@pytest.mark.parametrize("path", ["/search?q=parcel", "/documents", "/metrics", "/explain"])
def test_missing_or_unknown_key_is_401(
    client: httpx.Client, headers: dict[str, str], path: str
) -> None:
    response = client.get(path, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert "key" in response.json()["error"]


@pytest.mark.parametrize(
    "path",
    ["/search?query=kit", "/search", "/search?q=kit&k=ten", "/search?q=kit&audience=staff",
     "/explain?q=kit&passage_id=x&bogus=1", "/documents?page=2"],
)  # fmt: skip
def test_no_key_is_401_whatever_the_parameters(client: httpx.Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 401, response.text
    assert response.json()["error"] == "an API key is required"


def test_x_api_key_header_works(client: httpx.Client) -> None:
    response = client.get("/documents", headers={"X-API-Key": STAFF_READ})
    assert response.status_code == 200


def test_health_needs_no_key(client: httpx.Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}  # nothing that moves with (staff) writes


def test_openapi_is_published(client: httpx.Client) -> None:
    assert client.get("/docs").status_code == 200
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/search", "/explain", "/documents", "/documents/{doc_id}", "/healthz"} <= set(paths)


def test_api_docs_load_nothing_from_another_host(client: httpx.Client) -> None:
    html = client.get("/docs")
    assert html.status_code == 200 and "text/html" in html.headers["content-type"]
    urls = re.findall(r"""(?:src|href)=["']([^"']+)["']|url: *['"]([^'"]+)['"]""", html.text)
    found = [u for pair in urls for u in pair if u]
    assert len(found) == 4 and not [u for u in found if "//" in u], found  # js, css, icon, spec
    for url in found:
        assert client.get(url).status_code == 200, url
    assert client.get("/redoc").status_code == 404  # off: it fetches a logo from cdn.redoc.ly


# -- the audience rules ------------------------------------------------------------------------


def test_staff_key_sees_the_staff_passage(client: httpx.Client) -> None:
    hits = get(client, "/search", STAFF_READ, q="goodwill credit", k=3).json()["hits"]
    assert hits[0]["passage_id"] == STAFF_PASSAGE
    assert get(client, passage_url(STAFF_PASSAGE), STAFF_READ).status_code == 200
    explained = get(client, "/explain", STAFF_READ, q="goodwill credit", passage_id=STAFF_PASSAGE)
    assert explained.status_code == 200
    assert get(client, "/documents/goodwill", STAFF_READ).status_code == 200


@pytest.mark.parametrize("route", ["lexical", "dense", "hybrid"])
def test_public_search_never_shows_staff_text(client: httpx.Client, route: str) -> None:
    for q in ("goodwill credit", "agents may grant 25 euros", "late parcel goodwill"):
        response = get(client, "/search", q=q, k=100, route=route)
        assert response.status_code == 200
        hits = response.json()["hits"]
        assert all(h["doc_id"] != "goodwill" for h in hits)
        assert not any(w in json.dumps(hits).lower() for w in STAFF_WORDS)


def _without(text: str, word: str) -> str:
    return text.replace(word, "ID")


def test_hidden_passage_is_the_same_404_as_a_missing_one(client: httpx.Client) -> None:
    missing_id = "nothing@v1#nowhere"
    for path, params in [
        ("/passages/{}", {}),  # formatted with the quoted id below
        ("/explain", {"q": "goodwill credit", "passage_id": "{}"}),
    ]:
        answers = []
        for pid in (STAFF_PASSAGE, missing_id):
            url = path.format(quote(pid, safe="@"))
            response = get(client, url, **{k: v.format(pid) for k, v in params.items()})
            assert response.status_code == 404
            answers.append(_without(response.text, pid))
        assert answers[0] == answers[1]
    hidden = get(client, "/documents/goodwill")
    missing = get(client, "/documents/nothing")
    assert hidden.status_code == missing.status_code == 404
    assert _without(hidden.text, "goodwill") == _without(missing.text, "nothing")


def test_public_document_list_and_counts_leave_out_staff(client: httpx.Client) -> None:
    public = get(client, "/documents").json()
    staff = get(client, "/documents", STAFF_READ).json()
    assert {d["doc_id"] for d in public["documents"]} == {"returns", "delivery"}
    assert public["count"] == 3 and staff["count"] == 4
    assert "goodwill" in {d["doc_id"] for d in staff["documents"]}
    staff_metrics = get(client, "/metrics", STAFF_READ).text
    assert "kbsearch_passages 5.0" in staff_metrics
    # the index generation and write counts move with staff-only writes: staff keys only
    refused = get(client, "/metrics")
    assert refused.status_code == 403 and "staff" in refused.json()["error"]
    assert "kbsearch_passages" not in refused.text


def test_public_explanation_and_errors_hold_no_staff_text(client: httpx.Client) -> None:
    response = get(client, "/explain", q="goodwill credit late parcel",
                   passage_id="delivery@v1#late-parcel")  # fmt: skip
    assert response.status_code == 200
    explanation = response.json()
    assert explanation["passage_id"] == "delivery@v1#late-parcel"
    assert explanation["passage"]["title"] == "Delivery"
    no_staff_text(_without_query(response, "goodwill credit late parcel"))
    # statistics come from the public index only: 4 public passages
    assert explanation["bm25"]["passages"] == 4


def _without_query(response: httpx.Response, query: str) -> httpx.Response:
    body = json.loads(response.text)
    body.pop("query")
    body["terms"] = [t for t in body["terms"] if t not in ("goodwil", "goodwill", "credit")]
    body["bm25"]["terms"] = [
        t for t in body["bm25"]["terms"] if t["term"] not in ("goodwil", "goodwill", "credit")
    ]
    body["bm25"]["ignored"] = []
    return httpx.Response(200, text=json.dumps(body), request=response.request)


# -- documents: read, replace, delete ----------------------------------------------------------


def test_document_lists_versions_and_passage_ids(client: httpx.Client) -> None:
    body = get(client, "/documents/returns").json()
    assert [v["version"] for v in body["versions"]] == ["1", "2"]
    assert body["versions"][1]["passage_ids"] == ["returns@v2#return-window"]
    assert body["versions"][0]["effective_to"] == "2026-03-31"


def put(client: httpx.Client, doc_id: str, name: str, content: bytes, key: str = STAFF_WRITE,
        **form: str) -> httpx.Response:  # fmt: skip
    return client.put(
        f"/documents/{doc_id}", files={"file": (name, content)}, data=form, headers=auth(key)
    )


NEW_FAQ = b"# Gift wrap\n\n## Wrapping\n\nWe wrap gifts in recycled paper for 3 euros.\n"


def test_put_adds_then_replaces_a_document(client: httpx.Client) -> None:
    get(client, "/search", q="recycled paper wrap")  # the catalogue of hit labels, cached
    added = put(client, "giftwrap", "wrap.md", NEW_FAQ, access="public", language="en")
    assert added.status_code == 201, added.text
    assert added.json() == {"doc_id": "giftwrap", "version": "1", "status": "added",
                            "passages": 1, "title": "Gift wrap", "access": "public",
                            "language": "en", "effective_from": None, "effective_to": None,
                            "owner": "", "doc_type": ""}  # fmt: skip
    hits = get(client, "/search", q="recycled paper wrap", k=1).json()["hits"]
    assert hits[0]["passage_id"] == "giftwrap@v1#wrapping"
    assert hits[0]["source"].endswith("wrap.md") and hits[0]["title"] == "Gift wrap"

    changed = NEW_FAQ.replace(b"3 euros", b"5 euros")
    replaced = put(client, "giftwrap", "wrap.md", changed, access="public", language="en")
    assert replaced.status_code == 200 and replaced.json()["status"] == "updated"
    text = get(client, passage_url("giftwrap@v1#wrapping")).json()["text"]
    assert "5 euros" in text and "3 euros" not in text
    again = put(client, "giftwrap", "wrap.md", changed, access="public", language="en")
    assert again.json()["status"] == "unchanged"


def test_the_url_names_the_document_whatever_the_files_front_matter_says(
    client: httpx.Client,
) -> None:
    before = get(client, "/documents/returns-policy", STAFF_READ).json()
    other = b'---\ndoc_id: returns-policy\nversion: "1"\n---\n# FM\n\n## S\n\nfmword text.\n'
    response = put(client, "fmdoc", "fm.md", other, access="public", language="en")
    assert response.status_code == 201, response.text
    assert response.json()["doc_id"] == "fmdoc" and response.json()["passages"] == 1
    assert get(client, "/documents/returns-policy", STAFF_READ).json() == before
    assert get(client, "/documents/fmdoc").json()["doc_id"] == "fmdoc"


def test_put_refuses_an_over_long_file_name_with_422(client: httpx.Client) -> None:
    """A breaker's find: a 300-character file name answered 503 ("cannot write the upload
    store: File name too long"), as if the server were at fault."""
    refused = put(client, "longname", "f" * 300 + ".md", NEW_FAQ, access="public")
    assert refused.status_code == 422, refused.text
    assert "file name is 303 characters long" in refused.json()["error"]
    assert get(client, "/documents/longname").status_code == 404


def test_put_staff_document_stays_hidden_from_public(client: httpx.Client) -> None:
    public_before = get(client, "/documents").json()
    response = put(client, "fraud", "fraud.md",
                   b"# Fraud\n\n## Signals\n\nFlag orders shipped to a freight forwarder.\n",
                   access="staff")  # fmt: skip
    assert response.status_code == 201
    assert get(client, "/search", q="freight forwarder", k=5, route="lexical").json()["hits"] == []
    hits = get(client, "/search", q="freight forwarder", k=100).json()["hits"]
    assert hits and all(h["doc_id"] != "fraud" for h in hits)
    staff_hits = get(client, "/search", STAFF_READ, q="freight forwarder", k=5).json()["hits"]
    assert staff_hits[0]["doc_id"] == "fraud"
    # not even the public documents' displayed sources move (their common folder did)
    assert get(client, "/documents").json() == public_before


def test_an_upload_never_publishes_a_page_labelled_staff(client: httpx.Client) -> None:
    page = b"---\naccess: staff\n---\n# Fraud\n\n## Signals\n\nFlag freight forwarders.\n"
    response = put(client, "fraud", "fraud.md", page, access="public")
    assert response.status_code == 422, response.text
    assert "labels it staff-only" in response.json()["error"]
    assert get(client, "/documents/fraud", STAFF_READ).status_code == 404  # nothing written
    assert put(client, "fraud", "fraud.md", page, access="staff").status_code == 201
    assert get(client, "/search", q="freight forwarders", k=5, route="lexical").json()["hits"] == []


@pytest.mark.parametrize(
    ("name", "content", "status", "message"),
    [
        ("notes.exe", b"MZ\x90\x00", 415, "unsupported format '.exe'"),
        ("cards.json", b"[]", 415, "unsupported format '.json'"),
        ("broken.pdf", b"%PDF-1.7 this is not really a PDF", 422, "broken.pdf"),
        ("empty.md", b"", 422, "empty.md"),
    ],
)
def test_bad_upload_leaves_the_previous_version(
    client: httpx.Client, name: str, content: bytes, status: int, message: str
) -> None:
    before = get(client, passage_url("delivery@v1#late-parcel")).json()
    response = put(client, "delivery", name, content, access="public")
    assert response.status_code == status, response.text
    assert message in response.json()["error"]
    assert get(client, passage_url("delivery@v1#late-parcel")).json() == before
    assert get(client, "/documents/delivery").json()["versions"][0]["passages"] == 2


def test_put_refuses_an_unknown_field_and_writes_nothing(client: httpx.Client) -> None:
    response = put(client, "giftwrap", "wrap.md", NEW_FAQ, access="public", colour="red")
    assert response.status_code == 422
    message = response.json()["error"]
    assert message.startswith("unknown field(s) colour; this endpoint takes: access, doc_type,")
    assert "file" in message and "version" in message
    assert get(client, "/documents/giftwrap", STAFF_READ).status_code == 404


def test_a_reupload_without_access_says_it_is_staff_again(client: httpx.Client) -> None:
    first = put(client, "giftwrap", "wrap.md", NEW_FAQ, access="public", owner="ops")
    assert first.json()["access"] == "public" and first.json()["owner"] == "ops"
    again = put(client, "giftwrap", "wrap.md", NEW_FAQ.replace(b"3 euros", b"4 euros"))
    assert again.status_code == 200, again.text
    # the defaults, not the previous version's values: visible in the answer
    assert again.json()["access"] == "staff" and again.json()["owner"] == ""
    assert again.json()["language"] == "en"  # detected
    assert get(client, "/documents/giftwrap").status_code == 404


def test_put_with_bad_metadata_is_422(client: httpx.Client) -> None:
    response = put(client, "x", "x.md", NEW_FAQ, effective_from="2026-13-01")
    assert response.status_code == 422 and "no such day" in response.json()["error"]
    response = put(client, "x", "x.md", NEW_FAQ, access="everyone")
    assert response.status_code == 422 and "public or staff" in response.json()["error"]
    response = put(client, "bad id!", "x.md", NEW_FAQ)
    assert response.status_code == 422


@pytest.mark.parametrize("key", [STAFF_READ, PUBLIC_READ])
def test_read_only_keys_cannot_write(client: httpx.Client, key: str) -> None:
    assert put(client, "giftwrap", "wrap.md", NEW_FAQ, key=key).status_code == 403
    assert client.delete("/documents/delivery", headers=auth(key)).status_code == 403
    assert get(client, "/documents/delivery").status_code == 200


def test_delete_a_version_then_the_document(client: httpx.Client) -> None:
    gone = client.delete("/documents/returns", params={"version": "1"}, headers=auth(STAFF_WRITE))
    assert gone.status_code == 200 and gone.json()["deleted_versions"] == ["1"]
    assert [v["version"] for v in get(client, "/documents/returns").json()["versions"]] == ["2"]
    assert client.delete("/documents/returns", headers=auth(STAFF_WRITE)).status_code == 200
    assert get(client, "/documents/returns").status_code == 404
    assert client.delete("/documents/returns", headers=auth(STAFF_WRITE)).status_code == 404
    hits = get(client, "/search", q="return window", k=100).json()["hits"]
    assert hits and all(h["doc_id"] != "returns" for h in hits)


def test_deleting_a_missing_version_names_the_version(client: httpx.Client) -> None:
    for doc_id in ("returns", "goodwill"):  # a staff writer sees both
        gone = client.delete(
            f"/documents/{doc_id}", params={"version": "9"}, headers=auth(STAFF_WRITE)
        )
        assert gone.status_code == 404
        assert gone.json()["error"] == f"document '{doc_id}' has no version '9'"
    missing = client.delete(
        "/documents/nothing", params={"version": "9"}, headers=auth(STAFF_WRITE)
    )
    assert missing.json()["error"] == "no document 'nothing' for this audience"
    assert len(get(client, "/documents/returns").json()["versions"]) == 2


@pytest.mark.parametrize("version", ["", " "])
def test_deleting_an_empty_version_is_a_422_and_removes_nothing(
    client: httpx.Client, version: str
) -> None:
    gone = client.delete(
        "/documents/returns", params={"version": version}, headers=auth(STAFF_WRITE)
    )
    assert gone.status_code == 422 and "version is empty" in gone.json()["error"]
    assert len(get(client, "/documents/returns").json()["versions"]) == 2


# -- time limit, loopback, metrics, logs -------------------------------------------------------


class SlowEmbedder(FakeEmbedder):
    """Encodes queries in 0.5 s: a search that outlasts any small time limit, whatever the load."""

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        time.sleep(0.5)
        return super().encode_queries(texts)


def test_search_over_the_time_limit_is_503(serve: Any, kb_file: Path) -> None:
    server = serve(kb_file, time_limit=0.05, embedder=SlowEmbedder())
    with httpx.Client(base_url=server.url) as c:
        response = c.get("/search", params={"q": "parcel"})
    assert response.status_code == 503
    assert "longer than" in response.json()["error"]


def test_without_keys_public_read_only_loopback(serve: Any, kb_file: Path) -> None:
    server = serve(kb_file)
    with httpx.Client(base_url=server.url) as c:
        hits = c.get("/search", params={"q": "goodwill credit", "k": 10}).json()["hits"]
        assert all(h["doc_id"] != "goodwill" for h in hits)
        assert c.get(passage_url(STAFF_PASSAGE)).status_code == 404
        response = c.put("/documents/x", files={"file": ("x.md", NEW_FAQ)})
        assert response.status_code == 403
        deleted = c.delete("/documents/delivery")
        assert deleted.status_code == 403
        no_file = c.put("/documents/x")  # refused for who asks, before what the form lacks
        assert no_file.status_code == 403
        for refused in (response, deleted, no_file):  # no key was sent: say what refuses
            assert refused.json()["error"] == "this server is read-only (started without --keys)"
        assert c.get("/documents/delivery").status_code == 200


def test_without_keys_other_hosts_are_refused(kb_file: Path) -> None:
    from support import FakeEmbedder

    from kbsearch.service import create_app

    app = create_app(kb_file, embedder=FakeEmbedder())

    async def ask() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=("192.0.2.7", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://kb") as c:
            return await c.get("/search", params={"q": "parcel"})

    try:
        response = asyncio.run(ask())
    finally:
        app.state.service.engine.close()
    assert response.status_code == 403
    assert "loopback only" in response.json()["error"]


def test_metrics_count_requests_by_route_and_status(client: httpx.Client) -> None:
    get(client, "/search", q="parcel")
    get(client, "/search", q="parcel", k=0)
    text = get(client, "/metrics", STAFF_READ).text
    assert 'kbsearch_requests_total{method="GET",route="/search",status="200"} 1.0' in text
    assert 'kbsearch_requests_total{method="GET",route="/search",status="422"} 1.0' in text
    assert 'kbsearch_request_duration_seconds_bucket{le="0.1",route="/search"}' in text
    assert "kbsearch_index_generation " in text


def test_one_json_log_line_per_request_without_query_or_key(client: httpx.Client) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(access_log._Json())
    access_log.LOGGER.addHandler(handler)
    try:
        get(client, "/search", q="secret question words", k=2)
        client.get("/documents", headers=auth("unknown-key-abcdefgh"))
    finally:
        access_log.LOGGER.removeHandler(handler)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(r["method"], r["path"], r["status"], r["audience"]) for r in lines] == [
        ("GET", "/search", 200, "public"),
        ("GET", "/documents", 401, "-"),
    ]
    assert all(isinstance(r["duration_ms"], float) for r in lines)
    text = stream.getvalue()
    for secret in ("secret question", PUBLIC_READ, "unknown-key"):
        assert secret not in text


@pytest.mark.parametrize("language", ["zz", "english", "xx-YY"])
def test_put_with_an_unknown_language_is_422_and_changes_nothing(
    client: httpx.Client, kb_file: Path, language: str
) -> None:
    before = get(client, "/documents", STAFF_READ).json()
    response = put(client, "delivery", "d.md", NEW_FAQ, access="public", language=language)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert "language" in error and "en, eo, es" in error and "fr" in error
    assert get(client, "/documents", STAFF_READ).json() == before
    assert not kb_file.with_name(kb_file.name + ".uploads").exists()
    ok = put(client, "giftwrap", "wrap.md", NEW_FAQ, access="public", language="fr-CA")
    assert ok.status_code == 201, ok.text
    assert get(client, "/documents/giftwrap").json()["versions"][0]["language"] == "fr"


def test_a_failed_upload_leaves_no_empty_folder(client: httpx.Client, kb_file: Path) -> None:
    uploads = kb_file.with_name(kb_file.name + ".uploads")
    broken = put(client, "newdoc", "empty.md", b"", access="public")
    assert broken.status_code == 422, broken.text
    assert not uploads.exists()
    assert put(client, "giftwrap", "wrap.md", NEW_FAQ, access="public").status_code == 201
    assert put(client, "other", "empty.md", b"", access="public").status_code == 422
    assert put(client, "giftwrap", "e.md", b"", access="public", version="3").status_code == 422
    assert sorted(p.name for p in uploads.iterdir()) == ["giftwrap"]
    assert sorted(p.name for p in (uploads / "giftwrap").iterdir()) == ["v1"]
    broken_v1 = put(client, "giftwrap", "wrap.md", b"", access="public")  # the kept file stays
    assert broken_v1.status_code == 422
    assert [p.name for p in (uploads / "giftwrap" / "v1").iterdir()] == ["wrap.md"]


def test_an_upload_error_names_no_server_path(client: httpx.Client, kb_file: Path) -> None:
    assert put(client, "giftwrap", "wrap.md", NEW_FAQ, access="public").status_code == 201
    overlapping = put(client, "giftwrap", "wrap2.md", NEW_FAQ, access="public", version="2")
    assert overlapping.status_code == 422
    error = overlapping.json()["error"]
    assert "overlaps version 1" in error and "giftwrap/v1/wrap.md" in error
    assert str(kb_file.parent) not in error


@pytest.mark.parametrize("relative", [True, False])
@pytest.mark.parametrize(
    ("name", "content"),
    [("zzq.pdf", b"%PDF-1.7 this is not really a PDF"), ("latin.md", b"# Caf\xe9\n\nCr\xe8me.\n")],
)
def test_an_upload_error_names_no_server_folder_whatever_the_db_path(
    serve: Any, kb_file: Path, keys_file: Path, monkeypatch: pytest.MonkeyPatch,
    relative: bool, name: str, content: bytes,
) -> None:  # fmt: skip
    monkeypatch.chdir(kb_file.parent)
    server = serve(Path(kb_file.name) if relative else kb_file, keys=keys_file)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        response = put(client, "newdoc", name, content, access="public")
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error.startswith(f"{name}: ") and str(kb_file.parent) not in error
    assert error.count(name) == 1, error


@pytest.mark.parametrize("lang", ["xx", "french", "zz-ZZ"])
def test_a_language_filter_that_is_no_language_is_422(client: httpx.Client, lang: str) -> None:
    """The check of an upload's language (and of ``kbsearch search --lang``)."""
    for path in ("/search", "/ask"):
        response = get(client, path, q="lost parcel", lang=lang)
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert f"unsupported lang {lang!r}" in error and "en, eo, es" in error
        assert "--" not in error


def test_a_language_filter_with_a_region_is_its_language(client: httpx.Client) -> None:
    regional = get(client, "/search", q="lost parcel", lang="en-GB")
    assert regional.status_code == 200, regional.text
    plain = get(client, "/search", q="lost parcel", lang="en").json()
    assert regional.json()["language"] == "en" and regional.json()["hits"] == plain["hits"]


@pytest.mark.parametrize(
    ("path", "name", "first", "second"),
    [
        ("/search", "q", "parcel", "refund"),
        ("/search", "k", "3", "5"),
        ("/search", "route", "lexical", "hybrid"),
        ("/search", "as_of", "2026-06-01", "2026-07-01"),
        ("/search", "lang", "en", "fr"),
        ("/search", "offset", "0", "5"),
        ("/search", "min_confidence", "0.5", "0.9"),
        ("/ask", "k", "3", "5"),
        ("/explain", "passage_id", "a", "b"),
    ],
)
def test_a_single_valued_parameter_given_twice_is_422_naming_it(
    client: httpx.Client, path: str, name: str, first: str, second: str
) -> None:
    params = {"q": "parcel", "passage_id": "returns@v1#refunds"} if path == "/explain" else {}
    pairs = [(n, v) for n, v in {"q": "parcel", **params}.items() if n != name]
    response = client.get(
        path, params=[*pairs, (name, first), (name, second)], headers=auth(PUBLIC_READ)
    )
    assert response.status_code == 422, response.text
    assert response.json()["error"] == (f"parameter {name} given 2 times; it takes one value"), (
        response.json()
    )


def test_a_list_parameter_may_be_repeated(client: httpx.Client) -> None:
    response = client.get(
        "/search", params=[("q", "parcel"), ("doc", "returns"), ("doc", "shipping")],
        headers=auth(PUBLIC_READ),
    )  # fmt: skip
    assert response.status_code == 200, response.text


def test_the_longest_query_is_answered_in_json_below_the_url_limit(client: httpx.Client) -> None:
    """A query just over MAX_QUERY_CHARS of 4-byte characters (12 bytes each percent-encoded):
    the API's JSON 422, its URL well under the HTTP parser's limit (MAX_URL_BYTES); a URL over
    that limit is refused by the HTTP server itself, in plain text (docs/reference/api.md)."""
    from kbsearch.service.app import MAX_URL_BYTES

    response = get(client, "/search", q="\U0001f600" * (MAX_QUERY_CHARS + 1))
    assert len(response.request.url.raw_path) < MAX_URL_BYTES
    assert response.status_code == 422
    assert f"exceeds the limit of {MAX_QUERY_CHARS}" in response.json()["error"]
    # httpx refuses to send such a URL: the request is written by hand
    url = f"/search?q={'x' * MAX_URL_BYTES}"
    head = f"GET {url} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {PUBLIC_READ}\r\n\r\n"
    with socket.create_connection((client.base_url.host, client.base_url.port)) as sock:
        sock.sendall(head.encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400") and answer.endswith(b"Invalid HTTP request received.")
