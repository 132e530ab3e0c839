"""How passage words match query words, and where a passage's sentences are: what snippets
(:mod:`kbsearch.present.snippets`), the abstention evidence and the answer's span share.

A passage word matches a query word when its lower-cased, accent-folded form (NFKC, ligatures
folded) or its Snowball stem in any of the languages given equals the query word's; the query's
words are its content words (:func:`kbsearch.text.analysis.content_query_words`: French
elisions and stop words dropped, acronyms kept), as the lexical route searches them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from functools import lru_cache

from .analysis import (
    QUERY_CACHE,
    STEMMER_LANGUAGES,
    content_query_words,
    fold_diacritics,
    fold_ligatures,
    stem_words,
)

SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n+")
FULL_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")  # clauses after ; and : kept together
TOKEN = re.compile(r"[^\W_]+")


def _norm(token: str) -> str:
    return fold_diacritics(fold_ligatures(unicodedata.normalize("NFKC", token)).lower())


def _word_keys(token: str, languages: tuple[str, ...]) -> tuple[str, ...]:
    # in a fixed order (the folded word, then its stems language by language), so that a
    # token matching two query words marks the same one in every process (a set's order
    # follows the per-process string hash)
    lowered = fold_ligatures(unicodedata.normalize("NFKC", token)).lower()
    keys = [fold_diacritics(lowered)]
    for lang in languages:
        keys += stem_words([lowered], lang)
    return tuple(dict.fromkeys(keys))


# the keys of passage words, cached: the passages' vocabulary is bounded by the collection,
# while every new query word would add an entry (~0.7 KB) that no passage may ever ask for:
# with every query text new, a served process grew ~40 MB over 10 minutes filling it
_keys = lru_cache(maxsize=65536)(_word_keys)


def query_keys(query: str, languages: Sequence[str]) -> dict[str, str]:
    """Match keys of ``query``'s content words (the words the lexical route searches for,
    :func:`kbsearch.text.analysis.content_query_words`): key -> the
    query word it came from.

    ``languages``: the stemming languages to try (unknown ones are ignored; English when none).
    """
    langs = tuple(lang for lang in languages if lang in STEMMER_LANGUAGES) or ("en",)
    return dict(_query_keys(query, langs))


@lru_cache(maxsize=QUERY_CACHE)
def _query_keys(query: str, langs: tuple[str, ...]) -> dict[str, str]:
    # cached: a served search asks it for every hit of the page, with the same query
    out: dict[str, str] = {}
    for word in content_query_words(query):
        for key in _word_keys(word, langs):  # not through _keys (see above)
            out.setdefault(key, _norm(word))
    return out


def sentence_spans(text: str, clauses: bool = True) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text`` (split after . ! ? ; : and at line
    breaks; with ``clauses=False`` after . ! ? and at line breaks only), leading and trailing
    spaces excluded; empty sentences dropped."""
    return list(_sentence_spans(text, clauses))


@lru_cache(maxsize=4096)
def _sentence_spans(text: str, clauses: bool) -> tuple[tuple[int, int], ...]:
    # cached: the same passages come back search after search (snippets, abstention evidence)
    spans, start = [], 0
    for m in (SENTENCE_END if clauses else FULL_SENTENCE_END).finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return tuple(out)


def match_spans(
    text: str, keys: Mapping[str, str], languages: Sequence[str]
) -> list[tuple[int, int, str]]:
    """``(start, end, query word)`` of each word of ``text`` that matches a query key (a word
    matching several: the query word of its first key in :func:`_keys` order)."""
    langs = tuple(lang for lang in languages if lang in STEMMER_LANGUAGES) or ("en",)
    spans, where = _passage_keys(text, langs)
    best: dict[int, tuple[int, str]] = {}  # token -> (its key's order, query word)
    for key, word in keys.items():
        for token, order in where.get(key, ()):
            if token not in best or order < best[token][0]:
                best[token] = (order, word)
    return [(*spans[t], best[t][1]) for t in sorted(best)]


@lru_cache(maxsize=1024)  # ~20 KB a passage of 150 words
def _passage_keys(
    text: str, langs: tuple[str, ...]
) -> tuple[tuple[tuple[int, int], ...], dict[str, tuple[tuple[int, int], ...]]]:
    # the words of a passage and, per match key, the words having it (with the key's order
    # among the word's keys), cached per passage text: the same passages are matched against
    # query after query, and a query has a few keys where a passage has a hundred words
    spans: list[tuple[int, int]] = []
    where: dict[str, list[tuple[int, int]]] = {}
    for token, m in enumerate(TOKEN.finditer(text)):
        spans.append((m.start(), m.end()))
        for order, key in enumerate(_keys(m.group(), langs)):
            where.setdefault(key, []).append((token, order))
    return tuple(spans), {key: tuple(v) for key, v in where.items()}
