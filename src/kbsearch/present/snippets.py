"""Snippets: the part of a passage that answers the query, with the matched words marked.

A passage is cut into sentences; each sentence is scored by the query terms it contains
(each distinct term counted once, weighted by ``term_weights`` when given, e.g. BM25 IDF),
and the best sentence is the snippet, widened with its neighbours up to ``width`` characters
or narrowed to the densest ``width``-character window when it is longer. Words are matched
the way the lexical route matches them: the query's French elisions and stop words are
dropped first (acronyms kept), as the lexical route drops them (``how do I return an item``
marks "return" and "item" only; a query of stop words only keeps them all), and a passage
word matches a query word when its lower-cased, accent-folded form or its Snowball stem (in any of
``languages``) equals the query word's (see :mod:`kbsearch.text.analysis`). A hit that the dense
route alone found may share no content word with the query: then ``sentence_scores`` pick the
sentence: each sentence's share of the query words' character trigrams
(:func:`trigram_scores`: "deliverable" finds "delivery", which no stem matches), or any other
score, such as a cosine to the query; without them the first sentence of the body is shown.

The records are plain values; :func:`make_snippet` never reads the index, so it cannot show
more than the passage it is given.
"""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..text.analysis import content_query_words, fold_diacritics, fold_ligatures
from ..text.matching import (
    TOKEN,
    match_spans,
    query_keys,
    sentence_spans,
)

DEFAULT_WIDTH = 240


@dataclass(frozen=True)
class Snippet:
    """A window of a passage's text.

    Attributes:
        text: the window, as it stands in the passage (no ellipses added).
        start, end: character offsets of the window in the passage text (``end`` exclusive).
        marks: ``(start, end)`` character offsets of the matched words, relative to ``text``.
        truncated_left, truncated_right: whether the passage goes on before / after the window.
    """

    text: str
    start: int
    end: int
    marks: tuple[tuple[int, int], ...]
    truncated_left: bool
    truncated_right: bool

    def to_dict(self) -> dict[str, object]:
        return {
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "marks": [list(m) for m in self.marks],
            "truncated_left": self.truncated_left,
            "truncated_right": self.truncated_right,
        }

    def marked(self, before: str = "<mark>", after: str = "</mark>", escape: bool = False) -> str:
        """The text with each matched word wrapped in ``before``/``after``; with ``escape``,
        the rest is HTML-escaped (for a page)."""
        out: list[str] = []
        last = 0
        esc = html.escape if escape else (lambda s: s)
        for start, end in self.marks:
            out += [esc(self.text[last:start]), before, esc(self.text[start:end]), after]
            last = end
        out.append(esc(self.text[last:]))
        return "".join(out)


def trigram_scores(sentences: Sequence[str], query: str) -> list[float]:
    """For each sentence, the share of the query's character trigrams it contains: the
    trigrams of each content word of the query (:func:`content_query_words`), NFKC-normalised,
    lower-cased and accent-folded, padded with a space on each side (``" de", "del", ...,
    "ry "``), against those of the sentence's words; 0.0 each when the query has no word. A
    lexical stand-in for a sentence's similarity to the query when no word matches (character
    n-gram overlap, Cavnar and Trenkle 1994). Cost: linear in the sentences' length.

    Returns: one score in [0, 1] per sentence."""
    wanted = _trigrams(content_query_words(query))
    if not wanted:
        return [0.0] * len(sentences)
    return [len(wanted & _sentence_trigrams(s)) / len(wanted) for s in sentences]


@lru_cache(maxsize=16384)
def _sentence_trigrams(sentence: str) -> frozenset[str]:
    """A sentence's trigrams, cached per process (the same passages' sentences come back
    search after search)."""
    return _trigrams(TOKEN.findall(sentence))


def _trigrams(tokens: Sequence[str]) -> frozenset[str]:
    out: set[str] = set()
    for token in tokens:
        folded = fold_diacritics(fold_ligatures(unicodedata.normalize("NFKC", token)).lower())
        padded = f" {folded} "
        out.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return frozenset(out)


def make_snippet(
    text: str,
    query: str,
    languages: Sequence[str] = ("en", "fr"),
    *,
    width: int = DEFAULT_WIDTH,
    term_weights: Mapping[str, float] | None = None,
    sentence_scores: Sequence[float] | None = None,
    skip_prefix: int = 0,
    matches: list[tuple[int, int, str]] | None = None,
) -> Snippet:
    """The best window of ``text`` for ``query``.

    Args:
        text: the passage text.
        query: the user's query.
        languages: stemming languages used to match words (the index's languages).
        width: the largest window, in characters (at least 40).
        term_weights: weight of each query word (lower-cased, accents folded), default 1.
        sentence_scores: one score per sentence of :func:`sentence_spans` (higher is closer),
            used when no sentence contains a query word.
        skip_prefix: characters at the start (the title and heading lines the passage text
            begins with) that are not chosen as the snippet unless nothing else matches.
        matches: ``match_spans(text, query_keys(query, languages), languages)`` when the
            caller has it already (computed here otherwise).

    Raises:
        ValueError: ``width`` below 40, or ``sentence_scores`` of the wrong length.
    """
    if width < 40:
        raise ValueError(f"snippet width must be at least 40 characters, got {width}")
    spans = sentence_spans(text) or [(0, len(text))]
    if sentence_scores is not None and len(sentence_scores) != len(spans):
        raise ValueError(
            f"{len(sentence_scores)} sentence scores for {len(spans)} sentences of the passage"
        )
    if matches is None:
        matches = match_spans(text, query_keys(query, languages), languages)
    weight = (lambda w: term_weights.get(w, 1.0)) if term_weights else (lambda w: 1.0)

    def lexical_score(span: tuple[int, int]) -> float:
        return sum(weight(w) for w in {w for s, e, w in matches if span[0] <= s and e <= span[1]})

    body = [i for i, (s, _) in enumerate(spans) if s >= skip_prefix] or list(range(len(spans)))
    scores = [lexical_score(spans[i]) for i in body]
    if max(scores, default=0.0) > 0:
        best = body[max(range(len(body)), key=lambda j: (scores[j], -j))]
    elif any(lexical_score(span) > 0 for span in spans):
        best = max(range(len(spans)), key=lambda i: (lexical_score(spans[i]), -i))
    elif sentence_scores is not None:
        best = max(body, key=lambda i: (sentence_scores[i], -i))
    else:
        best = body[0]
    start, end = _window(text, spans, best, matches, width)
    marks = tuple((s - start, e - start) for s, e, _ in matches if start <= s and e <= end)
    return Snippet(text[start:end], start, end, marks, start > 0, end < len(text))


def _window(
    text: str,
    spans: list[tuple[int, int]],
    best: int,
    matches: list[tuple[int, int, str]],
    width: int,
) -> tuple[int, int]:
    start, end = spans[best]
    if end - start > width:  # the densest window of the sentence, cut at word boundaries
        inside = [s for s, e, _ in matches if start <= s and e <= end]
        anchor = start
        if inside:
            anchor = max(inside, key=lambda a: sum(1 for b in inside if a <= b < a + width))
            anchor = max(start, anchor - width // 4)
        cut_start = _word_start(text, anchor, start)
        cut_end = _word_end(text, min(end, cut_start + width), cut_start)
        return cut_start, cut_end
    i, j = best, best  # widen with whole neighbouring sentences, following ones first
    while True:
        if j + 1 < len(spans) and spans[j + 1][1] - start <= width:
            j += 1
            end = spans[j][1]
        elif i > 0 and end - spans[i - 1][0] <= width:
            i -= 1
            start = spans[i][0]
        else:
            return start, end


def _word_start(text: str, pos: int, floor: int) -> int:
    while pos > floor and TOKEN.match(text[pos - 1]):
        pos -= 1
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _word_end(text: str, pos: int, floor: int) -> int:
    if pos >= len(text):
        return len(text)
    back = pos
    while back > floor and TOKEN.match(text[back - 1]) and TOKEN.match(text[back]):
        back -= 1
    return back if back > floor else pos
