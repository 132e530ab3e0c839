"""The command line, the library and the docs agree: every command and option is on the CLI
reference page, and the defaults the guide states are the options' defaults, which are the
library's own."""

from __future__ import annotations

import inspect
import re
import typing

import click
import pytest
from support_docs import read, rendered

from kbsearch.cli import cli
from kbsearch.evaluation import evaluate
from kbsearch.evaluation.compare import compare_runs
from kbsearch.fuse.methods import DEFAULT_FUSION
from kbsearch.fuse.rrf import DEFAULT_RRF_K
from kbsearch.index.indexer import DEFAULT_ACCESS
from kbsearch.knowledge_base import DEFAULT_K, DEFAULT_ROUTE, KnowledgeBase, parse_weights
from kbsearch.pipeline import SearchOptions, SearchRequest
from kbsearch.records import Filters
from kbsearch.rerank.rerankers import RerankSettings
from kbsearch.rerank.stage import DEFAULT_BUDGET_MS, DEFAULT_TOP_N

SEARCHING = read("guide/searching.md")


CLI_REFERENCE = rendered("reference/cli.md")


def command(*path: str) -> click.Command:
    found: click.Command = cli
    for name in path:
        assert isinstance(found, click.Group)
        found = found.commands[name]
    return found


def default(path: tuple[str, ...], option: str) -> object:
    params = {p.name: p for p in command(*path).params}
    value = params[option].default
    if value is getattr(click.core, "UNSET", None):  # click 8.3: an option with no default
        return None
    return parse_weights(value) if option == "weights" else value


def library_default(function: object, name: str) -> object:
    """The default of ``function``'s parameter ``name``; a keyword option it takes as
    ``**options: Unpack[SearchOptions]`` (``KnowledgeBase.search``, ``explain``) has the
    default of the :class:`SearchRequest` field it sets."""
    parameters = inspect.signature(function).parameters  # type: ignore[arg-type]
    if name not in parameters and name in typing.get_type_hints(SearchOptions):
        assert any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
        return inspect.signature(SearchRequest).parameters[name].default
    return parameters[name].default


def all_commands() -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for name, cmd in cli.commands.items():
        if isinstance(cmd, click.Group):
            out += [(name, sub) for sub in cmd.commands]
        else:
            out.append((name,))
    return out


@pytest.mark.parametrize("path", all_commands(), ids=" ".join)
def test_every_command_and_option_is_on_the_cli_reference(path: tuple[str, ...]) -> None:
    """The reference page (generated at build time) has a section per command, with a row
    per option naming each of its spellings."""
    found = re.search(
        rf"^#+ kbsearch {re.escape(' '.join(path))}\n(.*?)(?=^#+ kbsearch |\Z)",
        CLI_REFERENCE,
        re.S | re.M,
    )
    assert found is not None, f"kbsearch {' '.join(path)} is not on the CLI reference"
    rows = re.findall(r"^\| `([^`]*)` \|", found.group(1), re.M)
    for param in command(*path).params:
        if isinstance(param, click.Option):
            spelled = [row for row in rows if param.opts[-1] in re.split(r"[ ,/]+", row)]
            assert spelled, f"kbsearch {' '.join(path)}: {param.opts[-1]} is not on the page"


@pytest.mark.parametrize("path", all_commands(), ids=" ".join)
def test_every_option_says_what_it_does(path: tuple[str, ...]) -> None:
    bare = [
        "/".join(p.opts)
        for p in command(*path).params
        if isinstance(p, click.Option) and not p.help and p.name != "help"
    ]
    assert not bare, f"kbsearch {' '.join(path)}: options without help: {bare}"


@pytest.mark.parametrize(
    ("path", "option", "function", "parameter"),
    [
        (("search",), "k", KnowledgeBase.search, "k"),
        (("search",), "depth", KnowledgeBase.search, "depth"),
        (("search",), "rrf_k", KnowledgeBase.search, "rrf_k"),
        (("search",), "weights", KnowledgeBase.search, "weights"),
        (("explain",), "depth", KnowledgeBase.explain, "depth"),
        (("explain",), "rrf_k", KnowledgeBase.explain, "rrf_k"),
        (("explain",), "weights", KnowledgeBase.explain, "weights"),
        (("show",), "audience", KnowledgeBase.get_passage, "audience"),
        (("index",), "default_access", KnowledgeBase.index, "default_access"),
        (("eval",), "k", evaluate, "k"),
        (("eval",), "depth", evaluate, "depth"),
        (("bench",), "k", evaluate, "k"),
        (("compare",), "resamples", compare_runs, "resamples"),
        (("compare",), "seed", compare_runs, "seed"),
        (("compare",), "alpha", compare_runs, "alpha"),
        (("compare",), "test", compare_runs, "test"),
    ],
)
def test_option_defaults_are_the_library_defaults(
    path: tuple[str, ...], option: str, function: object, parameter: str
) -> None:
    assert default(path, option) == library_default(function, parameter)


@pytest.mark.parametrize("path", [("search",), ("explain",)])
def test_filter_defaults_are_the_library_defaults(path: tuple[str, ...]) -> None:
    assert default(path, "audience") == Filters().audience
    assert default(path, "as_of") is None and Filters().as_of is None  # today


def option_help(name: str) -> str:
    """The help text of ``kbsearch search``'s option ``name``."""
    found = [p for p in command("search").params if p.name == name]
    assert found and isinstance(found[0], click.Option)
    return found[0].help or ""


def test_readme_states_the_real_search_defaults() -> None:
    stated = re.search(
        r"Search defaults: route `(\w+)`(?: \([^)]*\))?, `--k (\d+)`, audience `(\w+)`"
        r".*?`--fusion (\w+)` over "
        r"each route's top (\d+).*?`--rrf-k` \(default (\d+)\) and route `--weights` \(default "
        r"`([\d.,]+)`",
        SEARCHING,
        re.S,
    )
    assert stated is not None, "the guide's search defaults sentence changed"
    route, k, audience, fusion, depth, rrf_k, weights = stated.groups()
    assert fusion == default(("search",), "fusion") == DEFAULT_FUSION
    # the CLI's route default is the best the index supports: hybrid, the library's default
    assert route == library_default(KnowledgeBase.search, "route") == DEFAULT_ROUTE
    assert default(("search",), "route") is None and DEFAULT_ROUTE in option_help("route")
    assert int(k) == default(("search",), "k") == DEFAULT_K
    assert audience == default(("search",), "audience")
    assert float(rrf_k) == default(("search",), "rrf_k") == DEFAULT_RRF_K
    assert parse_weights(weights) == default(("search",), "weights")
    assert int(depth) == default(("search",), "depth")


def test_readme_states_the_real_index_and_eval_defaults() -> None:
    indexing = read("guide/indexing.md")
    access = re.search(r"gets `--default-access` \(`(\w+)` for a new index", indexing)
    assert access is not None and access.group(1) == DEFAULT_ACCESS
    evaluation = re.search(
        r"`eval` and `bench` defaults: `--k (\d+)`[^`]*`--depth (\d+)`", read("guide/evaluation.md")
    )
    assert evaluation is not None
    assert int(evaluation.group(1)) == default(("eval",), "k") == default(("bench",), "k")
    assert int(evaluation.group(2)) == default(("eval",), "depth")


def test_readme_states_the_real_rerank_defaults() -> None:
    stated = re.search(
        r"`--rerank-top-n`, default (\d+)\)\s+within a time budget \(`--rerank-budget-ms`, "
        r"default (\d+) ms",
        SEARCHING,
    )
    assert stated is not None, "the guide's reranking sentence changed"
    top_n, budget = int(stated.group(1)), float(stated.group(2))
    assert (top_n, budget) == (DEFAULT_TOP_N, DEFAULT_BUDGET_MS)
    assert RerankSettings.of("cross-encoder:x") == RerankSettings("cross-encoder:x", top_n, budget)
    for path in (("search",), ("explain",), ("eval",), ("bench",)):
        option = {p.name: p for p in command(*path).params}["rerank_top_n"]
        assert isinstance(option, click.Option) and f"[default: {top_n}]" in (option.help or "")
