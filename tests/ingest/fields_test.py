"""The rules of written ids and metadata (kbsearch.ingest.fields): what passes, what each
refusal says, and that a field not given is not checked."""

from __future__ import annotations

import re
from datetime import date

import pytest

from kbsearch.errors import InvalidArgumentError
from kbsearch.ingest.fields import check_fields


@pytest.mark.parametrize("doc_id", ["a", "guide/parking", "A1.b_c-d", "x" * 128, "1/2/3"])
def test_ids_a_folder_or_a_url_can_carry_pass(doc_id: str) -> None:
    check_fields(doc_id=doc_id, version="2.1", access="staff")


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"doc_id": "a/"}, "doc_id must be 1 to 128 letters"),
        ({"doc_id": "x" * 129}, "doc_id must be 1 to 128 letters"),
        ({"doc_id": "a\nb"}, "doc_id must be 1 to 128 letters"),
        ({"version": "1/2"}, "version must be 1 to 128 letters"),
        ({"access": "Public"}, "access must be public or staff, got 'Public'"),
        ({"texts": {"doc_type": "t" * 101}}, "doc_type is 101 characters long; at most 100"),
        ({"texts": {"title": "a\u2028b"}}, "title holds the control character U+2028"),
        (
            {"effective_from": date(2026, 2, 1), "effective_to": date(2026, 1, 1)},
            "effective_to is before effective_from",
        ),
    ],
)
def test_each_refusal_names_its_field(fields: dict[str, object], said: str) -> None:
    with pytest.raises(InvalidArgumentError, match=re.escape(said)):
        check_fields(**fields)  # type: ignore[arg-type]


def test_a_field_not_given_is_not_checked_and_texts_come_first() -> None:
    check_fields()
    check_fields(effective_from=date(2026, 2, 1))
    with pytest.raises(InvalidArgumentError, match="^title "):
        check_fields(doc_id="bad id", texts={"title": "\x00"})
