"""Hostile files built on the fly (not a test module): a zip-bomb .docx, a many-page PDF and a
Flate-bomb PDF, each small on disk and over a lowered limit (issue 22)."""

from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path

import docx


def docx_bomb(path: Path, expands_to: int) -> Path:
    """A valid .docx ("Bomb policy", one paragraph) whose ``word/document.xml`` carries an XML
    comment of ``expands_to`` spaces: a few KB zipped."""
    word = docx.Document()
    word.add_paragraph("Bomb policy", style="Title")
    word.add_paragraph("Refunds within 30 days.")
    buffer = io.BytesIO()
    word.save(buffer)
    with (
        zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as src,
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out,
    ):
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "word/document.xml":
                data = data.replace(b"<w:body>", b"<w:body><!--" + b" " * expands_to + b"-->", 1)
            out.writestr(info.filename, data, compress_type=zipfile.ZIP_DEFLATED)
    return path


def many_pages_pdf(path: Path, pages: int) -> Path:
    """A PDF of ``pages`` pages, one line of text each (reportlab, as the PDF tests)."""
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path))
    for number in range(1, pages + 1):
        c.drawString(72, 720, f"Page {number} of the long manual: returns take 30 days.")
        c.showPage()
    c.save()
    return path


def flate_bomb_pdf(path: Path, expands_to: int) -> Path:
    """A one-page PDF whose content stream (``Hello bomb`` then ``expands_to`` spaces) is
    Flate-compressed to a few KB; written by hand with a correct cross-reference table."""
    content = b"BT /F1 12 Tf 72 720 Td (Hello bomb) Tj ET\n" + b" " * expands_to
    data = zlib.compress(content, 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.write_bytes(out)
    return path
