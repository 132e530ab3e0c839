"""Batched writes, a failure half-way, verify and sync (on both Qdrant clients)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest

from kbsearch.backends.qdrant.collection import Collection
from kbsearch.backends.qdrant.mirror import (
    LENGTH_TOLERANCE,
    ExpectedPassage,
    stale_lengths,
    sync,
    verify,
    write_points,
)
from kbsearch.backends.qdrant.points import PassagePoint
from kbsearch.backends.qdrant.sparse import LengthStatistics
from kbsearch.errors import PartialWriteError


class FailingCollection:
    """Delegates to a real collection; the ``fail_on``-th upsert raises."""

    def __init__(self, inner: Collection, fail_on: int) -> None:
        self.inner, self.fail_on, self.upserts = inner, fail_on, 0

    def upsert(self, points: Sequence[PassagePoint], lengths: LengthStatistics) -> None:
        self.upserts += 1
        if self.upserts == self.fail_on:
            raise ConnectionError("injected: connection reset")
        self.inner.upsert(points, lengths)

    def __getattr__(self, name: str):  # everything else goes to the real collection
        return getattr(self.inner, name)


def expected(points: list[PassagePoint]) -> list[ExpectedPassage]:
    return [
        ExpectedPassage(
            p.passage_id,
            str(p.payload["doc_id"]),
            str(p.payload["version"]),
            str(p.payload["access"]),
            str(p.payload["text_hash"]),
        )
        for p in points
    ]


def loader(points: list[PassagePoint]):
    by_id = {p.passage_id: p for p in points}
    return lambda ids: [by_id[i] for i in ids]


def test_a_failure_half_way_is_reported_and_sync_repairs_it(collection: Collection, corpus) -> None:
    points = corpus.points()
    lengths = corpus.lengths()
    collection.ensure(32)
    flaky = FailingCollection(collection, fail_on=3)
    with pytest.raises(PartialWriteError, match=r"holds 8 of 30 points.*kbsearch sync"):
        write_points(flaky, points, lengths, batch_size=4)  # type: ignore[arg-type]
    assert collection.count() == 8
    report = verify(collection, expected(points), 32, lengths)
    assert not report.ok
    assert report.missing == sorted(p.passage_id for p in points[8:])
    assert "drift found" in report.lines()[-1]
    repaired = sync(collection, report, loader(points), lengths, batch_size=4)
    assert repaired == len(points) - 8
    after = verify(collection, expected(points), 32, lengths)
    assert after.ok and after.points == len(points) == after.expected
    assert after.lines()[-1] == "in sync"


def test_verify_finds_extra_mismatched_wrong_dimension_and_stale_points(
    collection: Collection, corpus
) -> None:
    points = corpus.points()
    lengths = corpus.lengths()
    collection.ensure(32)
    write_points(collection, points, lengths)
    want = expected(points)
    gone = want.pop()  # SQLite deleted it; Qdrant still holds it
    want[0] = replace(want[0], version="9")
    report = verify(collection, want, 32, lengths)
    assert report.extra == [gone.passage_id]
    assert report.mismatched == [want[0].passage_id]
    assert not report.missing and not report.stale_lengths
    grown = LengthStatistics(lengths.avgdl_all * 1.2, lengths.avgdl_public)
    stale = verify(collection, want, 32, grown)
    assert len(stale.stale_lengths) == len(want) - 1  # all but the mismatched one
    sync(collection, stale, loader(points), grown)
    # the loader gives the passage's real version, so only the invented version 9 still differs
    assert verify(collection, want, 32, grown).to_rewrite == [want[0].passage_id]


def test_wrong_dimension_is_reported(collection: Collection, corpus) -> None:
    points = corpus.points()
    collection.ensure(32)
    write_points(collection, points, corpus.lengths())
    report = verify(collection, expected(points), 16, corpus.lengths())
    assert len(report.wrong_dimension) == len(points)


def test_stale_points_of_a_rewritten_version_go(collection: Collection, corpus) -> None:
    points = corpus.points()
    collection.ensure(32)
    write_points(collection, points, corpus.lengths())
    doc = next(d for d in corpus.documents if len(corpus.passages[corpus.key(d)]) > 1)
    mine = [
        p
        for p in points
        if p.payload["doc_id"] == doc.doc_id and p.payload["version"] == doc.version
    ]
    write_points(collection, mine[:1], corpus.lengths(), stale=(doc.doc_id, doc.version))
    assert collection.count() == len(points) - len(mine) + 1
    assert np.isfinite(corpus.lengths().avgdl_all)


@pytest.mark.parametrize(
    ("all_factor", "public_factor"),
    [(1.0, 1.0), (1.04, 0.97), (1.2, 1.0), (0.8, 1.0), (1.0, 1.2), (1.0, 0.7), (1.3, 0.6)],
)
def test_the_stale_lengths_filter_finds_what_verify_flags(
    collection: Collection, corpus, all_factor: float, public_factor: float
) -> None:
    """The payload filter a delete's re-weighting uses selects exactly the points verify calls
    stale: none within the tolerance, every point when the overall average moved, the public
    points only when only the public average did (a staff point has no public vector)."""
    points = corpus.points()
    lengths = corpus.lengths()
    collection.ensure(32)
    write_points(collection, points[:10], lengths)
    moved = LengthStatistics(lengths.avgdl_all * 1.5, lengths.avgdl_public * 1.5)
    write_points(collection, points[10:], moved)  # points written at two averages
    now = LengthStatistics(lengths.avgdl_all * all_factor, lengths.avgdl_public * public_factor)
    flagged = verify(collection, expected(points), 32, now).stale_lengths
    found = sorted(p.passage_id for p in collection.points(stale_lengths(now)))
    assert found == flagged
    public = {p.passage_id for p in points if p.public}
    first = {p.passage_id for p in points[:10]}
    if max(abs(all_factor - 1), abs(public_factor - 1)) <= LENGTH_TOLERANCE:
        assert first.isdisjoint(found)
    elif all_factor == 1.0:
        assert first & set(found) == first & public != set()
