"""One Filters value: validated when built, compiled to SQL and to masks that agree."""

from __future__ import annotations

import sqlite3
from datetime import date, datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kbsearch
from kbsearch import records
from kbsearch.errors import InvalidArgumentError
from kbsearch.filters import (
    Audience,
    FilterColumns,
    Filters,
    check_language,
    in_force,
    parse_day,
    to_mask,
    to_sql,
)


def test_filters_are_normalised_when_built() -> None:
    f = Filters(audience="staff", as_of="2026-04-01", language=" EN ", doc_ids="returns")
    assert f.audience is Audience.STAFF and f.staff
    assert f.as_of == date(2026, 4, 1) and f.language == "en" and f.doc_ids == ("returns",)
    assert Filters(audience="public") == Filters() and hash(Filters(audience="public")) == hash(
        Filters(audience=Audience.PUBLIC)
    )
    assert kbsearch.Filters is Filters and records.Filters is Filters


@pytest.mark.parametrize(
    "kwargs",
    [
        {"audience": "admin"},
        {"audience": None},
        {"as_of": "2026-02-30"},
        {"as_of": "01/04/2026"},
        {"as_of": ""},
        {"language": ""},
        {"language": 1},
        {"doc_ids": ()},
        {"doc_ids": ""},
        {"doc_ids": ["a", " "]},
        {"doc_ids": [1]},
    ],
)
def test_bad_filters_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidArgumentError):
        Filters(**kwargs)  # type: ignore[arg-type]


def test_one_date_parser() -> None:
    assert parse_day(None) is None
    assert parse_day("2026-01-31") == date(2026, 1, 31)
    assert parse_day(datetime(2026, 1, 31, 12)) == date(2026, 1, 31)
    with pytest.raises(InvalidArgumentError, match="no such day"):
        parse_day("2026-02-30")
    with pytest.raises(InvalidArgumentError, match="malformed"):
        parse_day("2026-2-3")


def test_in_force_bounds_are_inclusive_and_open() -> None:
    day = date(2026, 4, 1)
    assert in_force(None, None, day)
    assert in_force(day, day, day)
    assert not in_force(date(2026, 4, 2), None, day)
    assert not in_force(None, date(2026, 3, 31), day)


def test_unknown_language_lists_the_choices() -> None:
    with pytest.raises(InvalidArgumentError, match="'french'; this index holds en, fr"):
        check_language(Filters(language="french"), ["en", "fr"])
    check_language(Filters(language="EN"), ["en", "fr"])
    check_language(Filters(language="de"), [])  # an empty index has nothing to refuse


DAYS = st.one_of(st.none(), st.dates(date(2025, 1, 1), date(2026, 12, 31)))
ROWS = st.lists(
    st.tuples(
        st.sampled_from(["public", "staff"]),
        st.sampled_from(["en", "fr"]),
        st.sampled_from(["a", "b", "c"]),
        DAYS,
        DAYS,
    ),
    max_size=30,
)
FILTERS = st.builds(
    Filters,
    audience=st.sampled_from(["public", "staff"]),
    as_of=st.one_of(st.none(), st.dates(date(2024, 12, 1), date(2027, 1, 31))),
    language=st.sampled_from([None, "en", "fr", "de"]),
    doc_ids=st.one_of(st.none(), st.lists(st.sampled_from(["a", "b", "z"]), min_size=1)),
)


@settings(max_examples=300, deadline=None)
@given(rows=ROWS, filters=FILTERS)
def test_sql_and_mask_select_the_same_passages(rows: list, filters: Filters) -> None:
    con = sqlite3.connect(":memory:")
    con.execute(
        "CREATE TABLE passages (id INTEGER PRIMARY KEY, access TEXT, language TEXT,"
        " doc_id TEXT, effective_from TEXT, effective_to TEXT)"
    )
    iso = [(a, lang, d, s and s.isoformat(), e and e.isoformat()) for a, lang, d, s, e in rows]
    con.executemany(
        "INSERT INTO passages(access, language, doc_id, effective_from, effective_to)"
        " VALUES (?,?,?,?,?)",
        iso,
    )
    where, params = to_sql(filters, "p")
    chosen = {r[0] - 1 for r in con.execute(f"SELECT id FROM passages p WHERE {where}", params)}
    columns = FilterColumns(
        np.array([r[0] for r in rows], dtype=object),
        np.array([r[1] for r in rows], dtype=object),
        np.array([r[2] for r in rows], dtype=object),
        np.array([r[3] or "" for r in iso], dtype="U10"),
        np.array([r[4] or "" for r in iso], dtype="U10"),
    )
    mask = to_mask(filters, columns)
    assert set(np.flatnonzero(mask).tolist()) == chosen
    assert np.array_equal(columns.mask(filters), mask)
    expected = {
        i
        for i, (access, lang, doc, start, end) in enumerate(rows)
        if (filters.staff or access == "public")
        and in_force(start, end, filters.day)
        and filters.language in (None, lang)
        and (filters.doc_ids is None or doc in filters.doc_ids)
    }
    assert chosen == expected
