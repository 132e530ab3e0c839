"""Heading slugs: accents dropped, runs of other characters one hyphen."""

from __future__ import annotations

import pytest

from kbsearch.text.slugs import slugify


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Returns & Refunds", "returns-refunds"),
        ("Délais de remboursement", "delais-de-remboursement"),
        ("  --Über  straße_2-- ", "uber-straße-2"),
        ("***", ""),
    ],
)
def test_slugify(heading: str, slug: str) -> None:
    assert slugify(heading) == slug
