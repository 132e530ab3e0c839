"""The features of the answer-or-abstain confidence (:mod:`kbsearch.judge.confidence`): what
both routes' ranked lists say about one search (:class:`Evidence`, :func:`features`), and what the
chosen span adds (:func:`span_features`).

Features (all from what the routes return, plus the collection's cosine background):

- ``dense_top``: the dense route's best cosine ``c1``; ``dense_margin``: ``c1 - c2``;
  ``dense_gap``: ``c1 - c10`` (or the last one when fewer).
- ``dense_z``: ``(c1 - mu_q) / sigma_q`` where ``mu_q`` and ``sigma_q`` are the mean and
  standard deviation of the query's cosine over every passage of the collection (exact, from
  the vectors' mean and covariance: ``mu_q = q . m``, ``sigma_q^2 = q' C q``). E5 cosines crowd
  between 0.7 and 1.0, so a raw cosine does not transfer between collections; a z-score does.
- ``dense_local_z``: ``(c1 - mean) / std`` of the dense route's own deep list.
- ``lexical_top``: the best BM25 over the query's maximum possible BM25, ``sum_t IDF(t) * (k1 +
  1)`` (a term's BM25 share tends to ``IDF * (k1 + 1)`` as its frequency grows);
  ``lexical_margin``: the first two BM25 scores' difference over the same maximum.
- ``term_coverage``: IDF-weighted share of the query terms found in the lexical top passage;
  ``dense_coverage``: the same in the dense top passage; ``missing_rare``: the highest IDF of a
  query term the index holds but the lexical top passage lacks, over ``ln((N + 0.5) / 0.5)``;
  ``sentence_coverage``: the best IDF-weighted share of the query terms in a single sentence
  of either route's first three passages (an answer tends to hold the question's words
  together; a passage merely on the topic spreads them); ``unknown_terms``: share of the query
  terms absent from the index (an absent term's IDF is FTS5's for a document frequency of 0,
  so it weighs heavily in the coverages).
- ``overlap``: share of the lexical top 10 also in the dense top 10; ``top_agree``: 1 when both
  routes rank the same passage first; ``cross_lexical``: the dense top passage's BM25 over the
  maximum (0 beyond the lexical list); ``cross_dense``: the lexical top passage's cosine as a
  z-score (beyond the dense list, its last cosine stands in).
- ``log_terms``: ``ln(1 + query words)``.

Features read within the query's own candidate lists (:data:`RELATIVE_FEATURES`: no absolute
cosine or BM25 level, which differs between collections and between the wordings of their
questions):

- ``dense_local_margin``: ``(c1 - c2) / std`` of the dense route's deep list;
  ``lexical_local_z``: ``(b1 - mean) / std`` of the lexical route's list; ``lexical_ratio``:
  ``(b1 - b2) / b1``.
- Hubness (Radovanovic, Nanopoulos and Ivanovic 2010, "Hubs in space", JMLR 11: in high
  dimensions a few points, those near the data's mean, are near every query). A passage's
  centrality is its mean cosine over the collection's passages, ``p . m`` (``m`` the mean
  passage vector; :attr:`Evidence.dense_centrality`), and its hub-corrected score is
  ``h = c - p . m``: CSLS (Conneau et al. 2018, "Word translation without parallel data",
  ``2 cos(q, p) - r_q - r_p``) with the whole collection as every point's neighbourhood,
  halved, the query's own ``r_q = q . m`` being the same for all its candidates. Over the
  first :data:`HUB_DEPTH` dense candidates: ``hub_local_z``, ``(max h - mean h) / std h``;
  ``hub_margin``, the first two ``h``'s difference over ``std h``; ``hub_kept``, 1 when the
  dense top passage is also first by ``h``; ``top_centrality``, the dense top passage's
  ``(p . m - mean) / std`` among those candidates (a hub answers every question a little).
  Without centralities (an evidence made without them) these are 0.

"Terms" above are the query's content words (:class:`kbsearch.judge.evidence.TermStatistics`):
a word stemmed in two languages counts once, so a bilingual collection does not look as if it
lacked the other language's stem of every word. The query's language is not a feature: in the
training mix it only tells the datasets apart (two of the four are French), which does not
transfer to another collection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .span import Span

FEATURES: tuple[str, ...] = (
    "dense_top",
    "dense_margin",
    "dense_gap",
    "dense_z",
    "dense_local_z",
    "lexical_top",
    "lexical_margin",
    "term_coverage",
    "dense_coverage",
    "missing_rare",
    "sentence_coverage",
    "unknown_terms",
    "overlap",
    "top_agree",
    "cross_lexical",
    "cross_dense",
    "log_terms",
)
RELATIVE_FEATURES: tuple[str, ...] = (
    "dense_local_margin",
    "lexical_local_z",
    "lexical_ratio",
    "hub_local_z",
    "hub_margin",
    "hub_kept",
    "top_centrality",
)
# every feature :func:`features` measures (what the training tables hold)
ALL_FEATURES: tuple[str, ...] = FEATURES + RELATIVE_FEATURES
# the features that read the dense route alone; the others (LEXICAL_FEATURES) read the query's
# words or the lexical route and are not measured (NaN) when the evidence's lexical side is missing
DENSE_FEATURES = (
    "dense_top",
    "dense_margin",
    "dense_gap",
    "dense_z",
    "dense_local_z",
    "log_terms",
    "dense_local_margin",
    "hub_local_z",
    "hub_margin",
    "hub_kept",
    "top_centrality",
)
LEXICAL_FEATURES: tuple[str, ...] = tuple(n for n in ALL_FEATURES if n not in DENSE_FEATURES)
# what the chosen span adds (span_features): the second stage that gives the verdict
SPAN_FEATURES: tuple[str, ...] = (
    "retrieval_logit",
    "span_score",
    "span_coverage",
    "span_margin",
    "span_agree",
    "span_rank",
)
# the answer sub-model's features: SPAN_FEATURES but span_agree, whose sign flips between the
# dev sets (on PIAF the other passages agreeing marks a wrong span, on covid_faq_en a right
# one), so it does not transfer: trained on one dev set and judged on the other, the model
# without it separates right spans better both ways (docs/benchmarks.md, "New figures")
ANSWER_FEATURES: tuple[str, ...] = tuple(n for n in SPAN_FEATURES if n != "span_agree")
LOGIT_CLIP = 1e-6  # a retrieval confidence is read within [LOGIT_CLIP, 1 - LOGIT_CLIP]
SENTENCE_DEPTH = 3  # passages of each route whose sentences sentence_coverage reads
OVERLAP_DEPTH = 10  # the top lists compared by ``overlap``
HUB_DEPTH = 20  # the dense candidates whose centrality the hubness features read
GAP_RANK = 10  # dense_gap compares the first cosine with this rank's
BM25_K1 = 1.2  # FTS5's k1 (kbsearch.lexical)


@dataclass(frozen=True)
class Evidence:
    """What the confidence reads for one search.

    ``lexical`` and ``dense``: each route's ranked ``(passage_id, score)`` list, best first,
    under the search's filters (BM25 and cosine), as deep as the search went (the fusion depth).
    ``term_idf``: FTS5's IDF of every distinct analysed query term, in query order (a term
    absent from the index gets ``ln((N + 0.5) / 0.5)``); ``term_known``: whether the index holds
    it; ``term_in_top`` / ``term_in_dense_top``: whether the lexical / dense top passage holds
    it (all False without one). ``passages``: N, the rows of the audience's lexical index.
    ``sentence_coverage``: the highest IDF-weighted share of the query terms found in one
    sentence of the first :data:`SENTENCE_DEPTH` passages of either route.
    ``background_mean``/``background_std``: the query's mean and standard deviation of cosine
    over the whole collection. ``query_language``: ISO 639-1 code of the query.
    ``lexical_missing``: the lexical side says nothing about this search (module docstring).
    ``dense_centrality``: the first :data:`HUB_DEPTH` dense candidates' mean cosine over the
    collection's passages (``p . m``), in the dense list's order (empty: not measured).
    """

    lexical: tuple[tuple[str, float], ...]
    dense: tuple[tuple[str, float], ...]
    term_idf: tuple[float, ...]
    term_known: tuple[bool, ...]
    term_in_top: tuple[bool, ...]
    term_in_dense_top: tuple[bool, ...]
    passages: int
    sentence_coverage: float
    background_mean: float
    background_std: float
    query_language: str = "en"
    lexical_missing: bool = False
    dense_centrality: tuple[float, ...] = ()


def _spread(values: list[float]) -> tuple[float, float]:
    """``(mean, population std)`` of ``values`` (``(0, 0)`` when empty)."""
    if not values:
        return 0.0, 0.0
    mean = math.fsum(values) / len(values)
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))


def relative_features(evidence: Evidence) -> dict[str, float]:
    """The features of :data:`RELATIVE_FEATURES` (module docstring) as ``{name: value}``; a
    spread of 0 (one candidate, or all alike) gives 0."""
    cos = [s for _, s in evidence.dense]
    bm = [s for _, s in evidence.lexical]
    _, cos_std = _spread(cos)
    bm_mean, bm_std = _spread(bm)
    central = list(evidence.dense_centrality[:HUB_DEPTH])
    hub = [c - p for c, p in zip(cos, central, strict=False)]
    hub_mean, hub_std = _spread(hub)
    centre_mean, centre_std = _spread(central)
    ordered = sorted(hub, reverse=True)
    values = {
        "dense_local_margin": (cos[0] - cos[1]) / cos_std if len(cos) > 1 and cos_std > 0 else 0.0,
        "lexical_local_z": (bm[0] - bm_mean) / bm_std if bm_std > 0 else 0.0,
        "lexical_ratio": (bm[0] - bm[1]) / bm[0] if len(bm) > 1 and bm[0] > 0 else 0.0,
        "hub_local_z": 0.0,
        "hub_margin": 0.0,
        "hub_kept": 0.0,
        "top_centrality": 0.0,
    }
    if hub_std > 0:
        values |= {
            "hub_local_z": (ordered[0] - hub_mean) / hub_std,
            "hub_margin": (ordered[0] - ordered[1]) / hub_std,
            "hub_kept": float(hub[0] == ordered[0]),
        }
    if centre_std > 0:
        values["top_centrality"] = (central[0] - centre_mean) / centre_std
    return values


def features(evidence: Evidence) -> dict[str, float]:
    """The features of :data:`ALL_FEATURES` (module docstring) as ``{name: value}``.

    An empty route list gives that route's features their "nothing found" values (cosine 0,
    BM25 share 0, z-scores 0). With ``evidence.lexical_missing`` the features of
    :data:`LEXICAL_FEATURES` are NaN (not measured).
    """
    e = evidence
    cos = [s for _, s in e.dense]
    c1 = cos[0] if cos else 0.0
    c2 = cos[1] if len(cos) > 1 else c1
    c_gap = cos[min(GAP_RANK, len(cos)) - 1] if cos else 0.0
    std = e.background_std if e.background_std > 0 else 1.0
    local_mean = math.fsum(cos) / len(cos) if cos else 0.0
    local_std = math.sqrt(math.fsum((c - local_mean) ** 2 for c in cos) / len(cos)) if cos else 0.0
    bm = [s for _, s in e.lexical]
    maximum = math.fsum(idf * (BM25_K1 + 1) for idf in e.term_idf)
    b1 = bm[0] if bm else 0.0
    b2 = bm[1] if len(bm) > 1 else 0.0
    idf_total = math.fsum(e.term_idf)
    found = math.fsum(idf for idf, hit in zip(e.term_idf, e.term_in_top, strict=True) if hit)
    found_dense = math.fsum(
        idf for idf, hit in zip(e.term_idf, e.term_in_dense_top, strict=True) if hit
    )
    ceiling = math.log((e.passages + 0.5) / 0.5) if e.passages else 1.0
    missing = [
        idf
        for idf, known, hit in zip(e.term_idf, e.term_known, e.term_in_top, strict=True)
        if known and not hit
    ]
    lexical_scores = dict(e.lexical)
    cosines = dict(e.dense)
    cross_bm = lexical_scores.get(e.dense[0][0], 0.0) if e.dense else 0.0
    # the lexical top passage's cosine; beyond the dense list, at most its last cosine
    cross_cos = cosines.get(e.lexical[0][0], cos[-1]) if e.lexical and cos else 0.0
    terms = len(e.term_idf)
    lex_top = {pid for pid, _ in e.lexical[:OVERLAP_DEPTH]}
    dense_top = {pid for pid, _ in e.dense[:OVERLAP_DEPTH]}
    values = {
        "dense_top": c1,
        "dense_margin": c1 - c2,
        "dense_gap": c1 - c_gap,
        "dense_z": (c1 - e.background_mean) / std if cos else 0.0,
        "dense_local_z": (c1 - local_mean) / local_std if local_std > 0 else 0.0,
        "lexical_top": b1 / maximum if maximum > 0 else 0.0,
        "lexical_margin": (b1 - b2) / maximum if maximum > 0 else 0.0,
        "term_coverage": found / idf_total if idf_total > 0 else 0.0,
        "dense_coverage": found_dense / idf_total if idf_total > 0 else 0.0,
        "missing_rare": max(missing, default=0.0) / ceiling,
        "sentence_coverage": e.sentence_coverage,
        "unknown_terms": (terms - sum(e.term_known)) / terms if terms else 0.0,
        "overlap": len(lex_top & dense_top) / OVERLAP_DEPTH,
        "top_agree": float(bool(e.lexical and e.dense and e.lexical[0][0] == e.dense[0][0])),
        "cross_lexical": cross_bm / maximum if maximum > 0 else 0.0,
        "cross_dense": (cross_cos - e.background_mean) / std if e.lexical and cos else 0.0,
        "log_terms": math.log1p(terms),
    }
    values |= relative_features(e)
    if e.lexical_missing:
        values |= dict.fromkeys(LEXICAL_FEATURES, math.nan)
    return values


def span_features(retrieval: float, span: Span | None) -> dict[str, float]:
    """The features of :data:`SPAN_FEATURES` as ``{name: value}``: ``retrieval_logit``,
    ``ln(p / (1 - p))`` of the retrieval confidence ``p`` (clipped to
    ``[LOGIT_CLIP, 1 - LOGIT_CLIP]``), and the chosen span's fields
    (:class:`kbsearch.judge.span.Span`): ``span_score`` (its score against the question),
    ``span_coverage`` (IDF-weighted share of the question's words it holds), ``span_margin``
    (its score minus the best span of another passage), ``span_agree`` (the share of the
    other top passages whose best span covers at least half as much) and ``span_rank`` (its
    passage's rank, from 0). Without a span, every span feature is 0."""
    p = min(max(retrieval, LOGIT_CLIP), 1.0 - LOGIT_CLIP)
    values = {"retrieval_logit": math.log(p / (1.0 - p))}
    if span is None:
        return values | dict.fromkeys(SPAN_FEATURES[1:], 0.0)
    return values | {
        "span_score": span.score,
        "span_coverage": span.coverage,
        "span_margin": span.margin,
        "span_agree": span.agree,
        "span_rank": float(span.passage),
    }
