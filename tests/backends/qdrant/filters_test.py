"""``to_qdrant`` selects, in both Qdrant clients, exactly the passages ``to_mask`` selects."""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from qdrant_client import models

from kbsearch.backends.qdrant.collection import Collection
from kbsearch.backends.qdrant.filters import to_qdrant
from kbsearch.filters import FilterColumns, Filters, to_mask


def test_compiled_conditions_by_hand() -> None:
    f = to_qdrant(Filters(audience="public", as_of=date(2026, 1, 2), language="fr", doc_ids=("a",)))
    day = date(2026, 1, 2).toordinal()
    assert f.must == [
        models.FieldCondition(key="from_day", range=models.Range(lte=day)),
        models.FieldCondition(key="to_day", range=models.Range(gte=day)),
        models.FieldCondition(key="access", match=models.MatchValue(value="public")),
        models.FieldCondition(key="language", match=models.MatchValue(value="fr")),
        models.FieldCondition(key="doc_id", match=models.MatchAny(any=["a"])),
    ]
    staff = to_qdrant(Filters(audience="staff", as_of=date(2026, 1, 2)))
    assert isinstance(staff.must, list) and len(staff.must) == 2  # no access condition


def test_to_qdrant_selects_what_to_mask_selects(collection: Collection, corpus) -> None:
    points = corpus.points()
    collection.ensure(32)
    collection.upsert(points, corpus.lengths())
    rows = {p.passage_id: p.payload for p in points}
    ids = np.array(sorted(rows), dtype=object)

    def iso(day: int, open_value: int) -> str:
        return "" if day == open_value else date.fromordinal(day).isoformat()

    from kbsearch.backends.qdrant.points import OPEN_FROM, OPEN_TO

    columns = FilterColumns(
        np.array([rows[i]["access"] for i in ids], dtype=object),
        np.array([rows[i]["language"] for i in ids], dtype=object),
        np.array([rows[i]["doc_id"] for i in ids], dtype=object),
        np.array([iso(int(rows[i]["from_day"]), OPEN_FROM) for i in ids], dtype=object),  # type: ignore[call-overload]
        np.array([iso(int(rows[i]["to_day"]), OPEN_TO) for i in ids], dtype=object),  # type: ignore[call-overload]
    )
    bounds = sorted(
        {d for doc in corpus.documents for d in (doc.effective_from, doc.effective_to) if d}
    )
    boundary_days = [b + timedelta(days=s) for b in bounds for s in (-1, 0, 1)]
    doc_ids = sorted({d.doc_id for d in corpus.documents})
    filters = st.builds(
        Filters,
        audience=st.sampled_from(["public", "staff"]),
        as_of=st.one_of(
            st.sampled_from(boundary_days), st.dates(date(2024, 1, 1), date(2027, 12, 31))
        ),
        language=st.sampled_from([None, "en", "fr", "de"]),
        doc_ids=st.one_of(
            st.none(),
            st.lists(st.sampled_from(doc_ids), min_size=1, max_size=4, unique=True).map(tuple),
        ),
    )

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(filters)
    def check(f: Filters) -> None:
        expected = set(ids[to_mask(f, columns)])
        got = {p.passage_id for p in collection.points(to_qdrant(f))}
        assert got == expected

    check()
