"""Search filters: one validated value, one date parser, one in-force rule, two compilers.

A :class:`Filters` value restricts every route before its top k is taken:

- ``audience``: :attr:`Audience.PUBLIC` sees only ``access = 'public'`` passages,
  :attr:`Audience.STAFF` sees everything;
- ``as_of``: only the document versions in force that day (:func:`in_force`; ``None`` = today);
- ``language``: passages written in that language (an ISO 639-1 code, lower case);
- ``doc_ids``: passages of these documents.

The same value compiles to a SQL condition (:func:`to_sql`, for the store) and to a boolean
mask over in-memory columns (:func:`to_mask`, for the impact and dense indexes); a property test
holds them to the same selection. A Qdrant payload filter will be a third compiler.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import Protocol

import numpy as np

from .errors import InvalidArgumentError, UnknownLanguageError, shown_value

ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_OPEN_FROM = np.iinfo(np.int32).min
_OPEN_TO = np.iinfo(np.int32).max
_MASK_CACHE_SIZE = 16


class Audience(StrEnum):
    """Who searches: the public sees public passages only, staff sees all."""

    PUBLIC = "public"
    STAFF = "staff"

    @classmethod
    def parse(cls, value: object) -> Audience:
        """The audience named by ``value`` (an :class:`Audience` or ``"public"``/``"staff"``).

        Raises:
            InvalidArgumentError: any other value.
        """
        if isinstance(value, str):
            try:
                return cls(value)
            except ValueError:
                pass
        choices = ", ".join(a.value for a in cls)
        raise InvalidArgumentError(
            f"unknown audience {shown_value(value)}; choose one of {choices}"
        )

    def sees(self, access: str) -> bool:
        """Whether this audience may see a document or passage labelled ``access``: staff
        sees every label, the public only ``"public"``."""
        return self is Audience.STAFF or access == Audience.PUBLIC


AUDIENCES: tuple[str, ...] = tuple(a.value for a in Audience)


def parse_day(value: object) -> date | None:
    """The project's one date parser: a ``date`` from a ``date``, a ``datetime`` or an ISO
    ``YYYY-MM-DD`` string; ``None`` stays ``None``.

    Raises:
        InvalidArgumentError: anything else, or an impossible date such as 2026-02-30.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str) and ISO_DAY.fullmatch(value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            raise InvalidArgumentError(f"invalid date {shown_value(value)}: no such day") from None
    raise InvalidArgumentError(f"malformed date {shown_value(value)}: expected YYYY-MM-DD")


def in_force(effective_from: date | None, effective_to: date | None, as_of: date) -> bool:
    """Whether a version with inclusive bounds ``[effective_from, effective_to]`` (``None`` =
    open) is in force on ``as_of``: ``effective_from <= as_of <= effective_to``."""
    starts = effective_from is None or effective_from <= as_of
    return starts and (effective_to is None or as_of <= effective_to)


@dataclass(frozen=True)
class Filters:
    """Restrictions applied before the top k in every route (module docstring).

    Built values are validated and normalised: ``audience`` becomes an :class:`Audience`,
    ``as_of`` a ``date`` (from ``YYYY-MM-DD`` text too), ``language`` lower case without a
    region (``fr-FR`` is ``fr``), ``doc_ids`` a tuple (a single string is one id).

    Raises:
        InvalidArgumentError: unknown audience, malformed or impossible date, a language that is
            not a non-empty string, an empty document list or an empty document id.
    """

    audience: Audience | str = Audience.PUBLIC
    as_of: date | str | None = None
    language: str | None = None
    doc_ids: tuple[str, ...] | Sequence[str] | str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "audience", Audience.parse(self.audience))
        object.__setattr__(self, "as_of", parse_day(self.as_of))
        if self.language is not None:
            if not isinstance(self.language, str) or not self.language.strip():
                raise InvalidArgumentError(
                    f"language filter must be a code such as 'en', got {shown_value(self.language)}"
                )
            # a region tag names its language, as an indexed document's does (fr-FR is fr)
            code = re.split(r"[-_]", self.language.strip().lower(), maxsplit=1)[0]
            object.__setattr__(self, "language", code)
        object.__setattr__(self, "doc_ids", _doc_ids(self.doc_ids))

    @property
    def staff(self) -> bool:
        """True when the audience sees staff-only passages too."""
        return self.audience == Audience.STAFF

    @property
    def day(self) -> date:
        """The day whose versions apply: ``as_of``, else today."""
        return self.as_of if isinstance(self.as_of, date) else date.today()


def _doc_ids(value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = (value,) if isinstance(value, str) else value
    if not isinstance(items, Iterable):
        raise InvalidArgumentError(
            f"document filter must be a list of ids, got {shown_value(value)}"
        )
    ids = tuple(items)
    if not ids or not all(isinstance(d, str) and d.strip() for d in ids):
        raise InvalidArgumentError(
            f"document filter is empty or holds an empty id: {shown_value(value)}"
        )
    return ids


def check_language(filters: Filters, languages: Sequence[str]) -> None:
    """Refuse a language filter naming none of ``languages`` (those of the passages the
    audience may see; nothing is checked when there are none, as an empty index finds
    nothing anyway).

    Raises:
        UnknownLanguageError: naming the choices.
    """
    if filters.language is None or not languages or filters.language in languages:
        return
    raise UnknownLanguageError(
        f"unknown language {shown_value(filters.language)}; this index holds {', '.join(languages)}"
    )


def to_sql(filters: Filters, alias: str = "p") -> tuple[str, list[object]]:
    """The filters as a SQL condition on a passages table aliased ``alias`` (with its
    parameters): its columns ``access``, ``language``, ``doc_id``, ``effective_from`` and
    ``effective_to`` (ISO text, ``NULL`` = open)."""
    clauses: list[str] = []
    params: list[object] = []
    if not filters.staff:
        clauses.append(f"{alias}.access = 'public'")
    day = filters.day.isoformat()
    clauses.append(f"({alias}.effective_from IS NULL OR {alias}.effective_from <= ?)")
    clauses.append(f"({alias}.effective_to IS NULL OR ? <= {alias}.effective_to)")
    params += [day, day]
    if filters.language:
        clauses.append(f"{alias}.language = ?")
        params.append(filters.language)
    if filters.doc_ids is not None:
        marks = ",".join("?" * len(filters.doc_ids))
        clauses.append(f"{alias}.doc_id IN ({marks})")
        params += list(filters.doc_ids)
    return " AND ".join(clauses), params


def day_ordinals(values: np.ndarray, open_value: int) -> np.ndarray:
    """ISO dates (``""`` = open) as day ordinals, int32, ``open_value`` for open bounds."""
    out = np.full(len(values), open_value, dtype=np.int32)
    for i, text in enumerate(values):
        if text:
            out[i] = date.fromisoformat(str(text)).toordinal()
    return out


@dataclass
class FilterColumns:
    """Per-row filter columns, aligned with some row order (shape ``(n,)`` each).

    ``access``, ``language``, ``doc_id``: object arrays of strings; ``effective_from`` /
    ``effective_to``: ISO date strings, ``""`` for an open bound. Read-only once built; the
    masks of the most recent filters are cached (a dict swap, safe to share between threads).
    """

    access: np.ndarray
    language: np.ndarray
    doc_id: np.ndarray
    effective_from: np.ndarray
    effective_to: np.ndarray
    public: np.ndarray = field(init=False)
    from_day: np.ndarray = field(init=False)
    to_day: np.ndarray = field(init=False)
    _masks: dict[tuple[object, ...], np.ndarray] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.public = np.asarray(self.access == "public", dtype=bool)
        self.from_day = day_ordinals(self.effective_from, _OPEN_FROM)
        self.to_day = day_ordinals(self.effective_to, _OPEN_TO)

    def languages(self, audience: Audience | str) -> list[str]:
        """The languages of the rows ``audience`` may see, sorted."""
        rows = self.language if audience == Audience.STAFF else self.language[self.public]
        return sorted({str(x) for x in rows})

    def mask(self, filters: Filters) -> np.ndarray:
        """:func:`to_mask`, cached by filters and day (so midnight is respected)."""
        key = (filters.audience, filters.day, filters.language, filters.doc_ids)
        found = self._masks.get(key)
        if found is None:
            found = to_mask(filters, self)
            if len(self._masks) >= _MASK_CACHE_SIZE:
                self._masks = {}
            self._masks[key] = found
        return found


class MaskColumns(Protocol):
    """What :func:`to_mask` reads: per-row arrays of the same length."""

    @property
    def public(self) -> np.ndarray: ...
    @property
    def language(self) -> np.ndarray: ...
    @property
    def doc_id(self) -> np.ndarray: ...
    @property
    def from_day(self) -> np.ndarray: ...
    @property
    def to_day(self) -> np.ndarray: ...


def to_mask(filters: Filters, columns: MaskColumns) -> np.ndarray:
    """Boolean mask, shape ``(n,)``, of the rows of ``columns`` that pass ``filters``: the
    vectorised form of :func:`to_sql` (the in-force rule of :func:`in_force` on day
    ordinals)."""
    ordinal = filters.day.toordinal()
    keep = (columns.from_day <= ordinal) & (ordinal <= columns.to_day)
    if not filters.staff:
        keep &= columns.public
    if filters.language:
        keep &= columns.language == filters.language
    if filters.doc_ids is not None:
        keep &= np.isin(columns.doc_id, list(filters.doc_ids))
    return keep


__all__ = [
    "AUDIENCES",
    "Audience",
    "FilterColumns",
    "Filters",
    "check_language",
    "in_force",
    "parse_day",
    "to_mask",
    "to_sql",
]
