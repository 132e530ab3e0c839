"""A search request: validated when built, a template replaced per question, the library's
keyword options one declaration with the request's fields."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from kbsearch.errors import InvalidArgumentError, OptionConflictError
from kbsearch.filters import Filters
from kbsearch.pipeline import SearchOptions, SearchRequest


def test_a_template_is_replaced_and_validated_again() -> None:
    template = SearchRequest("", depth=7, fusion="rrf", rrf_k=10)
    request = template.replace(query="lost parcel", k=3, filters=Filters(audience="staff"))
    assert (request.query, request.k, request.depth, request.rrf_k) == ("lost parcel", 3, 7, 10)
    assert request.fusion == template.fusion and template.query == ""
    with pytest.raises(InvalidArgumentError, match="k must be a whole number"):
        template.replace(k=0)
    with pytest.raises(OptionConflictError, match="applies to the hybrid route only"):
        template.replace(route="lexical")  # its fusion is not the default


def test_the_keyword_options_are_request_fields() -> None:
    fields = {f.name: f for f in dataclasses.fields(SearchRequest)}
    options = typing.get_type_hints(SearchOptions)
    assert set(options) <= set(fields)
    assert {"query", "route", "explain", "min_confidence"}.isdisjoint(options)
