"""The formats added for real documentation trees: MDX, reStructuredText, Word."""

from __future__ import annotations

from pathlib import Path

import docx
import pytest

from kbsearch.errors import IngestError
from kbsearch.ingest import SUPPORTED_SUFFIXES, parse_file
from kbsearch.records import Table

MDX = """---
title: Install guide
version: 2.10
---
import { Tabs, TabItem } from '@theme/Tabs';
export const meta = {
  sidebar: "docs",
};

## Linux

<Tabs groupId="os">
  <TabItem value="apt" label="Debian">
Run the installer as root.
  </TabItem>
</Tabs>

{/* hidden editor note */}
Version {props.version} is <Badge text="new" /> stable.

```js
import x from "y";
```
"""


def test_mdx_strips_jsx_and_keeps_the_markdown(tmp_path: Path) -> None:
    path = tmp_path / "install.mdx"
    path.write_text(MDX)
    doc = parse_file(path)[0]
    assert doc.title == "Install guide" and doc.metadata["version"] == "2.10"
    assert [(b.section, b.text) for b in doc.blocks] == [
        (("Linux",), "Run the installer as root."),
        (("Linux",), "Version is stable."),
        (("Linux",), 'import x from "y";'),
    ]


RST = """=============
Refund policy
=============

:version: 1.10
:owner: Ops

Intro text.

Eligibility
===========

Customers are eligible within 30 days.

* first item
* second item

+-------+------+
| Plan  | Days |
+=======+======+
| Basic | 30   |
+-------+------+

.. include:: /etc/passwd

.. raw:: html

   <b>raw</b>
"""


def test_rst_sections_lists_tables_and_fields(tmp_path: Path) -> None:
    path = tmp_path / "refunds.rst"
    path.write_text(RST)
    doc = parse_file(path)[0]
    assert doc.title == "Refund policy"
    assert doc.metadata == {"version": "1.10", "owner": "Ops"}
    assert [(b.section, b.text, b.table) for b in doc.blocks] == [
        ((), "Intro text.", None),
        (("Eligibility",), "Customers are eligible within 30 days.", None),
        (("Eligibility",), "first item", None),
        (("Eligibility",), "second item", None),
        (("Eligibility",), "", Table(("Plan", "Days"), (("Basic", "30"),))),
    ]


def test_an_rst_field_given_twice_with_two_values_is_refused(tmp_path: Path) -> None:
    """The last was kept: ``:access: staff`` then ``:access: public`` went public."""
    path = tmp_path / "guide.rst"
    fields = ":access: staff\n:Access: public\n"
    path.write_text(f"Guide\n=====\n\n{fields}\nSection\n-------\n\nText.\n")
    with pytest.raises(IngestError, match="'access' is given twice"):
        parse_file(path)
    path.write_text("Guide\n=====\n\n:access: staff\n:access: staff\n\nText.\n")
    assert parse_file(path)[0].metadata["access"] == "staff"


def test_docx_headings_paragraphs_and_tables(tmp_path: Path) -> None:
    word = docx.Document()
    word.add_paragraph("Refund policy", style="Title")
    word.add_heading("Eligibility", 1)
    word.add_paragraph("Customers are eligible within 30 days.")
    table = word.add_table(rows=2, cols=2)
    for (r, c), text in {(0, 0): "Plan", (0, 1): "Days", (1, 0): "Basic", (1, 1): "30"}.items():
        table.cell(r, c).text = text
    word.add_heading("Details", 3)
    word.add_paragraph("More.")
    path = tmp_path / "refunds.docx"
    word.save(str(path))
    doc = parse_file(path)[0]
    assert doc.title == "Refund policy"
    assert [(b.section, b.text, b.table) for b in doc.blocks] == [
        (("Eligibility",), "Customers are eligible within 30 days.", None),
        (("Eligibility",), "", Table(("Plan", "Days"), (("Basic", "30"),))),
        (("Eligibility", "Details"), "More.", None),
    ]


def test_corrupt_docx_is_ingest_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.docx"
    path.write_bytes(b"not a zip file")
    with pytest.raises(IngestError, match="corrupt or unreadable Word file"):
        parse_file(path)


def test_new_suffixes_are_supported() -> None:
    assert {".mdx", ".rst", ".docx"} <= set(SUPPORTED_SUFFIXES)
