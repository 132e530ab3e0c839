"""PDF parser on PDFs generated with reportlab: headings from font size and weight, pages,
tables kept as rows, ligatures normalised, corrupt and text-less PDFs refused."""

from __future__ import annotations

import io
from pathlib import Path

import pdfplumber
import pytest

reportlab = pytest.importorskip("reportlab")

from reportlab.lib import colors  # noqa: E402
from reportlab.lib.pagesizes import A4  # noqa: E402
from reportlab.lib.styles import ParagraphStyle  # noqa: E402
from reportlab.pdfbase import pdfmetrics  # noqa: E402
from reportlab.pdfbase.ttfonts import TTFont  # noqa: E402
from reportlab.pdfgen import canvas  # noqa: E402
from reportlab.platypus import (  # noqa: E402
    PageBreak,
    Paragraph,
    SimpleDocTemplate,
    TableStyle,
)
from reportlab.platypus import Table as RLTable  # noqa: E402

from kbsearch.errors import IngestError  # noqa: E402
from kbsearch.ingest import parse_file  # noqa: E402
from kbsearch.records import Table  # noqa: E402

# Bitstream Vera ships inside reportlab and has a glyph for U+FB01 (the "fi" ligature).
FONT_DIR = Path(reportlab.__file__).parent / "fonts"
LIGATURE_FI = "\ufb01"


def _fonts() -> None:
    pdfmetrics.registerFont(TTFont("Vera", str(FONT_DIR / "Vera.ttf")))
    pdfmetrics.registerFont(TTFont("VeraBd", str(FONT_DIR / "VeraBd.ttf")))


@pytest.fixture(scope="module")
def manual_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _fonts()
    body = ParagraphStyle("body", fontName="Vera", fontSize=10, leading=13, spaceAfter=6)
    big = ParagraphStyle("big", fontName="Vera", fontSize=15, leading=19, spaceBefore=8)
    bold = ParagraphStyle("bold", fontName="VeraBd", fontSize=10, leading=13, spaceBefore=6)
    title = ParagraphStyle("title", fontName="VeraBd", fontSize=22, leading=26, spaceAfter=8)
    grid = TableStyle(
        [("GRID", (0, 0), (-1, -1), 0.5, colors.black), ("FONTNAME", (0, 0), (-1, -1), "Vera")]
    )
    rows = [
        ["Part", "Code", "Notes"],
        ["Pump kit", "PK-2200-07", "fits the PW-2200 only"],
        ["Seal", "SE-100", "all models"],
    ]
    story = [
        Paragraph("Pump manual", title),
        Paragraph("This manual covers the PW-2200 pump.", body),
        Paragraph("Spare parts", big),
        Paragraph(f"Replace the {LIGATURE_FI}lter every month.", body),
        RLTable(rows, style=grid),
        Paragraph("Order parts from the shop.", body),
        PageBreak(),
        Paragraph("Warranty terms", bold),
        Paragraph("The warranty lasts two years.", body),
    ]
    path = tmp_path_factory.mktemp("pdf") / "manual.pdf"
    SimpleDocTemplate(str(path), pagesize=A4).build(story)
    return path


@pytest.fixture(scope="module")
def manual(manual_pdf: Path):
    (doc,) = parse_file(manual_pdf)
    return doc


def test_fixture_really_contains_the_ligature(manual_pdf: Path) -> None:
    with pdfplumber.open(manual_pdf) as pdf:
        chars = "".join(c["text"] for c in pdf.pages[0].chars)
    assert LIGATURE_FI in chars


def test_ligature_normalised(manual) -> None:
    texts = [b.text for b in manual.blocks]
    assert "Replace the filter every month." in texts
    assert all(LIGATURE_FI not in t for t in texts)


def test_title_and_heading_from_font_size(manual) -> None:
    assert manual.title == "Pump manual"
    block = next(b for b in manual.blocks if b.text.startswith("Replace"))
    assert block.section == ("Spare parts",)
    assert manual.blocks[0].section == ()
    assert manual.blocks[0].text == "This manual covers the PW-2200 pump."


def test_bold_heading_and_pages(manual) -> None:
    last = manual.blocks[-1]
    assert last.text == "The warranty lasts two years."
    assert last.section == ("Warranty terms",)
    assert last.page == 2
    assert manual.blocks[0].page == 1


def test_table_rows_intact_and_not_repeated_as_text(manual) -> None:
    tables = [b for b in manual.blocks if b.table is not None]
    assert len(tables) == 1
    assert tables[0].table == Table(
        ("Part", "Code", "Notes"),
        (("Pump kit", "PK-2200-07", "fits the PW-2200 only"), ("Seal", "SE-100", "all models")),
    )
    assert tables[0].section == ("Spare parts",)
    assert all("PK-2200-07" not in b.text for b in manual.blocks)
    order = [b.text or "<table>" for b in manual.blocks if b.section == ("Spare parts",)]
    assert order == ["Replace the filter every month.", "<table>", "Order parts from the shop."]


def test_corrupt_pdf_is_ingest_error(tmp_path: Path, manual_pdf: Path) -> None:
    garbage = tmp_path / "garbage.pdf"
    garbage.write_bytes(b"this is not a PDF at all")
    with pytest.raises(IngestError, match="corrupt"):
        parse_file(garbage)
    truncated = tmp_path / "truncated.pdf"
    truncated.write_bytes(manual_pdf.read_bytes()[:1200])
    with pytest.raises(IngestError, match="truncated.pdf"):
        parse_file(truncated)


def test_pdf_without_text_is_ingest_error(tmp_path: Path) -> None:
    image = pytest.importorskip("PIL.Image")
    from reportlab.lib.utils import ImageReader

    png = io.BytesIO()
    image.new("RGB", (60, 20), "black").save(png, format="PNG")
    png.seek(0)
    path = tmp_path / "scan.pdf"
    page = canvas.Canvas(str(path), pagesize=A4)
    page.drawImage(ImageReader(png), 100, 500, width=300, height=100)
    page.rect(50, 50, 100, 100, fill=1)
    page.showPage()
    page.save()
    with pytest.raises(IngestError, match="no extractable text"):
        parse_file(path)
