"""Plain-text rendering of a :class:`~kbsearch.search.explain.Explanation` (`kbsearch explain`)."""

from __future__ import annotations

from kbsearch.search.explain import Explanation, RerankPosition, RoutePosition


def _pos(p: RoutePosition) -> str:
    if p.score is None:
        return "not retrieved"
    rank = f"rank {p.rank}" if p.rank is not None else "beyond depth"
    return f"{rank}, score {p.score:.6f}"


def render_explanation(e: Explanation) -> str:
    text = _render_routes(e)
    return text if e.rerank is None else text + "\n" + _render_rerank(e.rerank)


def _render_routes(e: Explanation) -> str:
    lines = [f"{e.passage_id} for {e.query!r}", f"query terms: {' '.join(e.terms)}", ""]
    lines.append(f"lexical (BM25): {_pos(e.lexical)}")
    if "lexical" in e.not_applicable:
        lines.append(
            f"  not applicable ({e.not_applicable['lexical']}): fusion reads it as missing, not 0"
        )
    b = e.bm25
    lines.append(f"  N={b.passages} passages, avgdl={b.avgdl:.3f}, |D|={b.length}")
    for t in b.terms:
        lines.append(
            f"  {t.term:<16} idf={t.idf:.6f} tf={t.tf} df={t.document_frequency} "
            f"norm={t.length_norm:.6f} -> {t.contribution:.6f}"
        )
    if b.ignored:
        lines.append(
            f"  ignored (in at least half of the passages, IDF clamped to 1e-6): "
            f"{' '.join(b.ignored)}"
        )
    lines.append(f"  sum = {b.score:.6f}")
    if e.dense is None:  # an index without vectors: one route, no hybrid
        return "\n".join(lines)
    lines.append(f"dense (cosine): {_pos(e.dense)}")
    if e.fusion != "rrf":
        lines.append(f"hybrid ({e.fusion}): {_pos(e.fused)}")
        if "title" in e.scores and "title" not in e.parts:
            lines.append(f"  title (heading cosine): {e.scores['title']:.6f}")
        for route, value in e.parts.items():
            raw = f" (score {e.scores[route]:.6f})" if route in e.scores else ""
            raw = " (not applicable: missing)" if route in e.not_applicable else raw
            lines.append(f"  {route}{raw}: weighted, normalised part {value:.6f}")
        lines.append(f"  sum = {e.parts_total:.6f}")
        return "\n".join(lines)
    lines.append(
        f"hybrid (RRF, k={e.rrf_k:g}, weights lexical={e.weights[0]:g} "
        f"dense={e.weights[1]:g}): {_pos(e.fused)}"
    )
    for route, c in sorted(e.rrf.items()):
        lines.append(f"  {route}: weight/(k + {c.rank}) = {c.value:.6f}")
    if e.rrf_scale != 1.0:
        lines.append(
            f"  x {e.rrf_scale:g} (total weight / weight of the routes that apply:"
            f" not {', '.join(e.not_applicable)})"
        )
    lines.append(f"  sum = {e.rrf_total:.6f}")
    return "\n".join(lines)


def _rank(rank: int | None) -> str:
    return "not listed" if rank is None else f"#{rank}"


def _render_rerank(r: RerankPosition) -> str:
    if r.score is not None:
        score = f"score {r.score:.6f}"
    elif r.before is not None and r.before <= r.top_n and r.stopped:
        score = "not scored (the budget ran out first)"
    else:
        score = f"not scored (below the top {r.top_n})"
    budget = ", budget ran out: the rest kept the fused order" if r.stopped else ""
    return (
        f"rerank ({r.reranker}): {score}; rank {_rank(r.before)} -> {_rank(r.after)}\n"
        f"  scored {r.scored} of the top {r.top_n} in {r.elapsed_ms:.1f} ms{budget}"
    )
