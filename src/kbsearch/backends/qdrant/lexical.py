"""The lexical route on a Qdrant collection: the query terms as a sparse vector against
``bm25_public`` (public audience) or ``bm25`` (staff), BM25 with Qdrant's IDF
(:mod:`.sparse`); the point ids a search returns are named by ``names`` (SQLite's
:mod:`kbsearch.store.point_ids`, so no payload is read)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from qdrant_client import models

from ...filters import Audience, Filters
from ...retrieve.lexical.query_terms import QueryTerms
from .collection import Collection, Ranking
from .filters import to_qdrant
from .points import SPARSE_ALL, SPARSE_PUBLIC
from .sparse import query_vector

Names = Callable[[Sequence[str]], Mapping[str, str]]  # point ids -> {point id: passage id}


def lexical_candidates(
    collection: Collection, terms: QueryTerms, filters: Filters, depth: int, names: Names
) -> Ranking:
    """As the embedded backend: the top ``depth`` passages passing ``filters`` by the kept
    terms' BM25 (Qdrant's IDF), then, while fewer than ``depth``, the passages matched by the
    clamped terms only; ``(passage_id, score)`` best first.

    Raises:
        BackendUnavailableError: the engine failed.
    """
    using = SPARSE_ALL if filters.staff else SPARSE_PUBLIC
    where = to_qdrant(filters)
    found = collection.query(using, query_vector(terms.kept), where, depth, names=names)
    if len(found) < depth and terms.clamped:
        seen = {pid for pid, _ in found}
        more = collection.query(
            using, query_vector(terms.clamped), where, depth + len(seen), names=names
        )
        found += [(pid, score) for pid, score in more if pid not in seen][: depth - len(found)]
    return found


def lexical_scores(
    collection: Collection,
    terms: QueryTerms,
    audience: str,
    passage_ids: Sequence[str],
    names: Names,
) -> dict[str, float]:
    """``{passage_id: score}``: Qdrant's BM25 of the given passages, as
    :func:`lexical_candidates` scores them: the same sparse query restricted to these passage
    ids (a payload filter inside the query), the kept terms first, the clamped terms for a
    passage no kept term matches. A passage that no query term matches, or that ``audience``
    may not see, is left out.

    Raises:
        BackendUnavailableError: the engine failed.
    """
    wanted = list(dict.fromkeys(passage_ids))
    if not wanted:
        return {}
    staff = audience == Audience.STAFF
    visible: list[models.Condition] = []
    if not staff:
        visible.append(models.FieldCondition(key="access", match=models.MatchValue(value="public")))
    using = SPARSE_ALL if staff else SPARSE_PUBLIC
    scores: dict[str, float] = {}
    for group in (terms.kept, terms.clamped):
        missing = [pid for pid in wanted if pid not in scores]
        if not group or not missing:
            continue
        ids = models.FieldCondition(key="passage_id", match=models.MatchAny(any=missing))
        where = models.Filter(must=[*visible, ids])
        vector = query_vector(group)
        for pid, score in collection.query(using, vector, where, len(missing), names=names):
            scores.setdefault(pid, score)
    return scores
