"""What the API's answers say: an upload's stored metadata read as the indexer's and as
``GET /documents/{doc_id}`` give them, and error messages that name the actual problem."""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

import httpx
from support_service import PUBLIC_READ, STAFF_READ, STAFF_WRITE, auth

from kbsearch.present.sources import uploads_folder

STAFF_PASSAGE = "goodwill@v1#goodwill-amount"  # of the fixture's staff-only document
NEW_FAQ = b"# Gift wrap\n\n## Wrapping\n\nWe wrap gifts in recycled paper for 3 euros.\n"


def get(client: httpx.Client, path: str, key: str = PUBLIC_READ, **params: Any) -> httpx.Response:
    return client.get(path, params=params, headers=auth(key))


def put(
    client: httpx.Client, doc_id: str, name: str, content: bytes, **form: str
) -> httpx.Response:
    return client.put(
        f"/documents/{doc_id}",
        files={"file": (name, content)},
        data=form,
        headers=auth(STAFF_WRITE),
    )


def test_an_uploaded_markdown_file_has_the_indexers_format_name(client: httpx.Client) -> None:
    assert put(client, "giftwrap", "wrap.md", NEW_FAQ, access="public").status_code == 201
    (version,) = get(client, "/documents/giftwrap").json()["versions"]
    assert version["format"] == "markdown"  # as ingest (and the example inventory) names it


def test_an_uploads_open_dates_are_null_as_get_gives_them(client: httpx.Client) -> None:
    answer = put(client, "giftwrap", "wrap.md", NEW_FAQ, access="public").json()
    assert answer["effective_from"] is None and answer["effective_to"] is None
    (version,) = get(client, "/documents/giftwrap").json()["versions"]
    assert version["effective_from"] is None and version["effective_to"] is None
    dated = put(client, "giftwrap", "wrap.md", NEW_FAQ, access="public",
                effective_from="2026-01-01").json()  # fmt: skip
    assert dated["effective_from"] == "2026-01-01" and dated["effective_to"] is None


def test_an_audience_form_field_is_said_to_come_from_the_key(client: httpx.Client) -> None:
    response = put(client, "giftwrap", "wrap.md", NEW_FAQ, audience="public")
    assert response.status_code == 422
    assert response.json()["error"] == "audience is not a field: it comes from the API key"
    assert get(client, "/documents/giftwrap").status_code == 404


def test_the_why_fragment_is_the_same_404_as_explain(client: httpx.Client) -> None:
    """A hidden passage reads exactly as a missing one, on the page as in the API."""
    answers = []
    for pid in (STAFF_PASSAGE, "nothing@v1#nowhere"):
        params: dict[str, Any] = {"q": "goodwill credit", "passage_id": pid}
        api = get(client, "/explain", **params)
        page = get(client, "/ui/why", **params)
        assert api.status_code == page.status_code == 404, page.text
        message = api.json()["error"]
        assert html.unescape(page.text) == f'<p class="error">{message}</p>'
        answers.append(message.replace(repr(pid), "ID"))
    assert answers[0] == answers[1] == "no passage ID for this audience"


def test_not_found_names_the_date_only_when_one_was_given(client: httpx.Client) -> None:
    params = {"q": "parcel", "passage_id": "nothing@v1#nowhere"}
    undated = get(client, "/explain", **params).json()["error"]
    assert undated == "no passage 'nothing@v1#nowhere' for this audience"
    dated = get(client, "/explain", as_of="2026-01-01", **params).json()["error"]
    assert dated == "no passage 'nothing@v1#nowhere' for this audience and date"


def test_an_overlapping_version_is_refused_in_readers_words(client: httpx.Client) -> None:
    assert put(client, "giftwrap", "wrap.md", NEW_FAQ, access="public").status_code == 201
    second = put(client, "giftwrap", "wrap2.md", NEW_FAQ, access="public", version="2")
    assert second.status_code == 422
    message = second.json()["error"]
    assert "open to open" not in message
    assert (
        "version 2 (undated (in force at any time)) overlaps version 1 "
        "(undated (in force at any time), from uploads/giftwrap/v1/wrap.md)"
    ) in message, message
    assert "effective_from/effective_to dates that do not overlap" in message


def test_deleting_the_last_version_leaves_no_empty_folder(
    client: httpx.Client, kb_file: Path
) -> None:
    uploads = Path(uploads_folder(kb_file))
    for version in ("1", "2"):
        put(client, "giftwrap", "wrap.md", NEW_FAQ, access="public", version=version,
            effective_from=f"202{version}-01-01", effective_to=f"202{version}-12-31")  # fmt: skip
    gone = client.delete("/documents/giftwrap", params={"version": "1"}, headers=auth(STAFF_WRITE))
    assert gone.status_code == 200
    assert os.listdir(uploads / "giftwrap") == ["v2"]
    assert client.delete("/documents/giftwrap", headers=auth(STAFF_WRITE)).status_code == 200
    assert not (uploads / "giftwrap").exists()
    assert get(client, "/documents/giftwrap", PUBLIC_READ).status_code == 404


def test_explain_of_a_version_out_of_force_blames_the_day(client: httpx.Client) -> None:
    dates = {"effective_from": "2020-01-01", "effective_to": "2020-12-31"}
    assert put(client, "giftwrap", "wrap.md", NEW_FAQ, access="public", **dates).status_code == 201
    params = {"q": "wrap gifts", "passage_id": "giftwrap@v1#wrapping"}
    today = get(client, "/explain", **params)
    assert today.status_code == 404
    assert today.json()["error"].startswith("passage 'giftwrap@v1#wrapping' is not in force on "), (
        today.json()
    )
    assert "in force from 2020-01-01 to 2020-12-31" in today.json()["error"]
    assert get(client, "/explain", as_of="2020-06-01", **params).status_code == 200


def test_a_hidden_version_out_of_force_reads_as_missing(client: httpx.Client) -> None:
    dates = {"effective_from": "2020-01-01", "effective_to": "2020-12-31"}
    assert put(client, "giftwrap", "wrap.md", NEW_FAQ, access="staff", **dates).status_code == 201
    params = {"q": "wrap gifts", "passage_id": "giftwrap@v1#wrapping"}
    answer = get(client, "/explain", **params).json()["error"]
    assert answer == "no passage 'giftwrap@v1#wrapping' for this audience"
    staff = get(client, "/explain", key=STAFF_WRITE, **params).json()["error"]
    assert "not in force" in staff


def test_a_document_id_as_a_passage_id_names_its_passages_to_whom_may_see_them(
    client: httpx.Client,
) -> None:
    """``GET /passages/{id}`` given a document id answers as ``kbsearch show``/``explain``:
    it is a document id, with its passage ids; a staff-only document's ids never reach a
    public key (its 404 is the one of a missing passage)."""
    answer = get(client, "/passages/returns@v1")
    assert answer.status_code == 404
    assert answer.json()["error"] == (
        "'returns@v1' is a document id, not a passage id; its passages: returns@v1#return-window"
    )
    hidden = get(client, "/passages/goodwill")
    assert hidden.status_code == 404
    assert hidden.json()["error"] == "no passage 'goodwill' for this audience"
    staff = get(client, "/passages/goodwill", key=STAFF_READ)
    assert staff.status_code == 404 and STAFF_PASSAGE in staff.json()["error"]
