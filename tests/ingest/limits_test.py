"""Ingest limits (issue 22): declared once, enforced per format before the work they bound; a
hostile file (zip bomb, many pages, Flate bomb, too large) is refused with a message naming
the limit, whatever the memory it would have taken."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest
from hostile_files import docx_bomb, flate_bomb_pdf, many_pages_pdf

import kbsearch.ingest.pdf as pdf_module
from kbsearch.errors import IngestError, InvalidArgumentError, LimitExceededError
from kbsearch.ingest import parse_file
from kbsearch.ingest.limits import LIMITS, MIB, Budget, IngestLimits, byte_size, limit_names

MB = 1_000_000


# -- the declaration -----------------------------------------------------------------------------


def test_every_limit_is_declared_once_with_its_default() -> None:
    assert set(limit_names()) == {f.name for f in fields(IngestLimits)} - {"clock"}
    assert len(set(limit_names())) == len(LIMITS)
    defaults = IngestLimits()
    for limit in LIMITS:
        assert getattr(defaults, limit.name) == limit.default
        assert limit.help and limit.unit


def test_assignments_set_limits_and_bad_ones_are_refused() -> None:
    limits = IngestLimits().with_values(["max_pages=3", "max-seconds=2_000"])
    assert (limits.max_pages, limits.max_seconds) == (3, 2000)
    assert limits.max_passages == IngestLimits().max_passages
    for bad, match in [
        ("max_pagez=3", "max_pages"),
        ("max_pages", "NAME=VALUE"),
        ("max_pages=three", "positive integer"),
        ("max_pages=0", "positive integer"),
    ]:
        with pytest.raises(InvalidArgumentError, match=match):
            IngestLimits().with_values([bad])


def test_budget_counts_only_the_time_worked_on_its_document() -> None:
    now = [100.0]
    budget = Budget("doc.md", 10, lambda: now[0])
    with budget.timing():
        now[0] += 4
        budget.check("parse")  # 4 s
    now[0] += 50  # another document's turn: not charged
    budget.check("parse")
    budget.charge(5)
    budget.check("embed")  # 9 s
    with budget.timing():
        now[0] += 2
        with pytest.raises(LimitExceededError, match=r"doc.md: refused: .*over 10 s to embed"):
            budget.check("embed")


# -- file size ------------------------------------------------------------------------------------


def test_a_file_over_max_file_bytes_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_text("# Big\n\n" + "words " * 1000, encoding="utf-8")
    with pytest.raises(LimitExceededError, match=r"big.md: refused: .*\(max_file_bytes\)"):
        parse_file(path, limits=IngestLimits(max_file_bytes=1000))
    assert parse_file(path, limits=IngestLimits(max_file_bytes=10_000))[0].title == "Big"


@pytest.mark.parametrize(
    ("size", "limit", "said"),
    [
        # "0.0 MiB, over the limit of 0.0 MiB" said nothing
        (6_007, 1000, "the file is 6,007 bytes, over the limit of 1,000 bytes"),
        # rounded, a file just over the limit read as the limit: "64.0 MiB, over ... 64.0 MiB"
        (
            64 * MIB + 1,
            64 * MIB,
            "the file is 64.0 MiB (67,108,865 bytes), over the limit of 64 MiB",
        ),
    ],
)
def test_a_size_refusal_gives_both_sizes_in_mib_or_bytes(
    tmp_path: Path, size: int, limit: int, said: str
) -> None:
    path = tmp_path / "big.md"
    with path.open("wb") as fh:
        fh.truncate(size)  # sparse: the size is what is checked, before a byte is read
    with pytest.raises(LimitExceededError, match=re.escape(said) + r" \(max_file_bytes\)"):
        parse_file(path, limits=IngestLimits(max_file_bytes=limit))


def test_sizes_read_in_the_units_the_limits_are_computed_in() -> None:
    """1 MiB = 1024 x 1024 bytes, as every limit (ingest, upload, request body) is computed;
    no message says MB."""
    from kbsearch.ingest.limits import MAX_UPLOAD_BYTES
    from kbsearch.service.app import MAX_BODY_BYTES, MAX_UPLOAD_BODY_BYTES

    assert [byte_size(n) for n in (MAX_UPLOAD_BYTES, MAX_BODY_BYTES, MAX_UPLOAD_BODY_BYTES)] == [
        "20 MiB",
        "1 MiB",
        "21 MiB",
    ]
    assert byte_size(IngestLimits().max_uncompressed_bytes) == "128 MiB"
    assert byte_size(3 * MB) == "2.9 MiB (3,000,000 bytes)"


# -- .docx: zip members ---------------------------------------------------------------------------


def test_a_zip_bomb_docx_is_refused_by_its_uncompressed_size(tmp_path: Path) -> None:
    path = docx_bomb(tmp_path / "bomb.docx", expands_to=3 * MB)
    assert path.stat().st_size < 100_000  # small on disk
    with pytest.raises(LimitExceededError, match=r"bomb.docx: refused: .*max_uncompressed_bytes"):
        parse_file(path, limits=IngestLimits(max_uncompressed_bytes=2 * MB))
    # under a higher limit it is an ordinary document: the limit is what refused it
    assert parse_file(path, limits=IngestLimits(max_uncompressed_bytes=4 * MB))[0].title == (
        "Bomb policy"
    )


def test_the_bytes_actually_read_count_not_only_the_declared_sizes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A header that understates a member's size does not let it through (here every
    member's declared size reads 1 byte): zipfile stops at the declared size and its CRC check
    refuses the member, so at most the declared bytes are ever decompressed. (A guard: it
    holds on f261cf6 too.)"""
    import zipfile

    path = docx_bomb(tmp_path / "liar.docx", expands_to=3 * MB)
    real_infolist = zipfile.ZipFile.infolist

    def lying_infolist(self: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
        infos = real_infolist(self)
        for info in infos:
            info.file_size = 1
        return infos

    monkeypatch.setattr(zipfile.ZipFile, "infolist", lying_infolist)
    with pytest.raises(IngestError, match="liar.docx: corrupt or unreadable Word file"):
        parse_file(path, limits=IngestLimits(max_uncompressed_bytes=2 * MB))


def test_a_corrupt_docx_is_still_an_ingest_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.docx"
    path.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(IngestError, match="corrupt or unreadable Word file"):
        parse_file(path)


# -- PDF: pages and streams -----------------------------------------------------------------------


def _counting_pages(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    parsed: list[int] = []
    real = pdf_module._page_items

    def counting(page: object, number: int):  # type: ignore[no-untyped-def]
        parsed.append(number)
        return real(page, number)

    monkeypatch.setattr(pdf_module, "_page_items", counting)
    return parsed


def test_a_pdf_over_max_pages_is_refused_before_its_pages_are_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("reportlab")
    path = many_pages_pdf(tmp_path / "long.pdf", pages=30)
    parsed = _counting_pages(monkeypatch)
    with pytest.raises(LimitExceededError, match=r"long.pdf: refused: .*30 pages.*\(max_pages\)"):
        parse_file(path, limits=IngestLimits(max_pages=10))
    assert parsed == []
    assert len(parse_file(path, limits=IngestLimits(max_pages=30))[0].blocks) == 30


def test_a_page_tree_that_understates_its_count_is_still_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("reportlab")
    path = many_pages_pdf(tmp_path / "liar.pdf", pages=30)
    path.write_bytes(path.read_bytes().replace(b"/Count 30", b"/Count 3 "))
    parsed = _counting_pages(monkeypatch)
    with pytest.raises(LimitExceededError, match="max_pages"):
        parse_file(path, limits=IngestLimits(max_pages=10))
    assert parsed == []


def test_a_flate_bomb_pdf_is_refused_by_its_decoded_size(tmp_path: Path) -> None:
    path = flate_bomb_pdf(tmp_path / "bomb.pdf", expands_to=3 * MB)
    assert path.stat().st_size < 20_000
    with pytest.raises(LimitExceededError, match=r"bomb.pdf: refused: .*max_uncompressed_bytes"):
        parse_file(path, limits=IngestLimits(max_uncompressed_bytes=2 * MB))
    blocks = parse_file(path, limits=IngestLimits(max_uncompressed_bytes=4 * MB))[0].blocks
    assert [b.text for b in blocks] == ["Hello bomb"]


def _refused_over_five_seconds(path: Path) -> float:
    """Parse ``path`` under a 5 s budget with a clock that moves one second per reading;
    the refusal must name the file and the budget. Returns how often the clock was read."""
    now = [0.0]

    def clock() -> float:
        now[0] += 1
        return now[0]

    limits = IngestLimits(max_seconds=5, clock=clock)
    budget = limits.budget(path)
    refusal = rf"{re.escape(path.name)}: refused: .*over 5 s to parse"
    with pytest.raises(LimitExceededError, match=refusal), budget.timing():
        parse_file(path, limits=limits, budget=budget)
    return now[0]


def test_a_pdf_over_its_time_budget_stops_between_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An injected clock that moves one second per reading: parsing stops at the page where
    the document went over ``max_seconds``, not at the end of the file."""
    pytest.importorskip("reportlab")
    path = many_pages_pdf(tmp_path / "slow.pdf", pages=30)
    parsed = _counting_pages(monkeypatch)
    _refused_over_five_seconds(path)
    assert 0 < len(parsed) < 10


def test_a_docx_over_its_time_budget_stops_between_paragraphs(tmp_path: Path) -> None:
    """python-docx takes minutes over a huge ``document.xml``: the budget is looked at every
    few hundred paragraphs (a clock that moves one second per reading)."""
    import docx

    word = docx.Document()
    for n in range(2000):
        word.add_paragraph(f"Paragraph {n}: refunds take 30 days.")
    path = tmp_path / "long.docx"
    word.save(str(path))
    readings = _refused_over_five_seconds(path)
    assert readings < 20  # stopped early: a look per few hundred paragraphs, not per paragraph
    assert len(parse_file(path)[0].blocks) == 2000
