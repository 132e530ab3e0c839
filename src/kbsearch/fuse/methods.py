"""Fusion methods chosen by name: the hybrid route's last step.

- ``rrf`` (the default): Reciprocal Rank Fusion of the routes' top lists
  (:mod:`kbsearch.fuse.rrf`); it needs ranks only.
- a **score fusion** (:data:`SCORE_FUSIONS`) gets the candidates, the union of the routes' top
  lists, each scored in every route (a passage one route missed is scored there too, by
  :meth:`kbsearch.retrieve.backend.Backend.lexical_scores` / ``dense_scores``) plus its heading
  cosine (``title``, :mod:`kbsearch.index.headings`; absent without a heading vector), as
  :class:`~kbsearch.fuse.convex.FusionCandidate` records, and returns
  :class:`~kbsearch.fuse.convex.ConvexFused` records best first, whose ``parts`` add
  up to the fused score (what an explanation shows).

``convex`` is :func:`~kbsearch.fuse.convex.convex_fusion` with min-max normalisation
and weights ``(1 - alpha) * lexical + alpha * dense + title * heading cosine``; its defaults
(alpha 0.6, title 0.2) had the best mean nDCG@10 over the four datasets' ``dev`` halves
(docs/benchmarks.md, "Ranking quality"). A method is named alone (``convex``) or with
parameters (``convex:alpha=0.7,title=0``). ``alpha`` is from 0 to 1; ``title`` too: the heading
cosine weighs at most as much as the two routes together (their weights add up to 1), so a
title match cannot outweigh every route's evidence.

Adding a method is one entry in :data:`SCORE_FUSIONS`: a :class:`ScoreFusion` whose ``fuse``
takes a :class:`FusionInput` (``collection()`` gives the audience's :class:`TitleCounts`, read
once per index generation). ``learned`` is :func:`kbsearch.fuse.learned.fuse_learned`
(a LambdaRank tree ensemble trained on the dev halves; no parameters).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import InvalidArgumentError
from ..retrieve.backend import TitleCounts
from .convex import ConvexFused, FusionCandidate, convex_fusion
from .features import CollectionStats
from .learned import fuse_learned

RRF = "rrf"
DEFAULT_FUSION = "learned"


@dataclass(frozen=True)
class FusionInput:
    """What a score fusion reads: the candidates, its parameters (defaults filled in) and the
    collection's title counts (a call, so that methods that do not need them never read them)."""

    candidates: Sequence[FusionCandidate]
    parameters: Mapping[str, float]
    collection: Callable[[], TitleCounts]


@dataclass(frozen=True)
class ScoreFusion:
    """A score fusion: ``fuse``, the parameters it accepts with their defaults, and the
    largest value of those bounded above (every value is a finite number >= 0)."""

    fuse: Callable[[FusionInput], list[ConvexFused]]
    defaults: Mapping[str, float] = field(default_factory=dict)
    maxima: Mapping[str, float] = field(default_factory=dict)


def _convex(x: FusionInput) -> list[ConvexFused]:
    alpha, title = x.parameters["alpha"], x.parameters["title"]
    if not 0 <= alpha <= 1:  # parse_fusion refuses it first; a FusionSpec built by hand
        raise InvalidArgumentError(f"convex alpha must be from 0 to 1, got {alpha:g}")
    weights = {"lexical": 1 - alpha, "dense": alpha, "title": title}
    return convex_fusion(x.candidates, weights, "minmax")


def _learned(x: FusionInput) -> list[ConvexFused]:
    return fuse_learned(x.candidates, CollectionStats(**vars(x.collection())))


SCORE_FUSIONS: dict[str, ScoreFusion] = {
    "convex": ScoreFusion(_convex, {"alpha": 0.6, "title": 0.2}, {"alpha": 1.0, "title": 1.0}),
    "learned": ScoreFusion(_learned),
}


def fusion_names() -> tuple[str, ...]:
    """Every name ``--fusion`` accepts: ``rrf``, then the score fusions."""
    return (RRF, *SCORE_FUSIONS)


@dataclass(frozen=True)
class FusionSpec:
    """A fusion method by name with its parameters (defaults filled in)."""

    name: str
    parameters: Mapping[str, float]

    @property
    def scored(self) -> bool:
        """True for a score fusion (candidates scored in every route), False for RRF."""
        return self.name != RRF

    def __str__(self) -> str:
        values = ",".join(f"{k}={v:g}" for k, v in self.parameters.items())
        return f"{self.name}:{values}" if values else self.name


def parse_fusion(text: object) -> FusionSpec:
    """``NAME`` or ``NAME:key=value,...`` (``convex:alpha=0.7,title=0``), checked.

    Raises:
        InvalidArgumentError: a malformed spec (a space inside a name or a value, ``:`` with
            no parameter after it, an empty parameter between commas; spaces around ``:``,
            ``,`` and ``=`` are allowed), an unknown name (the message lists the choices),
            an unknown parameter (listing the method's), a parameter given twice, or a value
            that is not a finite number >= 0 (nor at most the method's maximum, e.g. convex
            ``alpha`` and ``title`` <= 1).
    """
    if not isinstance(text, str):
        raise InvalidArgumentError(f"fusion must be a method name, got {text!r}")
    given_text, text = text, re.sub(r"\s*([:,=])\s*", r"\1", text.strip())
    name, colon, rest = text.partition(":")
    if any(ch.isspace() for ch in text) or (colon and not all(rest.split(","))):
        raise InvalidArgumentError(
            f"malformed fusion {given_text!r}: write NAME or NAME:key=value,... with no space"
            " inside a name or value and no empty parameter"
        )
    if name not in fusion_names():
        raise InvalidArgumentError(
            f"unknown fusion {name!r}; choose one of {', '.join(fusion_names())}"
        )
    method = SCORE_FUSIONS.get(name)
    defaults = method.defaults if method else {}
    maxima = method.maxima if method else {}
    parameters = dict(defaults)
    given: set[str] = set()
    for item in rest.split(",") if colon else ():
        key, equals, value = item.partition("=")
        if key not in defaults or not equals:
            known = ", ".join(defaults) or "none"
            raise InvalidArgumentError(
                f"fusion {name!r} takes key=value parameters among: {known}; got {item!r}"
            )
        if key in given:
            raise InvalidArgumentError(f"fusion parameter {key} is given twice in {text!r}")
        given.add(key)
        parameters[key] = _parameter(key, value, maxima.get(key, math.inf))
    return FusionSpec(name, parameters)


def _parameter(key: str, value: str, maximum: float) -> float:
    """``value`` as a finite number from 0 to ``maximum``, else InvalidArgumentError."""
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or not 0 <= number <= maximum:
        bound = f"from 0 to {maximum:g}" if math.isfinite(maximum) else ">= 0"
        raise InvalidArgumentError(
            f"fusion parameter {key} must be a finite number {bound}, got {value.strip()!r}"
        )
    return number


def score_fusion(spec: FusionSpec, candidates: Sequence[FusionCandidate],
                 collection: Callable[[], TitleCounts]) -> list[ConvexFused]:  # fmt: skip
    """Run the score fusion ``spec`` names over ``candidates``, best first.

    Raises:
        InvalidArgumentError: ``spec`` names RRF (not a score fusion) or a bad parameter.
        FusionError: as the method raises (a duplicate candidate, a non-finite score).
    """
    if spec.name not in SCORE_FUSIONS:
        raise InvalidArgumentError(f"{spec.name!r} is not a score fusion")
    return SCORE_FUSIONS[spec.name].fuse(FusionInput(candidates, spec.parameters, collection))
