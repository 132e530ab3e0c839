"""HTML parser: main content only, no glued blocks, entities decoded, tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import FIXTURES_ROOT

from kbsearch.ingest import parse_file
from kbsearch.records import Table

FIXTURES = FIXTURES_ROOT / "ingest"


@pytest.fixture(scope="module")
def page():
    (doc,) = parse_file(FIXTURES / "page.html")
    return doc


def _all_text(doc) -> str:
    parts = [doc.title or ""]
    for b in doc.blocks:
        parts.append(b.text)
        parts.append(" ".join(b.section))
        if b.table is not None:
            parts.extend(" ".join(row) for row in (b.table.header, *b.table.rows))
    return "\n".join(parts)


def test_title_from_h1(page) -> None:
    assert page.title == "Returns policy"


@pytest.mark.parametrize(
    "secret",
    [
        "scriptsecret",
        "inlinescriptsecret",
        "stylesecret",
        "noscriptsecret",
        "Navsecret",
        "headersecret",
        "footersecret",
        "asidesecret",
        "formsecret",
        "Was this helpful",
    ],
)
def test_chrome_and_scripts_not_indexed(page, secret: str) -> None:
    assert secret not in _all_text(page)


def test_list_items_and_divs_not_glued(page) -> None:
    texts = [b.text for b in page.blocks]
    assert "Pack the item" in texts and "Print the label" in texts
    assert "First div" in texts and "Second div" in texts
    assert "itemPrint" not in _all_text(page)


def test_entities_decoded(page) -> None:
    assert page.blocks[0].text == "Returns are free for 30 days & more. Café items <excluded>."
    assert page.blocks[0].section == ()


def test_sections_at_h2_and_table(page) -> None:
    assert [b.section for b in page.blocks][1:3] == [("How to return",), ("How to return",)]
    tables = [b for b in page.blocks if b.table is not None]
    assert len(tables) == 1
    assert tables[0].section == ("Refund table",)
    assert tables[0].table == Table(
        ("Item", "Refund"), (("Kettle", "Full refund"), ("Gift card", "No refund"))
    )


def test_body_without_main_and_title_tag(tmp_path: Path) -> None:
    path = tmp_path / "p.htm"
    path.write_text(
        "<html><head><title>Fallback title</title></head><body>"
        "<nav>menu</nav><p>one<br>two</p><table><tr><td>a</td><td>b</td></tr>"
        "<tr><td>c</td><td>d</td></tr></table></body></html>",
        encoding="utf-8",
    )
    (doc,) = parse_file(path)
    assert doc.title == "Fallback title"
    assert doc.blocks[0].text == "one two"
    assert doc.blocks[1].table == Table(("a", "b"), (("c", "d"),))
    assert "menu" not in _all_text(doc)


def test_layout_table_read_as_text(tmp_path: Path) -> None:
    path = tmp_path / "old.html"
    path.write_text(
        "<html><body><table><tr><td><h1>Old page</h1><h2>Delivery</h2>"
        "<p>Parcels arrive in 3 days.</p></td></tr></table></body></html>",
        encoding="utf-8",
    )
    (doc,) = parse_file(path)
    assert doc.title == "Old page"
    assert [(b.section, b.text, b.table) for b in doc.blocks] == [
        (("Delivery",), "Parcels arrive in 3 days.", None)
    ]


ACCORDION = """<main><h1>Cards FAQ</h1>
<div class="accordion" id="faq">
  <div class="accordion-item">
    <h2 class="accordion-header">
      <button class="accordion-button" type="button" data-bs-toggle="collapse"
              aria-expanded="true">How do I freeze a lost card?</button>
    </h2>
    <div class="accordion-collapse collapse show">
      <div class="accordion-body">Open the app and tap Freeze.</div>
    </div>
  </div>
</div>
<details><summary>Can I unfreeze it?</summary><p>Yes, tap Unfreeze.</p></details>
<p>Share this page <button type="button">Copy link</button></p>
</main>"""


def test_accordion_questions_in_buttons_and_summary_are_content(tmp_path: Path) -> None:
    path = tmp_path / "faq.html"
    path.write_text(ACCORDION)
    doc = parse_file(path)[0]
    assert [(b.section, b.text) for b in doc.blocks] == [
        (("How do I freeze a lost card?",), "Open the app and tap Freeze."),
        (("How do I freeze a lost card?",), "Can I unfreeze it?"),
        (("How do I freeze a lost card?",), "Yes, tap Unfreeze."),
        (("How do I freeze a lost card?",), "Share this page"),
    ]


# issue 22 (snacktory#57): a FAQ page of sibling <article> blocks kept only the first
FAQ = """<html><head><title>FAQ</title></head><body>
<nav><a href="/">Home</a></nav>
<h1>Delivery FAQ</h1>
<article class="faq"><h3>How long does delivery take?</h3><p>Parcels arrive in 3 days.</p>
</article>
<article class="faq"><h3>Can I change my address?</h3><p>Yes, until the parcel ships.</p>
</article>
<article class="faq"><h3>Do you ship abroad?</h3><p>We ship to 12 countries.</p></article>
<aside><article class="teaser"><h3>Our blog</h3><p>teasersecret</p></article></aside>
</body></html>"""


def test_sibling_articles_give_one_section_each(tmp_path: Path) -> None:
    path = tmp_path / "faq.html"
    path.write_text(FAQ, encoding="utf-8")
    (doc,) = parse_file(path)
    assert doc.title == "Delivery FAQ"
    assert [(b.section, b.text) for b in doc.blocks] == [
        (("How long does delivery take?",), "Parcels arrive in 3 days."),
        (("Can I change my address?",), "Yes, until the parcel ships."),
        (("Do you ship abroad?",), "We ship to 12 countries."),
    ]
    assert "teasersecret" not in _all_text(doc)  # an article inside an aside is chrome


def test_sibling_articles_are_passages_of_their_own(tmp_path: Path) -> None:
    import kbsearch

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "faq.html").write_text(FAQ, encoding="utf-8")
    kb = kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none")
    assert kb.index([tmp_path / "docs"], default_access="public").ok
    passages = kb.document_passages("faq", audience="public")
    assert [p.section for p in passages] == [
        "How long does delivery take?",
        "Can I change my address?",
        "Do you ship abroad?",
    ]


def test_articles_left_outside_the_main_content_are_a_warning(tmp_path: Path) -> None:
    import kbsearch

    page = (
        "<html><body><main><h1>Returns</h1><h2>Window</h2><p>30 days.</p></main>"
        "<article><h2>Exchanges</h2><p>Exchanges are free.</p></article></body></html>"
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "returns.html").write_text(page, encoding="utf-8")
    kb = kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none")
    report = kb.index([tmp_path / "docs"], default_access="public")
    assert report.ok
    (warning,) = [reason for source, reason in report.warnings if source.endswith("returns.html")]
    assert "1 <article>" in warning and "outside <main>" in warning


# help-centre pages (Zendesk, Freshdesk, Help Scout...): the vote and related-articles blocks
# are page furniture, found by their class, role or heading, not indexed
HELP_CENTRE = """<html><body><main>
<h1>Reset your password</h1>
<h2>Steps</h2><p>Open Settings and choose Reset.</p>
<div class="article-votes"><span class="article-votes-question">Was this article
helpful?</span><span>12 out of 15 found this helpful</span></div>
<section class="related-articles"><h3>Related articles</h3>
<ul><li><a href="/a">Change your email relatedsecret</a></li></ul></section>
<div id="article-feedback"><p>Have more questions? feedbacksecret</p></div>
<div role="complementary"><p>complementarysecret</p></div>
<section><h3>Articles associés</h3><ul><li>Changer son e-mail frenchsecret</li></ul></section>
<div class="article-footer"><p>Cet article vous a-t-il été utile ?</p>
<p>usefulsecret</p></div>
<h2>Related settings</h2><p>Two-factor login is under Security.</p>
</main></body></html>"""


@pytest.mark.parametrize(
    "secret",
    ["helpful", "relatedsecret", "feedbacksecret", "complementarysecret", "frenchsecret",
     "usefulsecret", "Related articles", "Articles associés"],
)  # fmt: skip
def test_help_centre_vote_and_related_blocks_are_not_indexed(tmp_path: Path, secret: str) -> None:
    path = tmp_path / "help.html"
    path.write_text(HELP_CENTRE, encoding="utf-8")
    (doc,) = parse_file(path)
    assert secret not in _all_text(doc)
    assert [(b.section, b.text) for b in doc.blocks] == [
        (("Steps",), "Open Settings and choose Reset."),
        (("Related settings",), "Two-factor login is under Security."),
    ]


def test_a_pages_meta_tags_give_its_access_and_version_as_front_matter_does(
    tmp_path: Path,
) -> None:
    """``<meta name="access" content="staff">`` makes an HTML page staff-only whatever
    --default-access (it was ignored, and the page went public); other meta tags are not
    read."""
    import kbsearch

    page = tmp_path / "docs" / "agent-guide.html"
    page.parent.mkdir()
    page.write_text(
        '<html><head><meta name="access" content="staff">'
        '<meta name="kbsearch:version" content="2"><meta name="description" content="x">'
        '<meta name="language" content="English"></head>'
        "<body><h1>Agent guide</h1><p>Give a goodwill credit of 10 pounds.</p></body></html>",
        encoding="utf-8",
    )
    (parsed,) = parse_file(page)
    assert dict(parsed.metadata) == {"access": "staff", "version": "2"}
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        assert kb.index([page.parent], default_access="public").ok
        (stored,) = kb.documents()
        assert (stored.document.access, stored.document.version) == ("staff", "2")
        assert kb.search("goodwill credit", route="lexical") == []
        assert kb.search(
            "goodwill credit", route="lexical", filters=kbsearch.Filters(audience="staff")
        )


@pytest.mark.parametrize(
    "tags",
    [
        '<meta name="access" content="public"><meta name="access" content="staff">',
        '<meta name="access" content="public"><meta name="kbsearch:access" content="staff">',
        '<meta name="version" content="2"><meta name="Version" content="3">',
    ],
)
def test_a_meta_field_given_twice_with_two_contents_is_refused(tmp_path: Path, tags: str) -> None:
    """The first tag won: a page saying ``access`` public, then staff, went public."""
    import kbsearch
    from kbsearch.errors import IngestError

    page = _guide(tmp_path / "docs", tags)
    with pytest.raises(IngestError, match="is given twice"):
        parse_file(page)
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        report = kb.index([page.parent], default_access="public")
        assert [source for source, _ in report.failed] == [str(page)]
        assert kb.search("goodwill credit", route="lexical") == []


def _guide(folder: Path, head: str) -> Path:
    """``folder/guide.html`` with ``head`` and a line of text."""
    folder.mkdir(exist_ok=True)
    page = folder / "guide.html"
    page.write_text(
        f"<html><head>{head}</head><body><h1>Guide</h1><p>Goodwill credit.</p></body></html>",
        encoding="utf-8",
    )
    return page


def test_a_meta_field_repeated_with_its_content_is_read(tmp_path: Path) -> None:
    tags = '<meta name="access" content="staff"><meta name="kbsearch:access" content=" staff">'
    (parsed,) = parse_file(_guide(tmp_path, tags))
    assert dict(parsed.metadata) == {"access": "staff"}


def test_a_meta_property_gives_a_field_as_a_meta_name_does(tmp_path: Path) -> None:
    """RDFa's ``property=`` (Open Graph's form) was not read: the page took --default-access."""
    tags = '<meta property="kbsearch:access" content="staff"><meta property="og:type" content="x">'
    (parsed,) = parse_file(_guide(tmp_path, tags))
    assert dict(parsed.metadata) == {"access": "staff"}
