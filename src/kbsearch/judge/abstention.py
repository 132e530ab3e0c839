"""The abstention stage: after fusion, decide whether the hits answer the question.

A :class:`~kbsearch.ranking.stages.JudgingStage`: the pipeline runs it on every search of the
assessing pipeline (``KnowledgeBase.assess``/``ask``), hands it each route's ranked list, and
records its :class:`~kbsearch.judge.confidence.Decision` in the trace; the ranked list goes on
unchanged, so abstention never reorders the hits. It reads the routes' own lists and scores
(BM25, cosine), never a fusion score, so it does not depend on how the routes are fused.
Without a dense list (an index without vectors) it gives no decision (``None``), since its
model reads both routes.

The stage also chooses the span that answers among the first passages of the ranked list
(:func:`kbsearch.judge.answer.choose`, as ``ask`` shows it) and gives the verdict on it
(:meth:`kbsearch.judge.confidence.ConfidenceModel.judge`): the decision every search carries
is the one ``ask`` answers by, so the CLI, the HTTP API, the page and the MCP tools show the
same verdict for the same query.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..filters import AUDIENCES
from ..ranking.stages import Run
from ..ranking.trace import Trace
from ..records import Hit
from ..retrieve.backend import Backend
from ..retrieve.query import Query, QueryVectors
from ..text.analysis import Analyzer
from .answer import QuestionTerms, choose
from .confidence import ConfidenceModel
from .evidence import collect, term_statistics
from .span import PASSAGES, Span
from .verdict import Decision


@dataclass(frozen=True)
class Assessment:
    """A search's hits (best first, as the route ranked them) and the stage's decision
    (``None`` when the index cannot support one); ``trace``: the run's (its stages' reports,
    e.g. the reranker's: :func:`kbsearch.pipeline.explain.rerank_position`); ``query``: the
    run's analysed query (its vector read once: a page's snippets reuse it)."""

    hits: list[Hit]
    decision: Decision | None
    routes: Mapping[str, tuple[tuple[str, float], ...]]
    trace: Trace | None = None
    query: Query | None = None


class AbstentionStage:
    """Answer-or-abstain over a run's route lists (module docstring).

    ``backend``: what the evidence is read from (the protocol only); ``analyzer``: the
    index's; ``encoder``: the query's vector (cached per process); ``available``: whether the
    dense route can run (checked on every run; default: always); ``model``: the shipped model
    unless given.
    """

    name = "abstain"

    def __init__(
        self,
        backend: Backend,
        analyzer: Callable[[], Analyzer],
        encoder: QueryVectors,
        available: Callable[[], bool] = lambda: True,
        model: ConfidenceModel | None = None,
    ) -> None:
        self._backend = backend
        self._analyzer = analyzer
        self._encoder = encoder
        self._available = available
        self._model = model

    @property
    def model(self) -> ConfidenceModel:
        """The model (the shipped one unless given), read on first use."""
        if self._model is None:
            self._model = ConfidenceModel.load()
        return self._model

    def prepare(self) -> None:
        """Compute the backend's cosine backgrounds (both audiences) ahead of the first
        decision on its generation (a server's snapshot builder calls it)."""
        for audience in AUDIENCES:
            self._backend.background(audience)

    def judge(self, run: Run) -> Decision | None:
        """The decision from ``run.routes["lexical"]`` and ``["dense"]`` at
        ``run.min_confidence`` (default: the model's threshold); ``None`` without both lists.

        Raises:
            InvalidArgumentError: ``min_confidence`` outside [0, 1].
            QueryError and the embedder's errors (the query's vector is read, cached).
        """
        if "lexical" not in run.routes or "dense" not in run.routes or not self._available():
            return None
        evidence = collect(
            self._backend,
            self._analyzer(),
            run.query.text,
            run.filters,
            run.routes["lexical"],
            run.routes["dense"],
            run.query.vector(self._encoder),
            run.rows,
        )
        span, passage = self.span(run)
        return self.model.judge(evidence, span, passage, run.min_confidence)

    def span(self, run: Run) -> tuple[Span | None, str | None]:
        """The span chosen among the first :data:`~kbsearch.judge.span.PASSAGES` passages of
        ``run.ranked`` (their documents' titles and languages from the backend; the
        question's words weighted by the audience's IDF; their heading vectors' cosines to the
        question's) and the passage it lies in."""
        ids = [pid for pid, _ in run.ranked[:PASSAGES]]
        found = run.rows(ids)
        passages = [found[p].passage for p in ids if p in found]
        documents = self._backend.documents({(p.doc_id, p.version) for p in passages})
        passages = [p for p in passages if (p.doc_id, p.version) in documents]
        audience = str(run.filters.audience)
        language = run.filters.language
        languages = [str(language)] if language else self._backend.languages(audience)
        analyzer = self._analyzer()
        statistics = term_statistics(
            self._backend.lexical_statistics(audience), analyzer, run.query.text, languages
        )
        terms = QuestionTerms(statistics.words, statistics.idf, analyzer.name)
        cosines = dict(run.routes["dense"])
        headings = self._backend.heading_scores(
            run.query.vector(self._encoder), [p.passage_id for p in passages]
        )
        span = choose(
            passages, documents, languages, terms, cosines, run.query.text, None, headings
        )
        return span, None if span is None else passages[span.passage].passage_id
