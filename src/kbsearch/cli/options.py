"""Options shared by several commands. Every default is the library's own constant, so the
command line, the Python API and the README cannot drift apart (a test checks all three)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from kbsearch.errors import InvalidArgumentError, shown_value
from kbsearch.filters import AUDIENCES, parse_day
from kbsearch.fuse.methods import DEFAULT_FUSION, SCORE_FUSIONS, fusion_names, parse_fusion
from kbsearch.fuse.rrf import DEFAULT_RRF_K
from kbsearch.ingest.limits import LIMITS, MAX_UPLOAD_BYTES, IngestLimits, Limit, byte_size
from kbsearch.ingest.metadata import known_language
from kbsearch.knowledge_base import DEFAULT_DEPTH, DEFAULT_K, DEFAULT_WEIGHTS, MAX_K, parse_weights
from kbsearch.pipeline.request import FUSION_SETTINGS, parse_rrf_k
from kbsearch.records import DEFAULT_AUDIENCE, ROUTES, Filters
from kbsearch.rerank.rerankers import RERANKERS, RerankSettings, parse_reranker
from kbsearch.rerank.stage import DEFAULT_BUDGET_MS, DEFAULT_TOP_N, check_settings
from kbsearch.tasks.evaluate import RERANKED, base_route

from .errors import ParsedValue

F = TypeVar("F", bound=Callable[..., Any])

WEIGHTS = ParsedValue("lexical,dense", parse_weights)
RRF_K = ParsedValue("K", parse_rrf_k)


def _routes(text: str) -> tuple[str, ...]:
    """Routes to evaluate: registered ones, each optionally followed by ``+rerank``, each once."""
    routes = tuple(r.strip() for r in text.split(",") if r.strip())
    if not routes or any(base_route(r)[0] not in ROUTES for r in routes):
        raise InvalidArgumentError(
            f"routes are a comma list of {', '.join(ROUTES)}, each optionally with"
            f" {RERANKED} (hybrid{RERANKED}), got {shown_value(text)}"
        )
    twice = [r for r in dict.fromkeys(routes) if routes.count(r) > 1]
    if twice:
        raise InvalidArgumentError(
            f"route {shown_value(twice[0])} is listed twice in {shown_value(text)}"
        )
    return routes


ROUTE_LIST = ParsedValue("route,route...", _routes)
FUSION = ParsedValue("NAME[:key=value,...]", lambda text: str(parse_fusion(text)))


def fusion_option(func: F) -> F:
    """``--fusion NAME[:key=value,...]``: the hybrid route's fusion method, checked."""
    examples = "; ".join(str(parse_fusion(name)) for name in SCORE_FUSIONS)
    return click.option(
        "--fusion",
        default=DEFAULT_FUSION,
        show_default=True,
        type=FUSION,
        help=f"Hybrid fusion: {', '.join(fusion_names())} (defaults: {examples}).",
    )(func)


def weights_text(weights: tuple[float, float] = DEFAULT_WEIGHTS) -> str:
    """``"1,1"``: weights as the command line writes them."""
    return ",".join(f"{w:g}" for w in weights)


def apply(options: list[Callable[[F], F]], func: F) -> F:
    for option in reversed(options):
        func = option(func)
    return func


def json_option(func: F) -> F:
    """``--json``: print the result as JSON instead of text."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(func)


def color_option(func: F) -> F:
    """``--color/--no-color``: matched words in bold (default: when stdout is a terminal)."""
    return click.option(
        "--color/--no-color",
        default=None,
        help="Matched words in bold [default: when stdout is a terminal].",
    )(func)


def db_option(func: F) -> F:
    """``--db FILE``, required."""
    return click.option(
        "--db", "db", required=True, type=click.Path(dir_okay=False), help="Knowledge base file."
    )(func)


def audience_option(func: F) -> F:
    return click.option(
        "--audience",
        default=DEFAULT_AUDIENCE,
        show_default=True,
        type=click.Choice(AUDIENCES),
        help="public sees only public passages; staff sees all.",
    )(func)


def _day_text(text: str) -> str:
    parse_day(text)
    return text


DAY = ParsedValue("YYYY-MM-DD", _day_text)


EVERY_LANGUAGE = "to search every language"
FILTER_LANGUAGE = ParsedValue(
    "CODE", lambda text: known_language(text, "--lang", EVERY_LANGUAGE)
)  # the check of index --lang and of an upload's language: a usage error


def filter_options(func: F) -> F:
    """``--audience``, ``--as-of``, ``--lang``, ``--doc``: see :func:`make_filters`."""
    return apply(
        [
            audience_option,
            click.option(
                "--as-of",
                "as_of",
                type=DAY,
                help="The day whose document versions apply [default: today].",
            ),
            click.option(
                "--lang",
                "lang",
                type=FILTER_LANGUAGE,
                help="Only passages in this language (en, fr...; fr-FR is fr).",
            ),
            click.option(
                "--doc", "doc_ids", multiple=True, help="Only these document ids (repeat or a,b)."
            ),
        ],
        func,
    )


class NumberRange(click.FloatRange):
    """A ``click.FloatRange`` that refuses ``nan`` too (a ``FloatRange`` lets it through, since
    every comparison with it is false): a usage error, exit 2."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if number != number:  # NaN
            self.fail(
                f"{shown_value(value)} is not a number in {self._describe_range()}.", param, ctx
            )
        return number


HITS = click.IntRange(1, MAX_K)  # --k and --depth: the library's bounds, a usage error


def k_option(help_text: str, default: int = DEFAULT_K) -> Callable[[F], F]:
    """``--k N`` (or ``-k N``): hits, 1 to ``MAX_K``."""
    return click.option(
        "-k", "--k", "k", default=default, show_default=True, type=HITS, help=help_text
    )


def rrf_k_option(func: F) -> F:
    return click.option(
        "--rrf-k",
        default=DEFAULT_RRF_K,
        show_default=True,
        type=RRF_K,
        help="RRF constant k (with --fusion rrf).",
    )(func)


def depth_option(func: F) -> F:
    return click.option(
        "--depth",
        default=DEFAULT_DEPTH,
        show_default=True,
        type=HITS,
        help="Hits each route hands to fusion, whatever --k (a hybrid search returns at most"
        " their union).",
    )(func)


def weights_option(func: F) -> F:
    """``--weights lexical,dense``, parsed to a pair of floats."""
    return click.option(
        "--weights",
        default=weights_text(),
        show_default=True,
        type=WEIGHTS,
        help="RRF weights lexical,dense (with --fusion rrf).",
    )(func)


def given_fusion_settings() -> frozenset[str]:
    """The fusion options (of :data:`~kbsearch.pipeline.request.FUSION_SETTINGS`) the command
    line gives, even at their default value: given at all, they are refused where they do not
    apply (:func:`~kbsearch.pipeline.request.check_fusion_settings`)."""
    ctx = click.get_current_context()
    defaults = (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)
    return frozenset(
        name for name in FUSION_SETTINGS if ctx.get_parameter_source(name) not in defaults
    )


def fusion_options(func: F) -> F:
    """``--fusion``, ``--rrf-k``, ``--depth``, ``--weights``."""
    return apply([fusion_option, rrf_k_option, depth_option, weights_option], func)


def make_filters(
    audience: str, as_of: str | None, lang: str | None, doc_ids: tuple[str, ...]
) -> Filters:
    """Filters from the options; ``--doc`` repeats and also takes comma lists (``--doc ""``
    is an error, not "no filter").

    Raises:
        InvalidArgumentError: see :class:`kbsearch.filters.Filters`.
    """
    ids = tuple(d.strip() for value in doc_ids for d in value.split(",") if d.strip())
    if doc_ids and not ids:
        shown = ", ".join(repr(value) for value in doc_ids)
        raise InvalidArgumentError(f"--doc {shown} names no document id")
    return Filters(audience=audience, as_of=as_of, language=lang, doc_ids=ids if doc_ids else None)


RERANKER = ParsedValue("NAME[:ARGUMENT]", parse_reranker)


def rerank_options(func: F) -> F:
    """``--rerank NAME[:ARGUMENT]``, ``--rerank-top-n``, ``--rerank-budget-ms``: see
    :func:`rerank_settings`."""
    names = "; ".join(kind.help for kind in RERANKERS.values())
    numbers = [
        ("--rerank-top-n", int, f"Passages the reranker rescores [default: {DEFAULT_TOP_N}]."),
        (
            "--rerank-budget-ms",
            float,
            "The reranker's time per search; past it the rest keeps the fused order"
            f" [default: {DEFAULT_BUDGET_MS:g}].",
        ),
    ]
    return apply(
        [
            click.option(
                "--rerank",
                type=RERANKER,
                default=None,
                help=f"Rerank the head of the list: {names}.",
            ),
            *(
                click.option(flag, type=kind, default=None, help=text)
                for flag, kind, text in numbers
            ),
        ],
        func,
    )


def rerank_settings(
    rerank: str | None, top_n: int | None, budget_ms: float | None
) -> RerankSettings | None:
    """The reranking the options ask for (``None``: none).

    Raises:
        click.UsageError: ``--rerank-top-n`` or ``--rerank-budget-ms`` without ``--rerank``,
            or settings :class:`kbsearch.rerank.rerankers.RerankSettings` refuses (naming
            the option).
    """
    if rerank is None:
        if top_n is not None or budget_ms is not None:
            raise click.UsageError("--rerank-top-n and --rerank-budget-ms need --rerank NAME")
        return None
    head = DEFAULT_TOP_N if top_n is None else top_n
    budget = DEFAULT_BUDGET_MS if budget_ms is None else budget_ms
    for option, settings in (
        ("--rerank-top-n", (head, DEFAULT_BUDGET_MS)),
        ("--rerank-budget-ms", (DEFAULT_TOP_N, budget)),
    ):
        try:
            check_settings(*settings)
        except InvalidArgumentError as error:
            raise click.UsageError(f"'{option}': {error}") from None
    try:
        return RerankSettings(rerank, head, budget)
    except InvalidArgumentError as error:
        raise click.UsageError(str(error)) from None


def _ingest_limits(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> Any:
    try:
        return IngestLimits().with_values(values)
    except InvalidArgumentError as error:
        raise click.BadParameter(str(error), ctx, param) from None


def _amount(limit: Limit) -> str:
    """A limit's default as the help lists it: a size also in MiB, as messages give it."""
    shown = f"{limit.default} {limit.unit}"
    return f"{shown}, {byte_size(limit.default)}" if limit.unit == "bytes" else shown


def ingest_limits_option(func: F) -> F:
    """``--limit NAME=VALUE`` (repeatable): the ingest limits of :data:`LIMITS`, as an
    :class:`IngestLimits` (the defaults for the ones not given)."""
    return _limits_option(func, "")


def served_ingest_limits_option(func: F) -> F:
    """:func:`ingest_limits_option` for ``kbsearch serve``, whose help also gives the cap on
    an uploaded file (:data:`MAX_UPLOAD_BYTES`), which no limit raises."""
    cap = byte_size(MAX_UPLOAD_BYTES)
    return _limits_option(
        func, f" An uploaded file over {cap} is refused (413) whatever the limits."
    )


def _limits_option(func: F, also: str) -> F:
    listed = ", ".join(f"{limit.name} ({_amount(limit)})" for limit in LIMITS)
    return click.option(
        "--limit",
        "ingest_limits",
        multiple=True,
        metavar="NAME=VALUE",
        callback=_ingest_limits,
        help=f"An ingest limit; a file over one is refused, nothing of it indexed: {listed}.{also}",
    )(func)
