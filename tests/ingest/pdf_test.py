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


def _footer(canv: canvas.Canvas, doc: SimpleDocTemplate) -> None:
    canv.setFont("Vera", 8)
    canv.drawString(72, 30, f"Acme Tools · Parts list 2026 · page {doc.page}")


def _parts_pdf(path: Path, *, repeat_header: bool, second: list[list[str]] | None = None) -> Path:
    """Two A4 pages with a running footer; a 60-row ruled table runs across the page break
    (header repeated on page 2 when ``repeat_header``), or, with ``second``, page 1 ends with a
    short table and page 2 starts with the table ``second``."""
    _fonts()
    body = ParagraphStyle("body", fontName="Vera", fontSize=10, leading=13, spaceAfter=6)
    big = ParagraphStyle("big", fontName="Vera", fontSize=15, leading=19, spaceBefore=8)
    grid = TableStyle(
        [
            ("GRID", (0, 0), (-1, -1), 0.5, colors.black),
            ("FONTNAME", (0, 0), (-1, -1), "Vera"),
            ("FONTNAME", (0, 0), (-1, 0), "VeraBd"),
        ]
    )
    header = ["Code", "Part", "Price"]
    title = ParagraphStyle("title", fontName="VeraBd", fontSize=22, leading=26, spaceAfter=8)
    story: list = [
        Paragraph("Parts list", title),
        Paragraph("Pump parts", big),
        Paragraph("All parts fit the PW range.", body),
    ]
    if second is None:
        rows = [header] + [[f"P-{n:03d}", f"Part number {n}", f"£{n}.99"] for n in range(60)]
        story.append(RLTable(rows, style=grid, repeatRows=1 if repeat_header else 0))
    else:
        story += [RLTable([header, ["P-001", "Seal", "£1.99"]], style=grid), PageBreak()]
        story.append(RLTable(second, style=grid))
    story.append(Paragraph("Prices include VAT.", body))
    SimpleDocTemplate(str(path), pagesize=A4).build(
        story, onFirstPage=_footer, onLaterPages=_footer
    )
    return path


def _tables(doc) -> list[Table]:
    return [b.table for b in doc.blocks if b.table is not None]


@pytest.mark.parametrize("repeat_header", [True, False])
def test_table_across_page_break_is_one_table(tmp_path: Path, repeat_header: bool) -> None:
    path = _parts_pdf(tmp_path / "parts.pdf", repeat_header=repeat_header)
    with pdfplumber.open(path) as pdf:
        assert len(pdf.pages) == 2
        assert len(pdf.pages[1].find_tables()) == 1  # the fixture really splits the table
    (doc,) = parse_file(path)
    (table,) = _tables(doc)
    assert table.header == ("Code", "Part", "Price")
    assert [r[0] for r in table.rows] == [f"P-{n:03d}" for n in range(60)]
    block = next(b for b in doc.blocks if b.table is not None)
    assert block.page == 1
    assert block.section == ("Pump parts",)
    assert doc.blocks[-1].text == "Prices include VAT."
    assert doc.blocks[-1].page == 2


def test_running_footer_is_not_body_text(tmp_path: Path) -> None:
    path = _parts_pdf(tmp_path / "parts.pdf", repeat_header=True)
    with pdfplumber.open(path) as pdf:
        assert all("Parts list 2026" in page.extract_text() for page in pdf.pages)
    (doc,) = parse_file(path)
    assert doc.title == "Parts list"
    texts = [b.text for b in doc.blocks]
    assert all("Parts list" not in t and "Acme" not in t for t in texts)
    assert texts == ["All parts fit the PW range.", "", "Prices include VAT."]


def test_new_table_after_page_break_is_not_merged(tmp_path: Path) -> None:
    other = [["Model", "Motor", "Year"], ["PW-1800", "1.8 kW", "2024"]]
    path = _parts_pdf(tmp_path / "two.pdf", repeat_header=False, second=other)
    (doc,) = parse_file(path)
    assert _tables(doc) == [
        Table(("Code", "Part", "Price"), (("P-001", "Seal", "£1.99"),)),
        Table(("Model", "Motor", "Year"), (("PW-1800", "1.8 kW", "2024"),)),
    ]
    assert all("Acme" not in b.text for b in doc.blocks)


def test_line_end_hyphenation_undone_real_hyphens_kept(tmp_path: Path) -> None:
    path = tmp_path / "hyphen.pdf"
    canv = canvas.Canvas(str(path), pagesize=A4)
    lines = [
        "Applicants must prove their eligi-",
        "bility before they sign a fixed-",
        "term contract; a fixed-term contract",
        "ends on its date.",
    ]
    for i, line in enumerate(lines):
        canv.drawString(72, 700 - 14 * i, line)
    canv.save()
    text = " ".join(b.text for b in parse_file(path)[0].blocks)
    assert text == (
        "Applicants must prove their eligibility before they sign a fixed-term contract; "
        "a fixed-term contract ends on its date."
    )


def test_encrypted_pdf_is_reported_as_encrypted(tmp_path: Path) -> None:
    from reportlab.lib import pdfencrypt

    path = tmp_path / "locked.pdf"
    canv = canvas.Canvas(str(path), encrypt=pdfencrypt.StandardEncryption("secret"))
    canv.drawString(72, 700, "Secret words.")
    canv.save()
    with pytest.raises(IngestError, match="encrypted") as info:
        parse_file(path)
    assert "corrupt" not in str(info.value)
