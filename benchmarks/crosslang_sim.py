"""Cross-language questions simulated on the one-language ranking dumps (``ranking_dump.py``).

No shared dataset mixes languages, so a question whose answer is in another language than its
own is simulated: a share of its candidates (drawn per question, uniform in :data:`SHARE`) is
taken to be written in another language. Those passages leave the lexical list (BM25 cannot
match them) and keep their dense score and rank (the multilingual dense route can). Two uses:

- **training augmentation** (``train_fusion.py --augment N``): N extra copies of each training
  question, each marking a fresh random share of its candidates (relevant ones included, at the
  same rate) as lexical-missing (``FusionCandidate.not_applicable``), so the trees learn where a
  missing lexical value goes;
- **a dev measure** ("simulated cross-language"): each held-out question once, with its
  relevant passages always in the other language plus a random share of the rest; fused as
  kbsearch does now (``missing``: the lexical route does not apply to them, and they share no
  word with the question: BM25 0, out of the lexical list), as it did before (``zero``: they
  are scored 0 by BM25 like any passage that matches no query word), and with the words shared
  (``shared``: marked as not applicable, but they keep their BM25 score and lexical rank, as a
  product code or a name matched across languages does: the upper bound of such evidence).

Deterministic: one ``numpy`` generator per dataset with a fixed seed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ranking_lab import candidates  # noqa: E402

from kbsearch.fuse.convex import FusionCandidate  # noqa: E402
from kbsearch.retrieve.crosslang import LANGUAGE_BOUND  # noqa: E402

SHARE = (0.2, 0.8)  # a question's share of candidates in the other language
SEED = 13


def missing_sets(
    questions: list[dict], lexical: str, seed: int, relevant: bool
) -> list[frozenset[str]]:
    """Per question, the passages taken to be in another language: each candidate with the
    question's drawn share as probability, plus (``relevant``) every relevant one."""
    rng = np.random.default_rng(seed)
    out = []
    for q in questions:
        ids = sorted({p for p, _ in q[lexical]} | {p for p, _ in q["dense"]})
        share = rng.uniform(*SHARE)
        draw = rng.random(len(ids))
        chosen = {p for p, u in zip(ids, draw, strict=True) if u < share}
        if relevant:
            chosen |= {p for p in ids if q["qrels"].get(q["info"][p]["key"], 0) > 0}
        out.append(frozenset(chosen))
    return out


def crossed(
    q: dict, missing: frozenset[str], lexical: str, how: str
) -> tuple[dict, list[FusionCandidate]]:
    """The question with ``missing`` passages in another language, and its candidates:
    ``how`` = ``"missing"``: out of the lexical list, BM25 0, marked as out of the lexical
    route's reach (kbsearch now); ``"zero"``: out of the list, BM25 0, unmarked (what fusion saw
    before); ``"shared"``: marked, but keeping their lexical score and rank (words shared
    across the languages)."""
    if how == "shared":
        return q, [
            FusionCandidate(c.passage_id, c.scores, c.ranks, LANGUAGE_BOUND)
            if c.passage_id in missing
            else c
            for c in candidates(q, lexical, True)
        ]
    q2 = {**q, lexical: [(p, s) for p, s in q[lexical] if p not in missing]}
    out = []
    for c in candidates(q2, lexical, True):
        if c.passage_id not in missing:
            out.append(c)
        else:
            marks = LANGUAGE_BOUND if how == "missing" else frozenset()
            out.append(FusionCandidate(c.passage_id, {**c.scores, "lexical": 0.0}, c.ranks, marks))
    return q2, out
