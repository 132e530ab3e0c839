"""Which backend an index uses: the embedded SQLite one, or Qdrant when the index recorded a
Qdrant target (``kbsearch index --backend qdrant``) or the caller names one.

A :class:`Mirrored` backend keeps a second copy of the index beside the SQLite file (the
system of record): it records where that copy lives before an indexing run, and brings the
copy level with SQLite after it (``sync``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..errors import BackendUnavailableError, PartialWriteError, install_hint
from ..retrieve.backend import Backend
from ..retrieve.dense import DenseIndex
from ..retrieve.lexical.impact import ImpactIndex
from ..store import Store
from .sqlite import SqliteBackend

if TYPE_CHECKING:
    from .qdrant.mirror import DriftReport
    from .qdrant.target import QdrantTarget


@runtime_checkable
class Mirrored(Protocol):
    """A backend with a copy of the index outside the SQLite file."""

    def record(self) -> None:
        """Store where the copy lives in the index's settings."""
        ...

    def verify(self) -> DriftReport:
        """Compare the copy with SQLite."""
        ...

    def sync(self) -> tuple[DriftReport, int]:
        """Repair the copy's drift from SQLite; returns the report and the points changed."""
        ...

    def sync_deletes(self) -> int:
        """Bring the copy level after deletes, reading what they moved only; returns the
        points changed."""
        ...

    def close(self) -> None:
        """Release the copy's client."""
        ...


class LocalIndexes(Backend, Protocol):
    """A backend that also exposes the embedded in-memory indexes (tools and benchmarks)."""

    def dense_index(self, dim: int) -> DenseIndex:
        """The in-memory dense matrix."""
        ...

    def impact_index(self, audience: str) -> ImpactIndex:
        """The in-memory lexical index of the audience's FTS5 table."""
        ...


@contextmanager
def mirrored(backend: Backend) -> Iterator[None]:
    """Around an indexing run that writes SQLite: a :class:`Mirrored` backend records its
    target before and syncs its copy after (a failure there, Qdrant unreachable included,
    raises :class:`~kbsearch.errors.PartialWriteError`; SQLite is complete)."""
    if isinstance(backend, Mirrored):
        backend.record()
    yield
    if isinstance(backend, Mirrored):
        _level(backend.sync)


@contextmanager
def mirrored_deletes(backend: Backend) -> Iterator[None]:
    """Around deletes through the backend (each removes its points from the copy): as
    :func:`mirrored`, with :meth:`Mirrored.sync_deletes` after instead of the full sync."""
    if isinstance(backend, Mirrored):
        backend.record()
    yield
    if isinstance(backend, Mirrored):
        _level(backend.sync_deletes)


def _level(step: Callable[[], object]) -> None:
    """Run ``step`` (bringing a copy level); Qdrant unreachable is a
    :class:`~kbsearch.errors.PartialWriteError` (SQLite is written: only the copy lags)."""
    try:
        step()
    except PartialWriteError:
        raise
    except BackendUnavailableError as exc:
        raise PartialWriteError(
            f"the index is written, its Qdrant copy is not: {exc}; run `kbsearch sync`"
            " once Qdrant answers"
        ) from exc


def close_backend(backend: Backend) -> None:
    """Release a :class:`Mirrored` backend's client (the SQLite one needs nothing)."""
    if isinstance(backend, Mirrored):
        backend.close()


def open_backend(store: Store, qdrant: QdrantTarget | None = None) -> LocalIndexes:
    """The backend of ``store``: Qdrant at ``qdrant``, else at the target the index recorded,
    else the embedded SQLite backend.

    Raises:
        BackendUnavailableError: Qdrant is asked for but its packages are missing or it
            cannot be reached; the Qdrant Edge folder the index recorded is missing.
    """
    from .qdrant.target import SETTINGS_KEY, QdrantTarget

    recorded = store.database.get_meta(SETTINGS_KEY)
    target = qdrant or (QdrantTarget.from_settings(json.loads(recorded)) if recorded else None)
    if target is None:
        return SqliteBackend(store)
    if qdrant is None and target.path is not None and not Path(target.path).is_dir():
        # opening it would create an empty shard: every search would find nothing, silently
        raise BackendUnavailableError(
            "the index's Qdrant Edge folder is missing: restore it, or rebuild it from this"
            " index with `kbsearch sync --qdrant-path FOLDER`"
        )
    try:
        from .qdrant.backend import QdrantBackend
    except ImportError as exc:
        raise BackendUnavailableError(
            f"the Qdrant backend needs the qdrant extra: {install_hint('qdrant')} ({exc})"
        ) from exc
    return QdrantBackend(
        store, target.open(), exact=target.exact, hnsw_ef=target.hnsw_ef, target=target
    )
