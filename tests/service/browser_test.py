"""The search page in a real headless Chromium (Debian's ``chromium``, driven by the
``playwright`` package; ``.ci/run`` installs it): type a query, see results, open a "why",
change the as-of date and see the other version. A screenshot is kept in the test's tmp dir."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"

pytestmark = pytest.mark.browser


@pytest.fixture
def chromium() -> str:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium package")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium); CI installs it")
    return CHROMIUM


@contextmanager
def new_page(chromium: str) -> Iterator[Any]:
    """A page of a headless Chromium, closed on leaving."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            yield browser.new_page()
        finally:
            browser.close()


def test_search_why_and_as_of_in_a_browser(
    chromium: str, serve: Any, kb_file: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    server = serve(kb_file)
    shots = tmp_path / "screenshots"
    shots.mkdir()
    with new_page(chromium) as page:
        page.goto(server.url + "/")
        page.get_by_label("Question").fill("return unused items")
        page.keyboard.press("Enter")
        first = page.locator("li.hit").first
        expect(first.locator("h2.title")).to_contain_text("Returns policy")
        expect(first.locator(".version")).to_have_text("version 2")
        expect(first.locator(".snippet")).to_contain_text("45 days")
        expect(first.locator(".snippet mark").first).to_have_text("Return")
        expect(first.locator(".dates")).to_contain_text("2026-04-01")

        # "why" by keyboard: focus the fold's summary, Enter opens it, the table loads
        first.locator("details.why summary").focus()
        page.keyboard.press("Enter")
        why = first.locator(".why-body")
        expect(why).to_contain_text("lexical (BM25)")
        expect(why).to_contain_text("BM25 terms")
        page.screenshot(path=shots / "search-why.png", full_page=True)

        page.get_by_label("As of").fill("2025-06-01")
        page.get_by_role("button", name="Search").click()
        first = page.locator("li.hit").first
        expect(first.locator(".version")).to_have_text("version 1")
        expect(first.locator(".snippet")).to_contain_text("30 days")
        expect(first.locator(".dates")).to_contain_text("2026-03-31")
        page.screenshot(path=shots / "search-as-of.png", full_page=True)
    for name in ("search-why.png", "search-as-of.png"):
        assert (shots / name).stat().st_size > 1000
    keep = os.environ.get("KBSEARCH_ARTIFACTS")
    if keep:  # CI may collect the screenshots
        shutil.copytree(shots, Path(keep) / "screenshots", dirs_exist_ok=True)


def test_api_docs_render_with_no_other_host(chromium: str, serve: Any, kb_file: Path) -> None:
    """Swagger UI draws the API from this server's files alone: every request to another host
    is refused (as offline) and recorded."""
    from playwright.sync_api import Route, expect

    server = serve(kb_file)
    elsewhere: list[str] = []

    def only_this_server(route: Route) -> None:
        if route.request.url.startswith(server.url + "/"):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    with new_page(chromium) as page:
        page.route("**/*", only_this_server)
        page.goto(server.url + "/docs")
        path = page.locator(".opblock-summary-path").filter(has_text="/search").first
        expect(path).to_be_visible()  # one block per operation, drawn from /openapi.json
    assert elsewhere == []
