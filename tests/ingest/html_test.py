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
