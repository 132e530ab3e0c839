"""``kbsearch search``, ``explain`` and ``show``: thin wrappers over
:meth:`KnowledgeBase.search`, :meth:`KnowledgeBase.explain` and
:meth:`KnowledgeBase.get_passage`."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import click

from kbsearch.fuse.methods import parse_fusion
from kbsearch.judge.verdict import DONT_SAY, decision_fields
from kbsearch.knowledge_base import DEFAULT_ROUTE, open_kb
from kbsearch.pipeline.explain import RerankPosition, rerank_position
from kbsearch.pipeline.request import check_fusion_settings
from kbsearch.present.snippets import make_snippet
from kbsearch.records import ROUTES
from kbsearch.rerank.stage import RerankReport

from .ask import decision_line, min_confidence_option
from .explain_text import _render_rerank as render_rerank
from .explain_text import render_explanation
from .ingest import staff_hint
from .options import (
    audience_option,
    color_option,
    db_option,
    filter_options,
    fusion_options,
    given_fusion_settings,
    json_option,
    k_option,
    make_filters,
    rerank_options,
    rerank_settings,
)


def snippet(text: str, width: int = 100) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


SNIPPET_WIDTH = 120  # characters of a hit's snippet in the terminal


def marked_snippet(
    text: str, query: str, languages: Sequence[str], section: str = "", width: int = SNIPPET_WIDTH
) -> str:
    """The window of ``text`` that matches ``query``
    (:func:`kbsearch.present.snippets.make_snippet`) on one line, with an ellipsis where the
    passage goes on, its matched words in bold (ANSI
    styles: ``click.echo`` drops them when stdout is not a terminal, or with ``color=False``).
    The title and heading lines the text starts with (up to ``section``'s line) are shown only
    when nothing else matches."""
    head = text.find(f"{section}\n", 0, 400) if section else -1
    skip = head + len(section) + 1 if head >= 0 else 0
    found = make_snippet(text, query, languages or ("en", "fr"), width=width, skip_prefix=skip)
    pieces, last = [], 0
    for start, end in found.marks:
        pieces.append(_one_line(found.text[last:start]))
        pieces.append(click.style(_one_line(found.text[start:end]), bold=True))
        last = end
    pieces.append(_one_line(found.text[last:]))
    line = "".join(pieces).strip()
    return ("…" if found.truncated_left else "") + line + ("…" if found.truncated_right else "")


def rerank_summary(report: RerankReport) -> dict[str, object]:
    """The rerank stage of a search, for ``search --explain --json``: the reranker, its head
    (``top_n``), budget, passages scored, whether the budget ran out, its wall time."""
    return {
        "reranker": report.reranker,
        "top_n": report.top_n,
        "budget_ms": report.budget_ms,
        "scored": report.scored,
        "stopped": report.stopped,
        "elapsed_ms": round(report.elapsed_ms, 3),
    }


def rerank_move(position: RerankPosition | None) -> dict[str, object] | None:
    """A hit's rank before and after the reranker and its score (``None``: not scored)."""
    if position is None:
        return None
    return {"before": position.before, "after": position.after, "score": position.score}


def rerank_stage_line(report: RerankReport) -> str:
    """``rerank (NAME): scored N of the top T in X ms (budget B ms[, ran out...])``, the
    stage's part of ``kbsearch explain``'s rerank lines."""
    stage = render_rerank(RerankPosition.of(report)).splitlines()[-1].strip()
    return f"rerank ({report.reranker}): {stage} (budget {report.budget_ms:g} ms)"


def rerank_hit_line(position: RerankPosition | None) -> str:
    """One hit's rerank line, as ``kbsearch explain`` shows it: its score (or why none) and
    its rank before -> after."""
    if position is None:
        return "rerank: not run"
    return render_rerank(position).splitlines()[0]


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def dumps(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


@click.command("search")
@click.argument("query")
@db_option
@k_option("Hits to return.")
@click.option(
    "--route",
    type=click.Choice(ROUTES),
    default=None,
    help="lexical (BM25), dense (E5 vectors) or hybrid (both, fused)"
    f" [default: {DEFAULT_ROUTE}; lexical on an index without vectors].",
)
@filter_options
@fusion_options
@rerank_options
@click.option("--explain", is_flag=True, help="Show each hit's rank in each route.")
@click.option("--embedder", help="Embedder spec (default: the one the index was built with).")
@min_confidence_option
@json_option
@color_option
def search_command(query: str, db: str, k: int, route: str | None, audience: str,
                   as_of: str | None,
                   lang: str | None, doc_ids: tuple[str, ...], fusion: str, rrf_k: float,
                   depth: int, weights: tuple[float, float], rerank: str | None,
                   rerank_top_n: int | None, rerank_budget_ms: float | None, explain: bool,
                   embedder: str | None, min_confidence: float | None, as_json: bool,
                   color: bool | None) -> None:  # fmt: skip
    """Search the knowledge base, with the confidence that its top 5 answers the query."""
    filters = make_filters(audience, as_of, lang, doc_ids)
    reranking = rerank_settings(rerank, rerank_top_n, rerank_budget_ms)
    spec = parse_fusion(fusion)
    if route is not None:  # refused before the index is opened
        check_fusion_settings(route, spec, rrf_k, weights, given_fusion_settings())
    with open_kb(db, embedder=embedder) as kb:
        if route is None:  # the best route the index supports (as the HTTP API and page)
            route = kb.best_route()
            check_fusion_settings(route, spec, rrf_k, weights, given_fusion_settings())
        assessed = kb.assess(
            query, k=k, route=route, filters=filters, rrf_k=rrf_k, depth=depth,
            weights=weights, min_confidence=min_confidence, fusion=fusion, rerank=reranking,
        )  # fmt: skip
        hits, decision = assessed.hits, assessed.decision
        languages = kb.store.documents.languages(str(filters.audience))
        declined = decision is not None and decision.verdict == DONT_SAY
        asks_why = not as_json and (not hits or declined)
        hint = staff_hint(kb, query, filters, "search") if asks_why else None
    if not hits and not as_json:
        click.echo("no results")
        if hint is not None:
            click.echo(hint, err=True)
        return
    trace = assessed.trace
    report = trace.verdict("rerank") if explain and trace is not None else None
    reranked = report if isinstance(report, RerankReport) else None
    if as_json:
        payload = {"query": query, "route": route, "k": k, **decision_fields(decision)}
        shown = [h.to_dict() for h in hits]
        if reranked is not None and trace is not None:
            payload["rerank"] = rerank_summary(reranked)
            for hit, row in zip(hits, shown, strict=True):
                row["rerank"] = rerank_move(rerank_position(trace, hit.passage_id))
        click.echo(dumps(payload | {"hits": shown}))
        return
    if decision is not None:
        click.echo(decision_line(decision))
    if reranked is not None:
        click.echo(rerank_stage_line(reranked))
    for hit in hits:
        click.echo(f"{hit.rank:>2}. {hit.score:8.4f}  {hit.passage_id}")
        if explain and hit.routes:
            ranks = ", ".join(
                f"{r} #{h.rank} ({h.score:.4f})" for r, h in sorted(hit.routes.items())
            )
            click.echo(f"      routes: {ranks}")
        if reranked is not None and trace is not None:
            click.echo(f"      {rerank_hit_line(rerank_position(trace, hit.passage_id))}")
        line = marked_snippet(hit.text, query, languages, hit.section)
        click.echo(f"      {line}", color=color)
    if hint is not None:
        click.echo(hint, err=True)


@click.command("explain")
@click.argument("query")
@click.argument("passage_id")
@db_option
@filter_options
@fusion_options
@rerank_options
@k_option("Hits of the search (a hybrid search's lists do not depend on it; --depth does).")
@click.option(
    "--route",
    type=click.Choice(ROUTES),
    default=None,
    help="The search's route [default: hybrid; lexical without vectors].",
)
@json_option
@color_option
def explain_command(query: str, passage_id: str, db: str, audience: str, as_of: str | None,
                    lang: str | None, doc_ids: tuple[str, ...], fusion: str, rrf_k: float,
                    depth: int, weights: tuple[float, float], rerank: str | None,
                    rerank_top_n: int | None, rerank_budget_ms: float | None, k: int,
                    route: str | None, as_json: bool, color: bool | None) -> None:  # fmt: skip
    """Explain why PASSAGE_ID ranks where it does for QUERY (the same run as `search
    --explain` with the same options)."""
    filters = make_filters(audience, as_of, lang, doc_ids)
    reranking = rerank_settings(rerank, rerank_top_n, rerank_budget_ms)
    with open_kb(db) as kb:
        searched = route or kb.best_route()
        check_fusion_settings(
            searched, parse_fusion(fusion), rrf_k, weights, given_fusion_settings()
        )
        result = kb.explain(
            query, passage_id, k=k, route=route, filters=filters, rrf_k=rrf_k, depth=depth,
            weights=weights, fusion=fusion, rerank=reranking,
        )  # fmt: skip
    if as_json:
        click.echo(dumps(result.to_dict()))
        return
    # the BM25 terms the passage holds in bold, as search's matched words
    text = render_explanation(result, mark=lambda term: click.style(term, bold=True))
    click.echo(text, color=color)


@click.command("show")
@click.argument("passage_id")
@db_option
@audience_option
@json_option
def show_command(passage_id: str, db: str, audience: str, as_json: bool) -> None:
    """Print one passage; given a document id (DOC_ID or DOC_ID@vVERSION), list its passages."""
    with open_kb(db) as kb:
        passages = kb.document_passages(passage_id, audience=audience)
        if not passages:
            passage = kb.get_passage(passage_id, audience=audience)
            key = (passage.doc_id, passage.version)
            formats = [  # the document's versions, read by its key (not every document)
                d.document.format
                for d in kb.documents(passage.doc_id)
                if (d.document.doc_id, d.document.version) == key
            ]
    if passages:
        if as_json:
            click.echo(dumps({"document": passage_id, "passages": [p.to_dict() for p in passages]}))
            return
        click.echo(f"{passage_id} is a document id; its {len(passages)} passage(s):")
        for p in passages:
            click.echo(f"  {p.passage_id}  {snippet(p.section, 60)}".rstrip())
        return
    if as_json:
        click.echo(dumps(passage.to_dict()))
        return
    # the document's format (md, json...), and "table" for a table passage
    about = [*formats[:1], *(["table"] if passage.kind == "table" else [])]
    about += [f"{passage.token_count} tokens", *([f"page {passage.page}"] if passage.page else [])]
    click.echo(f"{passage.passage_id}  ({', '.join(about)})")
    click.echo(passage.text)
