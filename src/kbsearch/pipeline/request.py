"""One search request, validated when it is built, and the checks and parsers of its
settings (the CLI's, the HTTP API's and the library's: one declaration of each default).

A :class:`SearchRequest` is what every caller builds once and passes down: the library's
keyword calls (``KnowledgeBase.search(query, k=..., ...)``) construct one, the CLI and the
service build one from their options, an evaluation builds one per question from a template
(:meth:`SearchRequest.replace`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TypedDict

from ..errors import InvalidArgumentError, OptionConflictError, shown_value
from ..filters import Filters
from ..fuse.methods import DEFAULT_FUSION, FusionSpec, parse_fusion
from ..fuse.rrf import DEFAULT_RRF_K
from ..judge.verdict import check_threshold
from ..rerank.rerankers import RerankSettings
from ..retrieve.routes import HYBRID, route_names

MAX_K = 100_000  # hits a search may ask for (k and depth)
# Search defaults: the CLI's and the HTTP API's defaults are these (a test checks the README).
DEFAULT_K = 5  # hits returned
DEFAULT_ROUTE = HYBRID
DEFAULT_DEPTH = 100  # hits each route hands to fusion
DEFAULT_WEIGHTS = (1.0, 1.0)  # RRF weights of the lexical and dense routes


def _whole(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_K:
        raise InvalidArgumentError(
            f"{name} must be a whole number from 1 to {MAX_K}, got {shown_value(value)}"
        )
    return value


@dataclass(frozen=True)
class SearchRequest:
    """One search, validated when built.

    ``route``: a registered route or ``hybrid``; ``depth``: how many candidates each route
    gives fusion, whatever ``k`` (so a hybrid search returns at most the union of the routes'
    top ``depth``, and the order of its top hits does not change with ``k``; a route searched
    alone lists ``max(depth, k)``); ``weights``: one per registered route, in
    registry order (RRF's); ``explain``: fuse every available route too, so each hit carries
    its rank in each; ``fusion``: the hybrid route's method, ``rrf`` or a score fusion with
    optional parameters (:func:`kbsearch.fuse.methods.parse_fusion`; kept in its full
    form, defaults filled in); ``rerank``: a reranker spec or
    :class:`~kbsearch.rerank.rerankers.RerankSettings` (kept as settings), run on the ranked
    list before the pipeline's own stages (a route searched alone then gives
    ``max(depth, k)``). The query is checked when a run analyses it
    (:class:`kbsearch.retrieve.query.Query`), so a request of settings alone
    (``SearchRequest("", ...)``) is a template to :meth:`replace` the query of.

    Raises:
        InvalidArgumentError: k or depth not in 1..MAX_K, unknown route, RRF k not a finite
            number >= 0, weights not finite numbers >= 0 (one per route, one positive), an
            unknown fusion or fusion parameter, an unknown reranker or bad rerank settings.
        OptionConflictError: fusion settings the route would ignore
            (:func:`check_fusion_settings`).
    """

    query: str
    k: int = DEFAULT_K
    route: str = DEFAULT_ROUTE
    filters: Filters = Filters()
    rrf_k: float = DEFAULT_RRF_K
    depth: int = DEFAULT_DEPTH
    weights: tuple[float, ...] = DEFAULT_WEIGHTS
    explain: bool = False
    fusion: str = DEFAULT_FUSION
    min_confidence: float | None = None
    rerank: RerankSettings | str | None = None

    def __post_init__(self) -> None:
        _whole(self.k, "k")
        object.__setattr__(self, "rerank", RerankSettings.of(self.rerank))
        if self.min_confidence is not None:
            object.__setattr__(self, "min_confidence", check_threshold(self.min_confidence))
        _whole(self.depth, "depth")
        names = route_names()
        if self.route not in names:
            raise InvalidArgumentError(
                f"unknown route {shown_value(self.route)}; choose one of {', '.join(names)}"
            )
        if not isinstance(self.filters, Filters):
            raise InvalidArgumentError(
                f"filters must be a kbsearch.Filters, got {type(self.filters).__name__}"
            )
        check_rrf_k(self.rrf_k)
        object.__setattr__(self, "weights", _weights(self.weights, len(names) - 1))
        spec = parse_fusion(self.fusion)
        object.__setattr__(self, "fusion", str(spec))
        check_fusion_settings(self.route, spec, self.rrf_k, self.weights)

    def replace(self, **changes: object) -> SearchRequest:
        """This request with ``changes`` (a question's query, ``k``, route and filters in an
        evaluation), validated again.

        Raises:
            as the class.
        """
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


class RankingOptions(TypedDict, total=False):
    """How the routes' lists are made and fused, whatever the query: the keyword options of
    an evaluation's searches (``kbsearch.tasks``), each a :class:`SearchRequest` field of that
    name (its default, its check)."""

    depth: int
    rrf_k: float
    weights: Sequence[float]
    fusion: str


class SearchOptions(RankingOptions, total=False):
    """The keyword options ``KnowledgeBase.search``, ``assess`` and ``explain`` share: the
    ranking options, ``k``, ``filters`` (``None`` reads as ``Filters()``) and ``rerank``,
    each a :class:`SearchRequest` field of that name."""

    k: int
    filters: Filters | None
    rerank: RerankSettings | str | None


def check_rrf_k(rrf_k: object) -> float:
    """RRF's constant k, a finite number >= 0, as a float.

    Raises:
        InvalidArgumentError: not one.
    """
    if (
        isinstance(rrf_k, bool)
        or not isinstance(rrf_k, int | float)
        or not math.isfinite(rrf_k)
        or rrf_k < 0
    ):
        raise InvalidArgumentError(f"RRF k must be a finite number >= 0, got {shown_value(rrf_k)}")
    return float(rrf_k)


def parse_rrf_k(text: str) -> float:
    """RRF's k from its text form (``"60"``), checked as :func:`check_rrf_k` does.

    Raises:
        InvalidArgumentError: not a finite number >= 0.
    """
    try:
        value = float(text)
    except ValueError:
        raise InvalidArgumentError(
            f"RRF k must be a finite number >= 0, got {shown_value(text)}"
        ) from None
    return check_rrf_k(value)


FUSION_SETTINGS = frozenset({"fusion", "rrf_k", "weights"})


def check_fusion_settings(
    route: str,
    spec: FusionSpec,
    rrf_k: float,
    weights: Sequence[float],
    given: Collection[str] = (),
) -> None:
    """Refuse fusion settings a search would ignore: for a route that is not fused, a fusion
    other than the default, RRF k or route weights; for a score fusion, RRF k or route weights.
    ``given``: the settings (of :data:`FUSION_SETTINGS`) the caller named, which count as set
    even at their default value (the command line's options given at all: ``--rrf-k 10`` is
    refused where ``--rrf-k 11`` is).

    Raises:
        OptionConflictError: naming the settings and the route.
    """
    named = set(given)
    rrf_settings = (
        bool(named & {"rrf_k", "weights"})
        or tuple(weights) != DEFAULT_WEIGHTS
        or rrf_k != DEFAULT_RRF_K
    )
    if route == HYBRID:
        if spec.scored and rrf_settings:
            raise OptionConflictError(
                "RRF k and route weights set Reciprocal Rank Fusion; fusion"
                f" {shown_value(spec.name)} weighs the routes itself: add --fusion rrf to set them"
            )
        return
    if "fusion" in named or str(spec) != str(parse_fusion(DEFAULT_FUSION)):
        raise OptionConflictError(
            f"fusion {shown_value(str(spec))} applies to the hybrid route only; route"
            f" {shown_value(route)} is not fused: leave the fusion out or use route hybrid"
        )
    if rrf_settings:
        raise OptionConflictError(
            "RRF k and route weights apply to the hybrid route only; route"
            f" {shown_value(route)} is not fused: leave them out or use route hybrid"
        )


def _weights(weights: object, count: int) -> tuple[float, ...]:
    values = (
        tuple(weights) if isinstance(weights, Sequence) and not isinstance(weights, str) else ()
    )
    if len(values) != count or not all(
        isinstance(w, int | float) and not isinstance(w, bool) and math.isfinite(w) and w >= 0
        for w in values
    ):
        names = ", ".join(route_names()[:-1])
        raise InvalidArgumentError(
            f"weights are {count} finite numbers >= 0 ({names}), got {shown_value(weights)}"
        )
    if not any(values):
        raise InvalidArgumentError("at least one route weight must be positive")
    return tuple(float(w) for w in values)


def validate_weights(weights: object) -> tuple[float, ...]:
    """The RRF weights, one per registered route (lexical, dense), as floats.

    Raises:
        InvalidArgumentError: not one finite number >= 0 per route with one of them positive.
    """
    return _weights(weights, len(route_names()) - 1)


def parse_weights(text: str) -> tuple[float, ...]:
    """RRF weights from their text form ``"lexical,dense"`` (``"1,1"``, ``"0.5, 2"``), checked
    as :func:`validate_weights` does; the one parser of the CLI and the HTTP API.

    Raises:
        InvalidArgumentError: not comma-separated numbers, or as :func:`validate_weights`.
    """
    try:
        parts = tuple(float(x) for x in str(text).split(","))
    except ValueError:
        raise InvalidArgumentError(
            f"weights are numbers 'lexical,dense', got {shown_value(text)}"
        ) from None
    return validate_weights(parts)
