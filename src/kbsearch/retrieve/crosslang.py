"""Cross-language candidates: where a route's evidence does not apply to a passage.

BM25 matches the query's words, so a passage written in another language than the query gets a
lexical score of (nearly) 0 however well it answers: "how long does delivery to Belgium take"
shares no word with the French page on "délais de livraison". Read as evidence, that 0 says
"the lexical route found nothing", and every fusion turns it against the passage. It is not
evidence: the route could not judge the passage at all. The multilingual dense route can.

So, in an index where the audience sees more than one language (after the language filter),
a passage whose document language differs from the query's has its lexical evidence **not
applicable**: missing, not zero. The fusions treat a route that does not apply to a candidate
as absent rather than as its lowest score (:mod:`kbsearch.fuse.rrf`,
:mod:`kbsearch.fuse.convex`, :mod:`kbsearch.fuse.learned`), and ``explain``
says so. A monolingual index (or a search filtered to one language) marks nothing: when every
candidate is in the same language the routes' scores compare like with like, whatever the
query's language, and results are the same as without this module.

The query's language is the best of all py3langid's languages
(:func:`kbsearch.text.language.detect_any`) on a query of at least
:data:`kbsearch.text.language.MIN_LETTERS` letters: one of the visible languages detected with
probability :data:`CONFIDENT` is trusted; another language detected with probability
:data:`FOREIGN` makes it unknown (``None``, nothing marked: a German question in an English and
French index, read as English, would have every French passage's lexical evidence replaced for
a query that matches neither language's words); an unsure detection (a short question: "Do
you deliver to Corsica?" comes out en 0.67, pcm 0.06) falls back to
:func:`query_language`, which prefers English and French, when that is a visible language.
Marking a candidate never discards its own lexical evidence (the fusions read the better of
its own and the imputed), so an unsure mark costs little; a missed one leaves a lexical 0
counted against every passage in the other language.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from ..text.analysis import QUERY_CACHE
from ..text.language import MIN_LETTERS, detect_any, detect_language, letters

# the routes whose evidence is about the query's words, so holds only within its language
LANGUAGE_BOUND = frozenset({"lexical"})
# py3langid's probabilities (softmax over its 97 languages at temperature sqrt(bytes)): clear
# one-language questions reach 0.9+, but closely related languages share the mass ("¿cuánto
# tarda la entrega a Bélgica?": es 0.59, ext 0.16, an 0.07); a query mixing languages
# ("combien de temps does shipping take", en 0.42) falls below and falls back to the
# en/fr-preferring detection
CONFIDENT = 0.55
# a language the index does not hold, detected this surely, means the query is in none of them
# (German questions 0.95, Spanish 0.59-0.85); of the four shared datasets' 4,910 EN/FR queries,
# one (piaf_fr) has another language at 0.55+
FOREIGN = 0.55


@lru_cache(maxsize=QUERY_CACHE)
def query_language(query: str) -> str:
    """:func:`kbsearch.text.language.detect_language` of a query (``"en"`` when too short),
    which ranks a short text's languages once per process: detection costs ~0.3 ms a query,
    and every reader of a query's language (fusion here, the abstention evidence) shares that
    one cache."""
    return detect_language(query)


@lru_cache(maxsize=QUERY_CACHE)
def _detected(query: str) -> tuple[str, float] | None:
    """:func:`kbsearch.text.language.detect_any` of a query, cached per process."""
    return detect_any(query)


def query_language_among(query: str, languages: Sequence[str]) -> str | None:
    """The ISO 639-1 code of ``query``'s language when it can tell candidates apart: ``None``
    when ``languages`` (those the search can return) are fewer than two (without detecting
    anything), the query is too short to detect (under ``MIN_LETTERS`` letters), its most
    likely language (of all py3langid knows) is none of them with probability at least
    :data:`FOREIGN`, or detection is unsure and :func:`query_language` (which prefers English
    and French) is none of them either (module docstring)."""
    if len(set(languages)) < 2 or letters(query) < MIN_LETTERS:
        return None
    found = _detected(query)
    if found is not None and found[0] in languages and found[1] >= CONFIDENT:
        return found[0]
    if found is not None and found[0] not in languages and found[1] >= FOREIGN:
        return None
    preferred = query_language(query)
    return preferred if preferred in languages else None


def is_cross_language(query_language: str | None, document_language: str) -> bool:
    """True when the query's language is known and the document's differs from it."""
    return query_language is not None and document_language != query_language


def not_applicable(
    query_language: str | None, languages: Mapping[str, str]
) -> dict[str, frozenset[str]]:
    """``{passage_id: routes that do not apply}`` for the passages of ``languages``
    (``{passage_id: document language}``) written in another language than the query's;
    empty when the query's language is unknown."""
    return {
        pid: LANGUAGE_BOUND
        for pid, language in languages.items()
        if is_cross_language(query_language, language)
    }
