"""Bounded work per source file: the ingest limits, declared once, and a document's time budget.

Each limit is declared once in :data:`LIMITS` (name, default, unit, help); :class:`IngestLimits`
takes its defaults from there, the CLI's ``--limit NAME=VALUE`` lists them from there, and the
README's table of them is checked against it by a test. A file over a limit is refused with
:class:`~kbsearch.errors.LimitExceededError` (an :class:`~kbsearch.errors.IngestError`) before
anything of it is written, so what is already indexed stays as it was.

Where each limit is enforced:

* ``max_file_bytes`` / ``warn_file_bytes``: the file's size on disk, before it is read
  (:func:`check_size`).
* ``max_uncompressed_bytes``: a ``.docx``'s zip members, by their declared sizes and by the
  bytes actually read (:mod:`kbsearch.ingest.word`); a PDF's decoded (Flate) streams,
  together, while pdfminer decodes them (:mod:`kbsearch.ingest.pdf`).
* ``max_pages``: a PDF's page count, read from its page tree before any page is parsed, and
  the pages pdfplumber is asked to load.
* ``max_passages``: the passages a document splits into, before any is embedded.
* ``max_seconds``: the time spent on one document (parsing, splitting, embedding), checked
  between PDF pages and between embedding batches (:class:`Budget`), so that one document
  holds the single writer (the server's write queue) for about that long at most.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from kbsearch.errors import InvalidArgumentError, LimitExceededError

MIB = 2**20  # the unit every size is given in (1 MiB = 1,048,576 bytes), never MB
# a file uploaded to the server (PUT /documents/...), whatever max_file_bytes: the request body
# is read into memory before any limit of a parsed file applies
MAX_UPLOAD_BYTES = 20 * MIB


def byte_size(n: int) -> str:
    """``n`` bytes as every message gives a size, in the binary units the limits are written in
    (:data:`MIB`): ``"20 MiB"`` for a whole number of MiB, ``"64.0 MiB (67,108,865 bytes)"``
    otherwise (rounded, a size just over a limit would read as the limit), ``"1,000 bytes"``
    under 1 MiB (``"0.0 MiB"`` says nothing)."""
    if n < MIB:
        return f"{n:,} bytes"
    if n % MIB == 0:
        return f"{n // MIB:,} MiB"
    return f"{n / MIB:,.1f} MiB ({n:,} bytes)"


@dataclass(frozen=True)
class Limit:
    """One declared limit: its name (an :class:`IngestLimits` field), default, unit, help."""

    name: str
    default: int
    unit: str
    help: str


LIMITS: tuple[Limit, ...] = (
    Limit("max_file_bytes", 64 * MIB, "bytes", "A larger source file is refused unread."),
    Limit(
        "warn_file_bytes",
        8 * MIB,
        "bytes",
        "A larger source file is indexed with a warning (it may take minutes to embed).",
    ),
    Limit(
        "max_uncompressed_bytes",
        128 * MIB,
        "bytes",
        "The most a file may expand to: a .docx's zip members (declared and actually read),"
        " a PDF's decoded streams together.",
    ),
    Limit("max_pages", 1000, "pages", "A PDF with more pages is refused before they are parsed."),
    Limit(
        "max_passages",
        5000,
        "passages",
        "A document that splits into more passages is refused before any is embedded.",
    ),
    Limit(
        "max_seconds",
        180,
        "seconds",
        "The most time one document may take to parse, split and embed; then it is refused"
        " (the server's other writes wait at most about this long).",
    ),
)
_DEFAULTS = {limit.name: limit.default for limit in LIMITS}


@dataclass(frozen=True)
class IngestLimits:
    """The limits one indexing run applies (defaults: :data:`LIMITS`). ``clock`` is the time
    source of ``max_seconds`` in seconds (:func:`time.monotonic`; tests inject one).

    Raises:
        InvalidArgumentError: a limit that is not a positive integer.
    """

    max_file_bytes: int = _DEFAULTS["max_file_bytes"]
    warn_file_bytes: int = _DEFAULTS["warn_file_bytes"]
    max_uncompressed_bytes: int = _DEFAULTS["max_uncompressed_bytes"]
    max_pages: int = _DEFAULTS["max_pages"]
    max_passages: int = _DEFAULTS["max_passages"]
    max_seconds: int = _DEFAULTS["max_seconds"]
    clock: Callable[[], float] = field(default=time.monotonic, compare=False, repr=False)

    def __post_init__(self) -> None:
        for limit in LIMITS:
            value = getattr(self, limit.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidArgumentError(
                    f"{limit.name} must be a positive integer, got {value!r}"
                )

    def budget(self, source: str | Path) -> Budget:
        """A fresh :class:`Budget` of ``max_seconds`` for the document read from ``source``."""
        return Budget(str(source), self.max_seconds, self.clock)

    def with_values(self, assignments: Iterable[str]) -> IngestLimits:
        """These limits with ``NAME=VALUE`` assignments applied (the CLI's ``--limit``).

        Raises:
            InvalidArgumentError: an unknown name, a missing ``=``, a value that is not a
                positive integer (``_`` separators allowed: ``64_000_000``).
        """
        changes: dict[str, int] = {}
        for text in assignments:
            name, sep, value = text.partition("=")
            name = name.strip().replace("-", "_")
            if not sep or name not in _DEFAULTS:
                raise InvalidArgumentError(
                    f"{text!r}: expected NAME=VALUE with NAME one of {', '.join(_DEFAULTS)}"
                )
            try:
                changes[name] = int(value.strip())
            except ValueError:
                raise InvalidArgumentError(
                    f"{name} must be a positive integer, got {value.strip()!r}"
                ) from None
        return replace(self, **changes)  # type: ignore[arg-type]  # only int fields


def limit_names() -> tuple[str, ...]:
    """The declared limits' names, in declaration order (every one an IngestLimits field)."""
    return tuple(limit.name for limit in LIMITS)


class Budget:
    """The time one document has used against ``seconds`` (its ``max_seconds``), counted only
    while it is being worked on (:meth:`timing`), so that documents parsed or embedded
    together are each charged their own time; ``clock`` gives seconds."""

    def __init__(self, source: str, seconds: float, clock: Callable[[], float]) -> None:
        self.source = source
        self.seconds = seconds
        self.clock = clock
        self.spent = 0.0
        self._since: float | None = None

    def used(self) -> float:
        """Seconds spent so far, the running :meth:`timing` included."""
        running = 0.0 if self._since is None else self.clock() - self._since
        return self.spent + running

    @contextmanager
    def timing(self) -> Iterator[None]:
        """Count the time inside the block (not re-entrant)."""
        self._since = self.clock()
        try:
            yield
        finally:
            self.spent += self.clock() - self._since
            self._since = None

    def charge(self, seconds: float) -> None:
        """Add ``seconds`` spent on this document outside :meth:`timing` (a shared batch)."""
        self.spent += seconds

    def check(self, stage: str) -> None:
        """Raises:
        LimitExceededError: over ``seconds`` (``stage``: what was under way, e.g. "parse").
        """
        if self.used() > self.seconds:
            raise LimitExceededError(
                f"{self.source}: refused: it took over {self.seconds:g} s to {stage} this"
                f" document (max_seconds); nothing of it was indexed"
            )


def check_size(path: Path, limits: IngestLimits) -> int:
    """The size of ``path`` in bytes.

    Raises:
        LimitExceededError: over ``max_file_bytes``.
        OSError: the file cannot be looked at.
    """
    size = path.stat().st_size
    if size > limits.max_file_bytes:
        raise LimitExceededError(
            f"{path}: refused: the file is {byte_size(size)}, over the limit of"
            f" {byte_size(limits.max_file_bytes)} (max_file_bytes); nothing of it was indexed"
        )
    return size


def large_file_warning(size: int, limits: IngestLimits) -> str | None:
    """The warning for a file of ``size`` bytes over ``warn_file_bytes``, else ``None``."""
    if size <= limits.warn_file_bytes:
        return None
    return (
        f"a large file ({byte_size(size)}, over warn_file_bytes): parsing and embedding it"
        " may take minutes"
    )


def over_uncompressed(path: Path | str, what: str, limits: IngestLimits) -> LimitExceededError:
    """The refusal of a file whose content expands past ``max_uncompressed_bytes``
    (``what``: how it was found, e.g. "its zip members declare 300 MiB")."""
    return LimitExceededError(
        f"{path}: refused: {what}; the limit is {byte_size(limits.max_uncompressed_bytes)}"
        " uncompressed (max_uncompressed_bytes); nothing of it was indexed"
    )


def over_passages(source: str, passages: int, limits: IngestLimits) -> LimitExceededError:
    """The refusal of a document that splits into ``passages`` passages, over ``max_passages``."""
    return LimitExceededError(
        f"{source}: refused: it splits into {passages} passages, over the limit of"
        f" {limits.max_passages} (max_passages); nothing of it was embedded or indexed"
    )


def large_files(paths: Iterable[str | Path], limits: IngestLimits) -> list[tuple[Path, str]]:
    """The indexable files under ``paths`` over ``warn_file_bytes``, with their warning, so
    that a command can say so before it starts (the run's report says it too).

    Raises:
        IngestError: a path does not exist.
    """
    from kbsearch.ingest.discovery import discover  # discovery imports this package

    found: list[tuple[Path, str]] = []
    for path in discover(paths).files:
        try:
            warning = large_file_warning(path.stat().st_size, limits)
        except OSError:
            continue  # the run reports a file it cannot read
        if warning:
            found.append((path, warning))
    return found
