"""The search page (GET /) and the API: their default route is the best one the index
supports; the report page (GET /report)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from pathlib import Path

import httpx
import pytest
from markupsafe import escape
from support import FILES, FakeEmbedder, write_files
from support_service import PUBLIC_READ, STAFF_READ, Running, auth

import kbsearch
from kbsearch.filters import Filters
from kbsearch.service.pages import templates

NOTE = "This index has no vectors: keyword search (lexical) only."


def offered_routes(html: str) -> list[str]:
    select = re.search(r'<select id="route".*?</select>', html, re.S)
    assert select, html
    return re.findall(r'<option value="(\w+)"', select.group(0))


def selected_route(html: str) -> str:
    found = re.search(r'<option value="(\w+)" selected>', html)
    assert found, html
    return found.group(1)


def test_the_page_searches_a_keyword_only_index_by_default(lexical_server: Running) -> None:
    server = lexical_server
    with httpx.Client(base_url=server.url, timeout=30, headers=auth(PUBLIC_READ)) as client:
        empty = client.get("/")
        assert empty.status_code == 200 and NOTE in empty.text
        assert selected_route(empty.text) == "lexical"
        assert offered_routes(empty.text) == ["lexical"]  # not dense or hybrid, which fail
        page = client.get("/", params={"q": "lost parcel"})
        assert page.status_code == 200, page.text
        assert NOTE in page.text and 'class="hit"' in page.text
        assert selected_route(page.text) == "lexical"
        asked = client.get("/", params={"q": "lost parcel", "route": "hybrid"})
        assert asked.status_code == 422 and "no vectors" in asked.text  # asked for, said why
        assert offered_routes(asked.text) == ["lexical"] and NOTE in asked.text
        more = client.get("/", params={"q": "parcel", "route": "lexical"})  # e.g. page 2
        assert more.status_code == 200 and NOTE in more.text


def test_the_page_and_the_api_mark_the_query_content_words_not_its_stop_words(
    client: httpx.Client,
) -> None:
    query = "how do I return unused items in 45 days"  # searched as "return unused items 45 days"
    page = client.get("/", params={"q": query}, headers=auth(PUBLIC_READ))
    assert page.status_code == 200, page.text
    marked = re.findall(r"<mark>(.*?)</mark>", page.text)
    assert {"Return", "unused", "items", "45", "days"} <= set(marked)
    assert not {"in", "I", "do", "how"} & set(marked)
    found = client.get("/search", params={"q": query}, headers=auth(PUBLIC_READ))
    snippet = found.json()["hits"][0]["snippet"]
    assert snippet["text"] == "Return unused items in 45 days."
    marks = [snippet["text"][s:e] for s, e in snippet["marks"]]
    assert marks == ["Return", "unused", "items", "45", "days"]


def test_the_page_searches_hybrid_by_default_with_vectors(client: httpx.Client) -> None:
    page = client.get("/", params={"q": "lost parcel"}, headers=auth(PUBLIC_READ))
    assert page.status_code == 200 and NOTE not in page.text
    assert selected_route(page.text) == "hybrid"
    assert offered_routes(page.text) == ["lexical", "dense", "hybrid"]


def test_the_api_searches_the_best_route_an_index_supports(lexical_server: Running) -> None:
    with httpx.Client(base_url=lexical_server.url, timeout=30, headers=auth(PUBLIC_READ)) as c:
        default = c.get("/search", params={"q": "parcel"})
        posted = c.post("/search", json={"q": "parcel"})
        response = c.get("/search", params={"q": "parcel", "route": "hybrid"})
        asked = c.get("/ask", params={"q": "parcel"})
    for found in (default, posted):
        assert found.status_code == 200, found.text
        assert found.json()["route"] == "lexical" and found.json()["hits"]
    assert response.status_code == 422
    error = response.json()["error"]
    assert "no vectors" in error and "route=lexical" in error
    assert asked.status_code == 422 and "answering needs both routes" in asked.json()["error"]
    errors = error + asked.json()["error"]
    assert "lexical.db" not in errors  # no server file path
    assert "--" not in errors  # no command-line option: an HTTP client has none


def test_report_page_says_the_folder_holds_no_report(
    serve: Callable[..., Running], kb_file: Path, keys_file: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    server = serve(kb_file, keys=keys_file, report=runs)
    with httpx.Client(base_url=server.url, timeout=30, headers=auth(STAFF_READ)) as client:
        empty = client.get("/report")
        assert empty.status_code == 404
        assert "holds no evaluation report" in empty.text and "kbsearch eval" in empty.text
        assert "start the server with --report" not in empty.text  # it was started so
        assert str(tmp_path) not in empty.text
        (runs / "report.html").write_text("<p>R@5 0.9</p>", encoding="utf-8")
        shown = client.get("/report")
        assert shown.status_code == 200 and "R@5 0.9" in shown.text


def test_a_report_folder_holding_an_unreadable_report_is_a_404_not_a_500(
    serve: Callable[..., Running], kb_file: Path, keys_file: Path, tmp_path: Path
) -> None:
    """A folder named ``*.html`` was the newest report (IsADirectoryError), and a report not
    in UTF-8 a UnicodeDecodeError: both a 500."""
    import os

    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.html").write_text("<p>R@5 0.9</p>", encoding="utf-8")
    (runs / "z.html").mkdir()  # newer than a.html, yet no report
    os.utime(runs / "z.html", (1.9e9, 1.9e9))
    server = serve(kb_file, keys=keys_file, report=runs)
    with httpx.Client(base_url=server.url, timeout=30, headers=auth(STAFF_READ)) as client:
        shown = client.get("/report")
        assert shown.status_code == 200 and "R@5 0.9" in shown.text
        (runs / "y.html").write_bytes("<p>R@5 0,9 été</p>".encode("latin-1"))
        os.utime(runs / "y.html", (2e9, 2e9))  # the newest
        bad = client.get("/report")
        assert bad.status_code == 404 and "y.html, cannot be read (not UTF-8 text)" in bad.text
        assert str(tmp_path) not in bad.text


@pytest.mark.parametrize("fusion", ["rrf", "convex", "learned"])
def test_the_why_fragment_words_a_cross_language_passage_as_the_cli_does(
    tmp_path: Path, fusion: str
) -> None:
    """The "why" of a French page for an English question: the same reading as ``kbsearch
    explain`` (a lexical 0 does not count; fusion reads the better of own and imputed) and the
    legend saying what "fused" and "part" mean."""
    files = {
        **FILES,
        "inventory.csv": FILES["inventory.csv"]
        + "livraison.md,livraison,Livraison,1,2025-01-01,,ops,public,fr,policy,md\n",
        "livraison.md": "# Livraison\n\n## Délais de livraison\n\n"
        "Un colis perdu est remboursé ; la livraison en Belgique prend cinq jours.\n",
    }
    docs = write_files(tmp_path / "docs", files)
    query, target = (
        "how long does delivery of a lost parcel take",
        "livraison@v1#delais-de-livraison",
    )
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=FakeEmbedder()) as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv").ok
        e = kb.explain(query, target, k=10, fusion=fusion, filters=Filters(as_of=date(2026, 6, 1)))
    html = templates.env.get_template("why.html").render(e=e.to_dict())
    assert str(escape(e.reading("lexical"))) in html
    assert "a low lexical score does not count against it" in html and "max(own " in html
    assert f"{escape(e.legend())}." in html and "the parts add up to the fused score" in html


def test_a_hit_names_its_source_file_and_an_undated_document_reads_undated(
    serve: Callable[..., Running], tmp_path: Path, keys_file: Path
) -> None:
    """The source file is shown as text (the server has no page for a file): the link beside
    it says it opens the passage's JSON. A document with no effective dates reads "undated",
    not "in force … to …"; the page asks the browser for no favicon (no 404 per page)."""
    docs = write_files(tmp_path / "docs", FILES)
    (docs / "inventory.csv").unlink()  # no inventory: no dates
    db = tmp_path / "kb.db"
    with kbsearch.open_kb(db, create=True, embedder=FakeEmbedder()) as kb:
        assert kb.index([docs], default_access="public").ok
    server = serve(db, keys=keys_file)
    with httpx.Client(base_url=server.url, timeout=30, headers=auth(PUBLIC_READ)) as client:
        response = client.get("/", params={"q": "lost parcel", "route": "lexical"})
    page = response.text
    assert response.status_code == 200, page[-800:]
    hit = page[page.index('class="hit"') :]
    hit = hit[: hit.index("</li>")]
    assert '<span class="source" title="source file">delivery.md</span>' in hit
    assert 'class="passage-link" href="/passages/' in hit and "passage (JSON)" in hit
    assert '<span class="dates">undated</span>' in hit and "in force" not in hit
    assert '<link rel="icon" href="data:,">' in page


@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"q": "parcel", "k": "3"}, "unknown parameter(s) k; this endpoint takes: as_of, lang,"),
        ({"q": "parcel", "rout": "lexical"}, "unknown parameter(s) rout;"),
        ([("q", "parcel"), ("q", "refund")], "parameter q given 2 times; it takes one value"),
    ],
)
def test_the_page_refuses_a_parameter_it_does_not_take_as_the_api_does(
    client: httpx.Client, params: dict[str, str] | list[tuple[str, str]], said: str
) -> None:
    """A misspelt or unsupported parameter was ignored silently (the search ran without it):
    the page answers the API's 422 with its message, shown on the page, and searches nothing."""
    page = client.get("/", params=params, headers=auth(PUBLIC_READ))
    assert page.status_code == 422, page.text
    assert "text/html" in page.headers["content-type"]
    assert str(escape(said)) in page.text and 'class="hit"' not in page.text
    assert 'name="q"' in page.text  # the form, to search again
    api = client.get("/search", params={"q": "parcel", "rout": "x"}, headers=auth(PUBLIC_READ))
    assert api.status_code == 422 and "unknown parameter(s) rout;" in api.json()["error"]
    why = client.get(
        "/ui/why",
        params={"q": "parcel", "passage_id": "x@v1#y", "k": "3"},
        headers=auth(PUBLIC_READ),
    )
    assert why.status_code == 422 and "unknown parameter(s) k;" in why.text
    fine = client.get("/", params={"q": "parcel", "route": "lexical", "offset": "0"},
                      headers=auth(PUBLIC_READ))  # fmt: skip
    assert fine.status_code == 200 and 'class="hit"' in fine.text
