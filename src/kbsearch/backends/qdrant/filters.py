"""The search filters compiled to a Qdrant payload filter (the third compiler, beside
``to_sql`` and ``to_mask``; a property test holds it to ``to_mask``'s selection).

Every condition is on an indexed payload field (:data:`.points.PAYLOAD_INDEXES`):

- public audience: ``access == "public"``;
- in force on day ``d`` (``as_of``, else today): ``from_day <= d`` and ``d <= to_day`` (open
  bounds are stored as the int32 extremes, so no null test is needed);
- ``language == L``; ``doc_id`` in the listed ids.

The filter goes inside each route's query (Qdrant applies it while searching, before the top
k), never after.
"""

from __future__ import annotations

from qdrant_client import models

from ...filters import Filters


def to_qdrant(filters: Filters) -> models.Filter:
    """A ``models.Filter`` (qdrant-client's REST model) selecting the passages that pass
    ``filters`` (module docstring)."""
    day = filters.day.toordinal()
    must: list[models.Condition] = [
        models.FieldCondition(key="from_day", range=models.Range(lte=day)),
        models.FieldCondition(key="to_day", range=models.Range(gte=day)),
    ]
    if not filters.staff:
        must.append(models.FieldCondition(key="access", match=models.MatchValue(value="public")))
    if filters.language:
        must.append(
            models.FieldCondition(key="language", match=models.MatchValue(value=filters.language))
        )
    if filters.doc_ids is not None:
        must.append(
            models.FieldCondition(key="doc_id", match=models.MatchAny(any=list(filters.doc_ids)))
        )
    return models.Filter(must=must)
