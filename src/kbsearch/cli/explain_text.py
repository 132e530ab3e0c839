"""Plain-text rendering of a :class:`~kbsearch.pipeline.explain.Explanation`
(`kbsearch explain`)."""

from __future__ import annotations

from collections.abc import Callable

from kbsearch.pipeline.explain import Explanation, RerankPosition, RoutePosition


def _pos(p: RoutePosition, score: str = "score") -> str:
    if p.score is None:
        return "not retrieved"
    rank = f"rank {p.rank}" if p.rank is not None else "beyond depth"
    return f"{rank}, {score} {p.score:.6f}"


def render_explanation(e: Explanation, mark: Callable[[str], str] = str) -> str:
    """The explanation as lines; ``mark`` styles each BM25 term the passage holds (e.g. bold
    on a terminal, as ``search`` marks matched words)."""
    text = _render_routes(e, mark)
    return text if e.rerank is None else text + "\n" + _render_rerank(e.rerank)


def _render_routes(e: Explanation, mark: Callable[[str], str]) -> str:
    lines = [f"{e.passage_id} for {e.query!r}", f"query terms: {' '.join(e.terms)}", ""]
    lines.append(f"lexical (BM25): {_pos(e.lexical)}")
    if "lexical" in e.not_applicable:
        lines.append(f"  {e.reading('lexical')}")
    b = e.bm25
    lines.append(f"  N={b.passages} passages, avgdl={b.avgdl:.3f}, |D|={b.length}")
    for t in b.terms:
        term = (mark(t.term) if t.tf else t.term) + " " * (16 - len(t.term))
        lines.append(
            f"  {term} idf={t.idf:.6f} tf={t.tf} df={t.document_frequency} "
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
    if e.fused.score is not None:
        lines.append(e.legend())
    if e.fusion != "rrf":
        lines.append(f"hybrid ({e.fusion}): {_pos(e.fused, 'fused score')}")
        if "title" in e.scores and "title" not in e.parts:
            lines.append(f"  title (heading cosine): {e.scores['title']:.6f}")
        for route, value in e.parts.items():
            raw = f" (score {e.scores[route]:.6f})" if route in e.scores else ""
            if route in e.read and e.fusion.startswith("learned"):
                raw += " (its features: the better of own and imputed, above)"
            elif route in e.read:
                own, imputed = e.read[route]
                raw += f" max(own {own:.6f}, imputed {imputed:.6f})"
            lines.append(f"  {route}{raw}: part {value:.6f}")
        lines.append(f"  sum of the parts = {e.parts_total:.6f}")
        return "\n".join(lines)
    lines.append(
        f"hybrid (RRF, k={e.rrf_k:g}, weights lexical={e.weights[0]:g} "
        f"dense={e.weights[1]:g}): {_pos(e.fused, 'fused score')}"
    )
    for route, value in e.rrf_parts.items():
        c = e.rrf.get(route)
        given = f"weight/(k + {c.rank}) = {c.value:.6f}" if c else "not listed: 0"
        if route in e.read:
            given = f"max(own {given}, imputed {e.read[route][1]:.6f}) -> {value:.6f}"
        lines.append(f"  {route}: part {given}")
    lines.append(f"  sum of the parts = {e.rrf_total:.6f}")
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
