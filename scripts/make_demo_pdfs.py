"""Generate the demo help centre's PDFs from their sources kept in the repository.

Each ``*.yaml`` file in ``src/kbsearch/examples/helpcentre/pdf-sources/`` describes one PDF:

    output: name.pdf            # written next to the other demo documents
    title: Document title       # drawn at 20 pt bold (the only level-1 heading)
    subtitle: one line          # optional, 10 pt italic
    footer: text                # optional, drawn at 7.5 pt with the page number on every page
    blocks:                     # in reading order
      - heading: Section name   # drawn at 14 pt bold: a level-2 heading, one passage section
      - text: paragraph         # 10 pt regular
      - table: {header: [...], rows: [[...], ...], widths: [points, ...]}

Headings are larger and bold so that a size-based heading detector finds them; tables have ruled
grid lines and repeat their header row when they continue across a page break. The output is
byte-for-byte reproducible (reportlab's ``invariant`` mode fixes the dates and the document id), so
a test can regenerate a PDF and compare it with the committed file.

Usage: ``python scripts/make_demo_pdfs.py [--sources DIR] [--out DIR]``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import yaml
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Flowable, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

HELPCENTRE = Path(__file__).resolve().parents[1] / "src" / "kbsearch" / "examples" / "helpcentre"
DEFAULT_SOURCES = HELPCENTRE / "pdf-sources"

TITLE = ParagraphStyle("title", fontName="Helvetica-Bold", fontSize=20, leading=24, spaceAfter=4)
SUBTITLE = ParagraphStyle(
    "subtitle", fontName="Helvetica-Oblique", fontSize=10, leading=13, textColor=colors.grey
)
HEADING = ParagraphStyle(
    "heading", fontName="Helvetica-Bold", fontSize=14, leading=18, spaceBefore=12, spaceAfter=4
)
BODY = ParagraphStyle("body", fontName="Helvetica", fontSize=10, leading=13.5, spaceAfter=6)
CELL = ParagraphStyle("cell", fontName="Helvetica", fontSize=9, leading=11)
HEADER_CELL = ParagraphStyle("header_cell", parent=CELL, fontName="Helvetica-Bold")


class PdfSourceError(ValueError):
    """A PDF source file does not have the expected shape."""


@dataclass(frozen=True)
class PdfSource:
    """One parsed source file: output name, title, optional subtitle/footer, raw blocks."""

    output: str
    title: str
    subtitle: str
    footer: str
    blocks: tuple[dict[str, Any], ...]

    def headings(self) -> list[str]:
        """The section headings (level 2) in document order."""
        return [str(b["heading"]) for b in self.blocks if "heading" in b]


def load_source(path: Path) -> PdfSource:
    """Read and check one YAML source. Raises PdfSourceError on a malformed file."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not data.get("output") or not data.get("title"):
        raise PdfSourceError(f"{path}: needs 'output' and 'title'")
    blocks = data.get("blocks") or []
    for i, block in enumerate(blocks):
        if not isinstance(block, dict) or len(block) != 1:
            raise PdfSourceError(f"{path}: block {i} must have exactly one key")
        (key,) = block
        if key not in ("heading", "text", "table"):
            raise PdfSourceError(f"{path}: block {i} has unknown kind {key!r}")
        if key == "table":
            table = block["table"]
            width = len(table["header"])
            if any(len(row) != width for row in table["rows"]):
                raise PdfSourceError(f"{path}: block {i}: every row needs {width} cells")
    return PdfSource(
        output=str(data["output"]),
        title=str(data["title"]),
        subtitle=str(data.get("subtitle", "")),
        footer=str(data.get("footer", "")),
        blocks=tuple(blocks),
    )


def _table(spec: dict[str, Any]) -> Table:
    header = [Paragraph(escape(str(c)), HEADER_CELL) for c in spec["header"]]
    rows = [[Paragraph(escape(str(c)), CELL) for c in row] for row in spec["rows"]]
    table = Table([header, *rows], colWidths=spec.get("widths"), repeatRows=1, splitByRow=1)
    table.setStyle(
        TableStyle(
            [
                ("GRID", (0, 0), (-1, -1), 0.5, colors.black),
                ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#dfe9df")),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("TOPPADDING", (0, 0), (-1, -1), 3),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
            ]
        )
    )
    return table


def flowables(source: PdfSource) -> list[Flowable]:
    """The reportlab flowables for a source, in reading order."""
    story: list[Flowable] = [Paragraph(escape(source.title), TITLE)]
    if source.subtitle:
        story.append(Paragraph(escape(source.subtitle), SUBTITLE))
    story.append(Spacer(1, 6))
    for block in source.blocks:
        if "heading" in block:
            story.append(Paragraph(escape(str(block["heading"])), HEADING))
        elif "text" in block:
            story.append(Paragraph(escape(str(block["text"])), BODY))
        else:
            story.append(_table(block["table"]))
            story.append(Spacer(1, 6))
    return story


def build_pdf(source: PdfSource, out_path: Path) -> Path:
    """Write ``source`` as a reproducible A4 PDF at ``out_path`` and return the path."""

    def footer(canvas: Canvas, doc: SimpleDocTemplate) -> None:
        canvas.saveState()
        canvas.setFont("Helvetica", 7.5)
        canvas.drawString(20 * mm, 10 * mm, f"{source.footer} · page {doc.page}")
        canvas.restoreState()

    doc = SimpleDocTemplate(
        str(out_path),
        pagesize=A4,
        leftMargin=20 * mm,
        rightMargin=20 * mm,
        topMargin=18 * mm,
        bottomMargin=18 * mm,
        title=source.title,
        author="Fernbrook Home & Garden (fictional)",
        invariant=1,
    )
    doc.build(flowables(source), onFirstPage=footer, onLaterPages=footer)
    return out_path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sources", type=Path, default=DEFAULT_SOURCES)
    parser.add_argument("--out", type=Path, default=HELPCENTRE)
    args = parser.parse_args(argv)
    paths = sorted(args.sources.glob("*.yaml"))
    if not paths:
        parser.error(f"no *.yaml sources in {args.sources}")
    args.out.mkdir(parents=True, exist_ok=True)
    for path in paths:
        source = load_source(path)
        written = build_pdf(source, args.out / source.output)
        print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
