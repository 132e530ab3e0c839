"""The facade's searching part: built requests run through the pipeline, inside one read
transaction each (:class:`~kbsearch.knowledge_base.KnowledgeBase` holds one, builds the
:class:`~kbsearch.pipeline.request.SearchRequest` of its keyword calls and hands it here).

Two pipelines over the same routes: the plain one (``search``, ``explain``) and the assessing
one, with the abstention stage (``assess``, ``ask``). Each run analyses and encodes its query
once (:class:`~kbsearch.retrieve.query.Query`); what reads more of the same run (an
explanation's BM25 terms and cosine) reuses the run's query.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from ..errors import NoVectorsError, PassageNotFoundError, shown_value
from ..filters import Filters, check_language
from ..judge.abstention import AbstentionStage, Assessment
from ..judge.answer import Answer, QuestionTerms, compose
from ..judge.evidence import term_statistics
from ..judge.verdict import Decision
from ..pipeline import Pipeline, RouteContext, SearchRequest, SearchResult, make_routes
from ..pipeline.explain import Explanation, explain_from_trace
from ..pipeline.request import DEFAULT_ROUTE
from ..records import DEFAULT_AUDIENCE
from ..retrieve.backend import Backend
from ..retrieve.encoder import QueryEncoder
from ..retrieve.routes import LexicalRoute, make_scorers
from ..store import Store
from ..text.analysis import Analyzer, is_text
from .contents import Contents, dated_message


def no_vectors_to_answer() -> NoVectorsError:
    """The error of answering from an index without vectors (no file path: an API caller
    reads it; the command line's message says how to re-embed)."""
    return NoVectorsError(
        "this index has no vectors: answering needs both routes (search route=lexical)",
        cli="this index has no vectors (built with --embedder none): answering needs both"
        " routes; re-embed it: kbsearch index PATH... --db DB --reembed (the default"
        " embedder; --embedder SPEC for another)",
    )


class Searching:
    """The routes, the two pipelines and the abstention stage over ``backend``; ``store``
    gives the read transaction of each call, ``contents`` the cited documents and the
    not-found errors, ``analyzer()`` the index's analyser, ``encoder`` the query vectors."""

    def __init__(
        self,
        store: Store,
        backend: Backend,
        contents: Contents,
        analyzer: Callable[[], Analyzer],
        encoder: QueryEncoder,
    ) -> None:
        self.store = store
        self.backend = backend
        self.contents = contents
        self.analyzer = analyzer
        self.encoder = encoder
        context = RouteContext(backend, analyzer, encoder)
        self.routes = make_routes(context)
        self.pipeline = Pipeline(backend, self.routes, scorers=make_scorers(context))
        self.abstention = AbstentionStage(
            backend, analyzer, encoder, self.routes["dense"].available
        )
        self.assessing = Pipeline(
            backend, self.routes, [self.abstention], scorers=make_scorers(context)
        )

    def best_route(self) -> str:
        """``DEFAULT_ROUTE`` (hybrid) when the index has vectors, else lexical, the only route
        it can search."""
        return DEFAULT_ROUTE if self.routes["dense"].available() else "lexical"

    def run(self, request: SearchRequest) -> SearchResult:
        """The plain pipeline's run of ``request`` (hits and trace).

        Raises:
            as :meth:`kbsearch.pipeline.run.Pipeline.run`.
        """
        # one read transaction: the rankings and the hits' rows come from one state of the
        # file, whatever another process writes meanwhile
        with self.store.database.read_transaction():
            return self.pipeline.run(request)

    def assess(self, request: SearchRequest) -> Assessment:
        """The assessing pipeline's run of ``request`` (explained: every route's list), with
        the abstention stage's decision (``None`` for an index without vectors).

        Raises:
            as :meth:`run`; InvalidArgumentError: ``min_confidence`` outside [0, 1].
        """
        with self.store.database.read_transaction():  # the lists and the evidence from one state
            result = self.assessing.run(request)
        verdict = result.trace.verdict(self.abstention.name)
        decision = verdict if isinstance(verdict, Decision) else None
        return Assessment(result.hits, decision, result.trace.routes, result.trace, result.query)

    def ask(
        self, query: str, k: int, filters: Filters | None, min_confidence: float | None
    ) -> Answer:
        """The cited answer to ``query`` from the assessed hybrid search's top ``k`` under
        ``filters`` (``None``: ``Filters()``) at ``min_confidence`` (``None``: the model's
        threshold) (:mod:`kbsearch.judge.answer`). The request is built after the index is
        found to have vectors: without them, that is the error, whatever the arguments.

        Raises:
            NoVectorsError: the index has no vectors (the confidence reads both routes).
            InvalidArgumentError, QueryError and the embedder errors as :meth:`assess`.
        """
        no_vectors = no_vectors_to_answer()  # before the search, whose error is another
        language = filters.language if filters is not None else None
        audience = str(filters.audience) if filters is not None else DEFAULT_AUDIENCE
        with (
            self.store.database.read_transaction()
        ):  # the search and the cited documents: one state
            if not self.routes["dense"].available():
                raise no_vectors
            request = SearchRequest(
                query, k=k, filters=Filters() if filters is None else filters, explain=True,
                min_confidence=min_confidence,
            )  # fmt: skip
            assessed = self.assess(request)
            if assessed.decision is None:  # the index lost its vectors meanwhile
                raise no_vectors
            documents = self.contents.cited(assessed.hits)
            # the languages this audience may see: staff documents never shape a public answer
            languages = [str(language)] if language else self.backend.languages(audience)
            analyzer = self.analyzer()
            statistics = term_statistics(  # the protocol's statistics: no index in memory
                self.backend.lexical_statistics(audience), analyzer, query, languages
            )
            headings = None
            shown = [h.passage_id for h in assessed.hits]
            if assessed.query is not None and assessed.decision.span_passage not in shown:
                # the stage's span lies beyond the k hits shown: compose chooses among them
                headings = self.backend.heading_scores(assessed.query.vector(self.encoder), shown)
        question = QuestionTerms(statistics.words, statistics.idf, analyzer.name)
        cosines = dict(assessed.routes.get("dense", ()))
        return compose(
            query, assessed.decision, assessed.hits, documents, languages, question, cosines,
            heading_cosines=headings,
        )  # fmt: skip

    def explain(self, request: SearchRequest, passage_id: str) -> Explanation:
        """Why ``passage_id`` ranks where it does in ``request``'s run (explained), read
        from its trace; the BM25 terms and a cosine outside the dense list from the run's
        query.

        Raises:
            PassageNotFoundError: the passage does not exist or this audience may not see it
                (one message for both, so hidden passages cannot be probed); as :meth:`run`.
        """
        filters = request.filters
        if not isinstance(passage_id, str) or not is_text(passage_id):
            dated = dated_message(filters)
            raise PassageNotFoundError(
                f"no passage {shown_value(passage_id)} for this audience{dated}"
            )
        dense = self.routes["dense"].available()
        with self.store.database.read_transaction():  # the passage and the run from one state
            audience = str(filters.audience)
            check_language(filters, self.backend.languages(audience))  # as search's
            row = self.backend.passages([passage_id], filters).get(passage_id)
            if row is None:
                raise self.contents.excluded(passage_id, filters)
            result = self.pipeline.run(request)
            trace, query = result.trace, result.query  # the run's terms and vector
            terms = cast(LexicalRoute, self.routes["lexical"]).terms(query, filters)
            bm25 = self.backend.explain_lexical(terms, row, audience)
            cosine = None
            if dense and passage_id not in {pid for pid, _ in trace.routes.get("dense", ())}:
                cosine = self.backend.dense_similarity(query.vector(self.encoder), row)
        return explain_from_trace(
            trace, passage_id, terms.analysed, bm25, cosine, dense, row.language
        )
