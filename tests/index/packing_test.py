"""Packing a section's text or table into pieces: sentence splits and table rendering (the
budgets themselves are tested through :func:`kbsearch.index.chunking.make_passages`)."""

from __future__ import annotations

from kbsearch.index.packing import render_table, split_sentences
from kbsearch.records import Table


def test_split_sentences_keeps_all_text() -> None:
    text = 'He said "stop." Then he left. Prix : 3 €.\nNew line'
    parts = split_sentences(text)
    assert [p for p, _ in parts] == ['He said "stop."', "Then he left.", "Prix : 3 €.", "New line"]
    assert "".join(j + p for p, j in parts) == text


def test_table_row_stays_on_one_line_under_its_header() -> None:
    table = Table(
        ("Part", "Code", "Notes"),
        (("Pump kit", "PK-2200-07", "fits the PW-2200 only"), ("Seal", "SE-100", "all models")),
    )
    assert render_table(table).split("\n") == [
        "Part | Code | Notes",
        "Pump kit | PK-2200-07 | fits the PW-2200 only",
        "Seal | SE-100 | all models",
    ]


def test_a_header_of_empty_cells_writes_no_line() -> None:
    # Markdown's key-value tables: `| | |` then `| --- | --- |` above the rows
    table = Table(("", ""), (("Help Command", "pihole uninstall"), ("Example Usage", "pihole -up")))
    assert render_table(table).split("\n") == [
        "Help Command | pihole uninstall",
        "Example Usage | pihole -up",
    ]
