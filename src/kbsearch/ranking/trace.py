"""What one pipeline run did, kept so explanations are read, never recomputed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..filters import Filters
from ..fuse.convex import ConvexFused, FusionCandidate
from ..fuse.rrf import Fused

Ranking = tuple[tuple[str, float], ...]  # (passage_id, score), best first


@dataclass(frozen=True)
class StageTrace:
    """One stage's input and output lists, and a judging stage's verdict (``None`` for a
    stage that only reorders; the output of a judging stage is its input)."""

    name: str
    input: Ranking
    output: Ranking
    verdict: object | None = None


@dataclass(frozen=True)
class Trace:
    """A run of :class:`kbsearch.pipeline.run.Pipeline`.

    ``routes``: each route's ranked list (its top ``depth``, filters applied) with its scores;
    ``fused``: every fused passage with its RRF contributions (``None`` when one route ran
    alone); ``fusion``: the hybrid route's fusion method (``rrf``, or a score fusion with its
    parameters, :mod:`kbsearch.fuse.methods`); for a score fusion, ``candidates`` (each
    scored in every route, plus ``title``) and ``scored`` (each with the parts of its fused
    score), and ``fused`` is ``None``; ``ranked``: the list the stages started from;
    ``query_language``: the query's language when fusion marked passages in other languages
    as out of the lexical route's reach (:mod:`kbsearch.retrieve.crosslang`; ``None`` in a
    one-language index or when unknown);
    ``stages``: each stage's input and output; the hits are the top ``k`` of the last output.
    """

    query: str
    route: str
    k: int
    depth: int
    filters: Filters
    rrf_k: float
    weights: Mapping[str, float]
    routes: Mapping[str, Ranking]
    fused: tuple[Fused, ...] | None = None
    ranked: Ranking = ()
    stages: tuple[StageTrace, ...] = field(default=())
    fusion: str = "rrf"
    candidates: tuple[FusionCandidate, ...] | None = None
    scored: tuple[ConvexFused, ...] | None = None
    query_language: str | None = None

    @property
    def final(self) -> Ranking:
        """The list the hits were cut from (after every stage)."""
        return self.stages[-1].output if self.stages else self.ranked

    def verdict(self, stage: str) -> object | None:
        """The verdict of the last stage named ``stage`` (``None`` when none ran or it had
        nothing to say)."""
        found = [s.verdict for s in self.stages if s.name == stage]
        return found[-1] if found else None
