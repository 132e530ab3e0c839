"""Keeping a Qdrant collection equal to the system of record (the SQLite file).

Writes go to SQLite first, then here: :func:`write_points` sends a document's points in batches
(each applied before the next is sent) and removes the points its previous passages left
behind. A failure half-way raises :class:`kbsearch.errors.PartialWriteError` saying how many
points reached Qdrant; SQLite already holds the new version, and :func:`sync` repairs the
collection.

:func:`verify` compares the collection with what SQLite says it should hold: point ids,
document versions, dense dimension, and the length statistics each point's sparse values were
computed with (stale beyond :data:`LENGTH_TOLERANCE` once the corpus has grown or shrunk).
:func:`sync` deletes the extra points and re-writes the missing, mismatched and stale ones.
After deletes only, :func:`reweigh` re-writes the points whose length statistics the deleted
passages put out of date, found by a payload filter (:func:`stale_lengths`), not by reading
every point.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from qdrant_client import models

from ...errors import PartialWriteError, shown_value
from .collection import Collection, engine_errors, engine_message
from .points import PassagePoint
from .sparse import LengthStatistics

BATCH_SIZE = 256
LENGTH_TOLERANCE = 0.05  # relative drift of avgdl tolerated before sparse values are re-written


@dataclass(frozen=True)
class ExpectedPassage:
    """What SQLite says one point should be."""

    passage_id: str
    doc_id: str
    version: str
    access: str
    text_hash: str


def write_points(
    collection: Collection,
    points: Sequence[PassagePoint],
    lengths: LengthStatistics,
    batch_size: int = BATCH_SIZE,
    stale: tuple[str, str] | None = None,
) -> None:
    """Write ``points`` in batches of ``batch_size``, then (when ``stale`` names a
    ``(doc_id, version)``) delete that version's points not among ``points``.

    Raises:
        PartialWriteError: a batch failed; the message says how many points were written.
    """
    done = 0
    try:
        for start in range(0, len(points), batch_size):
            batch = points[start : start + batch_size]
            collection.upsert(batch, lengths)
            done += len(batch)
        if stale is not None:
            collection.delete_stale(stale[0], stale[1], [p.passage_id for p in points])
    except PartialWriteError:
        raise
    except Exception as exc:  # any client or engine failure: report how far it got
        what = f"{stale[0]} v{stale[1]}" if stale else "the write"
        raise PartialWriteError(
            f"Qdrant holds {done} of {len(points)} points of {what} ({engine_message(exc)});"
            " the SQLite index is up to date: run `kbsearch sync` to repair the collection"
        ) from exc


def delete_points(collection: Collection, passage_ids: Sequence[str]) -> None:
    """Delete the points of ``passage_ids``.

    Raises:
        PartialWriteError: the delete failed (SQLite no longer holds them; sync repairs).
    """
    try:
        collection.delete(passage_ids)
    except Exception as exc:
        raise PartialWriteError(
            f"Qdrant still holds up to {len(passage_ids)} deleted points ({engine_message(exc)}); "
            "run `kbsearch sync` to repair the collection"
        ) from exc


def delete_version(collection: Collection, doc_id: str, version: str) -> None:
    """Delete every point of document version ``doc_id``/``version`` (by payload filter, so
    points a failed write left behind go too).

    Raises:
        PartialWriteError: the delete failed (SQLite no longer holds them; sync repairs).
    """
    try:
        collection.delete_stale(doc_id, version, [])
    except Exception as exc:
        raise PartialWriteError(
            f"Qdrant still holds the points of {shown_value(doc_id)} version {shown_value(version)}"
            f" ({engine_message(exc)}); the SQLite index no longer does: run `kbsearch sync` to"
            " repair the collection"
        ) from exc


@dataclass(frozen=True)
class DriftReport:
    """How the collection differs from the system of record. Lists hold passage ids, sorted."""

    expected: int
    points: int
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)  # other doc, version, access or text
    wrong_dimension: list[str] = field(default_factory=list)
    stale_lengths: list[str] = field(default_factory=list)
    dimension: int | None = None

    @property
    def ok(self) -> bool:
        """True when nothing needs repair."""
        return not self.to_rewrite and not self.extra

    @property
    def to_rewrite(self) -> list[str]:
        """Passage ids :func:`sync` writes again."""
        ids = self.missing + self.mismatched + self.wrong_dimension + self.stale_lengths
        return sorted(set(ids))

    def lines(self) -> list[str]:
        """A short human-readable summary, one fact per line."""
        out = [f"system of record: {self.expected} passages; Qdrant: {self.points} points"]
        for label, ids in (
            ("missing from Qdrant", self.missing),
            ("in Qdrant only", self.extra),
            ("other document, version, access or text", self.mismatched),
            (f"dense dimension is not {self.dimension}", self.wrong_dimension),
            ("sparse values from outdated length statistics", self.stale_lengths),
        ):
            if ids:
                shown = ", ".join(ids[:5]) + (" ..." if len(ids) > 5 else "")
                out.append(f"{label}: {len(ids)} ({shown})")
        out.append("in sync" if self.ok else "drift found: run `kbsearch sync` to repair")
        return out


def verify(
    collection: Collection,
    expected: Iterable[ExpectedPassage],
    dimension: int | None,
    lengths: LengthStatistics,
    tolerance: float = LENGTH_TOLERANCE,
) -> DriftReport:
    """Compare ``collection`` with ``expected`` (every passage SQLite holds), the index's dense
    ``dimension`` (``None`` for lexical-only) and its current length statistics.

    Raises:
        BackendUnavailableError: the collection cannot be read.
    """
    want = {e.passage_id: e for e in expected}
    with engine_errors("list its points"):
        have = {p.passage_id: p for p in collection.points()}
    mismatched, wrong_dimension, stale = [], [], []
    for pid, point in have.items():
        e = want.get(pid)
        if e is None:
            continue
        stored = (point.doc_id, point.version, point.access, point.text_hash)
        if stored != (e.doc_id, e.version, e.access, e.text_hash):
            mismatched.append(pid)
        elif point.dimension != (dimension or 0):
            wrong_dimension.append(pid)
        elif point.lengths.drifted(lengths, tolerance, public=point.access == "public"):
            stale.append(pid)
    return DriftReport(
        expected=len(want),
        points=len(have),
        missing=sorted(set(want) - set(have)),
        extra=sorted(set(have) - set(want)),
        mismatched=sorted(mismatched),
        wrong_dimension=sorted(wrong_dimension),
        stale_lengths=sorted(stale),
        dimension=dimension,
    )


def stale_lengths(lengths: LengthStatistics, tolerance: float = LENGTH_TOLERANCE) -> models.Filter:
    """The points whose sparse values used length statistics that differ from ``lengths`` by
    more than ``tolerance`` (relative), as :func:`verify` flags them
    (:meth:`.sparse.LengthStatistics.drifted`): ``avgdl_all`` outside its band, or, for a
    public point, ``avgdl_public`` outside its own (payload ranges, so the engine finds them)."""

    def outside(key: str, value: float) -> list[models.Condition]:
        margin = tolerance * max(abs(value), 1e-12)
        return [
            models.FieldCondition(key=key, range=models.Range(lt=value - margin)),
            models.FieldCondition(key=key, range=models.Range(gt=value + margin)),
        ]

    public = models.FieldCondition(key="access", match=models.MatchValue(value="public"))
    public_off = models.Filter(
        must=[public, models.Filter(should=outside("avgdl_public", lengths.avgdl_public))]
    )
    return models.Filter(should=[*outside("avgdl_all", lengths.avgdl_all), public_off])


def sync(
    collection: Collection,
    report: DriftReport,
    load: Callable[[Sequence[str]], list[PassagePoint]],
    lengths: LengthStatistics,
    batch_size: int = BATCH_SIZE,
) -> int:
    """Repair the drift of ``report``: delete the extra points, re-write the others from
    ``load(passage_ids)`` (the points SQLite gives for those passages). Returns the number of
    points deleted or written.

    Raises:
        PartialWriteError: a batch failed (running sync again continues the repair).
    """
    if report.extra:
        delete_points(collection, report.extra)
    ids = report.to_rewrite
    for start in range(0, len(ids), batch_size):
        write_points(collection, load(ids[start : start + batch_size]), lengths, batch_size)
    return len(report.extra) + len(ids)


def reweigh(
    collection: Collection,
    load: Callable[[Sequence[str]], list[PassagePoint]],
    lengths: LengthStatistics,
    batch_size: int = BATCH_SIZE,
) -> int:
    """Re-write, from ``load(passage_ids)``, the points whose sparse values used length
    statistics off ``lengths`` by more than :data:`LENGTH_TOLERANCE` (found by
    :func:`stale_lengths`, not by reading every point); returns how many.

    Raises:
        BackendUnavailableError: the collection cannot be read.
        PartialWriteError: a batch failed (``kbsearch sync`` repairs).
    """
    with engine_errors("list its points"):
        stale = sorted(p.passage_id for p in collection.points(stale_lengths(lengths)))
    report = DriftReport(expected=len(stale), points=len(stale), stale_lengths=stale)
    return sync(collection, report, load, lengths, batch_size)
