"""The span that answers: the sentence (or short run of sentences) of the top passages that
best answers the question.

Candidates are the sentences (:func:`kbsearch.text.sentences.sentences`) of the bodies of the
first :data:`PASSAGES` passages (after their title and heading lines), passed over when they:

- restate the question: a sentence ending in "?", or one whose content words are all the
  question's (at least :data:`RESTATE_WORDS` of them);
- only introduce the page: one of a passage's first two sentences that speaks of "this
  page/article/guide/section" ("cette page", "cet article", ...), :data:`INTRODUCTION`.

Each candidate span ``s`` (a run of sentences, below) of the passage at rank ``r`` (from 1)
scores

    score(s) = local(s) + DENSE_WEIGHT * (cos(p) - cos(p1)) - RANK_WEIGHT * (r - 1)
               + HEADING_WEIGHT * (hcos(p) - max hcos)
               + LENGTH_BONUS * len(s) / SPAN_WIDTH
               + NUMBER_BONUS * [the question asks for a number and s holds a digit]
               + DATE_BONUS * [the question asks when and s holds a date]
               + SENTENCE_WEIGHT * (max cos(sentence of s) - max cos(any sentence))
               + LEAD_WEIGHT * heading(p, s) * [s opens the body, or a part of it]

``local(s)``: the share of the question's content words the span holds, each weighted by its
IDF and by how few of the passage's sentences hold it (:func:`local_weights`; words matched on
their stems, as the abstention evidence matches them; a table row holds its header row's
words too, :func:`table_headers`; a word of the passage's title or headings, the topic the
question is asked about rather than what it asks, weighs :data:`TOPIC_WEIGHT` of its
weight, :func:`topic_weights`); ``cos(p)``: the passage's cosine to the question (the dense
route's), ``cos(p1)`` the first passage's; ``hcos(p)``: the question's cosine to the
passage's heading vector (its ``title > section`` path embedded apart,
:mod:`kbsearch.index.headings`) when that heading may ask the question (:func:`asked_cosine`:
a section heading, or a title ending in "?"; an article's title alone names its topic), ``max
hcos`` the best of the candidates' (the term only when one of them has one; a candidate
without one takes the lowest of theirs): an FAQ entry titled with the question asked may
win over a better-ranked entry that paraphrases it; "asks for a number": "how
much/many/long", "when", "combien", "quand", "quelle année"... (:data:`NUMBER_QUESTION`);
"asks when": "when", "what year", "quand", "en quelle année"... (:data:`DATE_QUESTION`), "a
date": a year of four digits, a month's name (not "may") or a century (:data:`DATE`); the
last term only when the sentences' own vectors are at hand (``Candidate.sentence_cosines``,
e.g. computed once at index time): cosines of the sentence vectors (passage role) to the
question's;
``heading(p, s)``: the IDF-weighted share of the question's words in the passage's headings
that may ask it (:func:`asked_heading`: an FAQ section's heading is the question, and its
first sentences answer it) and in the sub-heading line the span stands under, if any (below),
for a span starting at the first sentence kept of the body or of a part of it. The first best
candidate wins (ties: the better-ranked passage, then the earlier sentence).

The spans built on a sentence (:func:`windows`):

- the sentence alone; one ending in ":" carries on into the list, steps, code block or table
  rows that follow it (the lines up to the next blank line after them, then each next
  paragraph of one sentence within :data:`ITEM_WIDTH`: list items written one to a
  paragraph), up to :data:`CARRY_WIDTH`;
- the runs of up to :data:`RUN` sentences from it, in one paragraph, none passed over, within
  :data:`SPAN_WIDTH` characters: the answer often stands just before or after the sentence
  that repeats the question's words; and the sentence with the next one when that one opens
  on an anaphor ("Il", "Cette", "It"...), within :data:`NEXT_WIDTH`;
- on the first sentence kept, the rest of the body (across its paragraphs) when it fits in
  :data:`BODY_WIDTH` characters: a short section answers whole.

A passage may hold sub-sections too small to stand alone, merged into it with their heading
as a line of its body (:mod:`kbsearch.index.chunking`, ``TINY_SHARE``): an FAQ section's
questions, each followed by its answer. Such a line (:func:`sub_headings`) is passed over, and
it splits the body into parts: no span runs across one (the carry of a ":" sentence, the
short body answering whole: the rest of its part), and the lead term of a span opening a part
reads that part's headings (the passage's, then its sub-heading line), so the question that a
sub-heading asks is answered from under it.

Spans are whole sentences, so an answer is never cut inside brackets or quotes (the segmenter
does not end a sentence there), nor inside an abbreviation (the segmenter joins "av. J.-C." and
"Le Dr. Martin" back: :func:`kbsearch.text.sentences.sentences`).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..text.sentences import sentences

# chosen on PIAF dev (400 questions) and covid_faq_en dev (124; the cited passage relevant),
# benchmarks/answer_tune.py; docs/benchmarks.md
PASSAGES = 3  # passages whose sentences are candidates
DENSE_WEIGHT = 1.0  # weight of the passage's cosine difference to the first passage's
RANK_WEIGHT = 0.3  # score lost per rank of the passage
LENGTH_BONUS = 0.1  # score gained per SPAN_WIDTH characters of a span
RUN = 3  # sentences of one paragraph a span may run over
SENTENCE_WEIGHT = 3.0  # weight of a span's best sentence cosine minus the best sentence's
HEADING_WEIGHT = 6.0  # weight of the heading cosine minus the best one's (covid_faq_en dev)

NUMBER_BONUS = 0.1  # score gained by a span holding a digit when the question asks for a number
DATE_BONUS = 0.2  # score gained by a span holding a date when the question asks when
TOPIC_WEIGHT = 0.5  # share of its weight a question word keeps when the passage's heading holds it
RESTATE_WORDS = 2  # a sentence of at least this many content words, all the question's, restates
SPAN_WIDTH = 250  # characters of a run of sentences at most
BODY_WIDTH = 550  # characters of a passage body (from its first sentence kept) that answers whole
CARRY_WIDTH = 600  # characters of a ":" sentence and the lines it carries on into at most
LEAD_WEIGHT = 0.3  # score gained by a span opening the body or a part, times its headings' coverage
NEXT_WIDTH = 325  # characters of a sentence and the next one, opening on an anaphor, at most
ITEM_WIDTH = 250  # characters of a one-sentence paragraph a ":" sentence carries on into
HEADING_WIDTH = 100  # characters of a merged sub-heading line at most
HEADING_WORDS = 8  # words of a merged sub-heading line that asks no question at most
INTRODUCTION = re.compile(
    r"\b(this|the following) (page|article|guide|section|document|chapter|faq)\b"
    r"|\b(cette|la présente) (page|rubrique|section|fiche|foire)\b|\bcet article\b|\bce guide\b"
    r"|\bci-dessous\b",
    re.IGNORECASE,
)
ANAPHOR = re.compile(  # a sentence opening on one of these goes on about the one before
    r"(il|elle|ils|elles|ce|cet|cette|ces|celui-ci|celle-ci|ceux-ci|celles-ci|cela|ceci|on"
    r"|it|this|these|they|he|she|such|that|those)\b",
    re.IGNORECASE,
)
BLANK_LINE = re.compile(r"\n[ \t]*\n")
SENTENCE_END = re.compile(r"[.!?…][\"'»”)\]]*$")  # a paragraph ending a sentence
HEADING_END = re.compile(r"[\w)]$")  # how a heading line may end (no . ! : ; ,)
LIST_ITEM = re.compile(r"([-*+•]|\d+[.)])\s")  # a line opening as a list item
DIGIT = re.compile(r"\d")
NUMBER_QUESTION = re.compile(
    r"\bhow (much|many|long|old|far|often|big|large|heavy|tall|wide|deep|soon)\b|\bwhen\b"
    r"|\b(what|which) (year|date|time|age|percentage|price|amount|number|size)\b"
    r"|\bcombien\b|\bquand\b|\bquel(le)?s? (année|date|âge|prix|montant|durée|somme|taille"
    r"|distance|heure|pourcentage|nombre|siècle|époque|délai)\b",
    re.IGNORECASE,
)
DATE_QUESTION = re.compile(
    r"\bwhen\b|\b(what|which) (year|date|day|month|century)\b|\bquand\b"
    r"|\bquel(le)?s? (année|date|jour|mois|siècle|époque)\b",
    re.IGNORECASE,
)
MONTHS = (
    "january|february|march|april|june|july|august|september|october|november|december"
    "|janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre"
)
DATE = re.compile(
    rf"\b(1\d{{3}}|20\d{{2}})\b|\b({MONTHS})\b"
    r"|\b[IVXL]+(e|er|ème)? (siècle|century)\b|\b\d+(st|nd|rd|th) century\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Candidate:
    """A passage's text to choose from: ``text``; ``body``: offset where its body starts
    (after the title and heading lines); ``cosine``: its cosine to the question (``None``
    when the dense route did not list it: its prior is then the last listed one's);
    ``sentence_cosines``: its sentences' cosines to the question by ``(start, end)``
    offsets, when their vectors are at hand (``None``: no sentence-level dense evidence);
    ``heading_cosine``: its heading vector's cosine to the question (``None``: it has none)."""

    text: str
    body: int
    cosine: float | None = None
    language: str = "en"
    sentence_cosines: Mapping[tuple[int, int], float] | None = None
    heading_cosine: float | None = None


@dataclass(frozen=True)
class Span:
    """The chosen span: ``passage``, the candidate's index (0 = first passage); ``start``,
    ``end``: character offsets in its text; ``score`` (module docstring); ``coverage``: the
    IDF-weighted share of the question's words in the span; ``margin``: its score minus the
    best span of another passage (0 without one); ``agree``: how many of the other
    candidates' best sentences cover at least half what this one covers, over the others."""

    passage: int
    start: int
    end: int
    score: float
    coverage: float
    margin: float
    agree: float


Terms = Callable[[str], frozenset[str]]  # the stemmed, folded terms of a text


def coverage(terms: frozenset[str], words: Sequence[Sequence[str]], idf: Sequence[float]) -> float:
    """IDF-weighted share of ``words`` (each a group of alternative terms) present in
    ``terms``; 0 when the words weigh nothing."""
    return share(held(terms, words), idf, sum(idf))


def held(terms: frozenset[str], words: Sequence[Sequence[str]]) -> int:
    """Which of ``words`` (each a group of alternative terms) ``terms`` holds, as a bit set:
    bit ``i`` for ``words[i]``. A run of sentences holds the union of its sentences' bits."""
    return WordBits(words)(terms)


class WordBits:
    """:func:`held` for one question's ``words``, made once for the many term sets it is
    asked of (one set intersection each, not a membership test per alternative term)."""

    def __init__(self, words: Sequence[Sequence[str]]) -> None:
        bits: dict[str, int] = {}
        for i, group in enumerate(words):
            for term in group:
                bits[term] = bits.get(term, 0) | 1 << i
        self._bits = bits
        self._terms = frozenset(bits)

    def __call__(self, terms: frozenset[str]) -> int:
        out = 0
        for term in self._terms & terms:
            out |= self._bits[term]
        return out


def share(bits: int, weights: Sequence[float], total: float) -> float:
    """The ``weights`` of the words in ``bits`` (:func:`held`), summed in the words' order,
    over ``total`` (their sum, ``sum(weights)``); 0 when ``total`` is not positive."""
    if total <= 0:
        return 0.0
    return sum(w for i, w in enumerate(weights) if bits >> i & 1) / total


def restates(sentence: str, sentence_terms: frozenset[str], words: Sequence[Sequence[str]]) -> bool:
    """True when ``sentence`` restates the question (module docstring): it ends in "?", or
    all of its (at least :data:`RESTATE_WORDS`) content terms are the question's."""
    if sentence.rstrip().endswith("?"):
        return True
    asked = {t for group in words for t in group}
    return len(sentence_terms) >= RESTATE_WORDS and sentence_terms <= asked


def carried(text: str, spans: Sequence[tuple[int, int]], index: int) -> int:
    """End offset of the span that starts at sentence ``index`` (ending in ":") and carries on
    into the lines that follow: the sentences up to the first blank line after at least one
    of them, then each next paragraph that is one sentence of at most :data:`ITEM_WIDTH`
    characters (a list whose items stand one to a paragraph), within :data:`CARRY_WIDTH`
    characters (whole sentences; the sentence alone when the first one does not fit)."""
    start, end = spans[index]
    paragraphs: list[list[tuple[int, int]]] = []  # the sentences after it, by paragraph
    last = end
    for s, e in spans[index + 1 :]:
        if not paragraphs or BLANK_LINE.search(text[last:s]):
            paragraphs.append([])
        paragraphs[-1].append((s, e))
        last = e
    for number, paragraph in enumerate(paragraphs):
        item = len(paragraph) == 1 and paragraph[0][1] - paragraph[0][0] <= ITEM_WIDTH
        if number > 0 and not item:
            break
        for _s, e in paragraph:
            if e - start > CARRY_WIDTH:
                return end
            end = e
    return end


@lru_cache(maxsize=2048)
def sentence_offsets(text: str, language: str) -> tuple[tuple[int, int], ...]:
    """``(start, end)`` of each of :func:`~kbsearch.text.sentences.sentences` of ``text``,
    cached per process (the same passages come back search after search)."""
    return tuple((s.start, s.end) for s in sentences(text, language))


def extended(text: str, spans: Sequence[tuple[int, int]], index: int) -> tuple[int, int]:
    """The span of sentence ``index`` as the module docstring extends it."""
    start, end = spans[index]
    if text[start:end].endswith(":") and index + 1 < len(spans):
        return start, carried(text, spans, index)
    return start, end


def local_weights(
    sentence_terms: Sequence[frozenset[str]], words: Sequence[Sequence[str]], idf: Sequence[float]
) -> tuple[float, ...]:
    """Each question word's weight within one passage: ``idf * ln((n + 1) / (df + 0.5))``
    over its ``n`` sentences, ``df`` of which hold the word (a word every sentence holds,
    the passage's topic, tells its sentences apart less than one only the answer holds)."""
    _same_length(words, idf)
    bits = WordBits(words)
    return _local_weights([bits(st) for st in sentence_terms], idf)


def _same_length(words: Sequence[Sequence[str]], weights: Sequence[float]) -> None:
    if len(words) != len(weights):
        raise ValueError(f"{len(words)} question words but {len(weights)} weights")


def _local_weights(sentence_bits: Sequence[int], idf: Sequence[float]) -> tuple[float, ...]:
    n = len(sentence_bits)
    return tuple(
        w * math.log((n + 1) / (sum(bits >> i & 1 for bits in sentence_bits) + 0.5))
        for i, w in enumerate(idf)
    )


def topic_weights(
    heading_terms: frozenset[str], words: Sequence[Sequence[str]], weights: Sequence[float]
) -> tuple[float, ...]:
    """``weights`` of the question's ``words`` with those the passage's heading holds (its
    title and heading lines' ``heading_terms``: the topic, not what is asked about it) times
    :data:`TOPIC_WEIGHT`."""
    return tuple(
        w * (TOPIC_WEIGHT if any(t in heading_terms for t in group) else 1.0)
        for group, w in zip(words, weights, strict=True)
    )


def _passed_over(
    sentence: str, sentence_terms: frozenset[str], words: Sequence[Sequence[str]], index: int
) -> bool:
    return restates(sentence, sentence_terms, words) or (
        index < 2 and INTRODUCTION.search(sentence) is not None
    )


def table_headers(text: str, spans: Sequence[tuple[int, int]]) -> list[int | None]:
    """Per sentence, the index of the header row of the table it is a row of (the first of a
    run of lines holding "|" with no blank line between them); ``None`` for a sentence that
    is no table row, or is the header itself."""
    out: list[int | None] = []
    header: int | None = None
    for i, (s, e) in enumerate(spans):
        row = "|" in text[s:e]
        joined = (
            row
            and i > 0
            and "|" in text[spans[i - 1][0] : spans[i - 1][1]]
            and not BLANK_LINE.search(text[spans[i - 1][1] : s])
        )
        if row and not joined:
            header = i
        out.append(header if joined else None)
    return out


def paragraphs(text: str, start: int) -> list[tuple[int, int]]:
    """The ``(start, end)`` offsets of the paragraphs of ``text`` from ``start`` on (runs of
    lines between blank lines, their surrounding white space left out)."""
    out = []
    last = start
    for gap in [*BLANK_LINE.finditer(text, start), None]:
        end = len(text) if gap is None else gap.start()
        piece = text[last:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            out.append((last + lead, last + len(piece.rstrip())))
        if gap is not None:
            last = gap.end()
    return out


def heading_line(line: str) -> bool:
    """True when the paragraph ``line`` reads as a heading: one line that is no table row
    nor list item (:data:`LIST_ITEM`), either a question of at most :data:`HEADING_WIDTH`
    characters (an FAQ's entry) or at most :data:`HEADING_WORDS` words without a comma that
    end as a heading may (a letter, a digit or ")": not ".", ":", ";"...)."""
    if "\n" in line or "|" in line or LIST_ITEM.match(line) or len(line) > HEADING_WIDTH:
        return False
    if line.endswith("?"):
        return True
    return (
        HEADING_END.search(line) is not None
        and "," not in line
        and len(line.split()) <= HEADING_WORDS
    )


def sub_headings(text: str, body: int) -> list[tuple[int, int]]:
    """The ``(start, end)`` offsets of the sub-heading lines of the body of ``text`` (from
    offset ``body``): the headings of sub-sections merged into the passage (module
    docstring). A paragraph is one when it reads as a heading (:func:`heading_line`), is
    followed by a paragraph that opens on a capital letter or a digit and ends a sentence
    (its text), and, unless it asks a question, follows the body's start or a paragraph
    ending a sentence (not a list's items, nor a sentence ending in ":")."""
    found = paragraphs(text, body)
    ends = [SENTENCE_END.search(text, s, e) is not None for s, e in found]
    return [
        (s, e)
        for i, (s, e) in enumerate(found)
        if heading_line(text[s:e])
        and i + 1 < len(found)
        and ends[i + 1]
        and (text[found[i + 1][0]].isupper() or text[found[i + 1][0]].isdigit())
        and (i == 0 or ends[i - 1] or text[e - 1] == "?")
    ]


def windows(
    text: str, spans: Sequence[tuple[int, int]], index: int, skipped: Sequence[bool]
) -> list[tuple[int, int]]:
    """The spans that start at sentence ``index``: itself as :func:`extended` makes it, and
    the runs of up to :data:`RUN` sentences from it (none passed over, in one paragraph)
    that fit in :data:`SPAN_WIDTH` characters; when the next sentence alone does not fit but
    opens on an anaphor (:data:`ANAPHOR`: "Il", "Cette", "It", "This"...), the pair within
    :data:`NEXT_WIDTH` characters (the answer is often in the sentence that goes on about
    the one that matches the question)."""
    out = [extended(text, spans, index)]
    start = spans[index][0]
    for j in range(index + 1, min(len(spans), index + RUN)):
        if skipped[j] or BLANK_LINE.search(text[spans[j - 1][1] : spans[j][0]]):
            break
        if spans[j][1] - start > SPAN_WIDTH:
            if (
                j == index + 1
                and spans[j][1] - start <= NEXT_WIDTH
                and ANAPHOR.match(text, spans[j][0])
            ):
                out.append((start, spans[j][1]))
            break
        out.append((start, spans[j][1]))
    return out


def _window_cosine(cosines: Mapping[tuple[int, int], float], start: int, end: int) -> float:
    """The best cosine of the sentences inside ``[start, end)`` (by the segmenter's offsets,
    so the vectors of pieces the segmenter has since joined count too; the lowest of the
    passage's when none of them has one)."""
    inside = [c for (s, e), c in cosines.items() if start <= s and e <= end]
    return max(inside, default=min(cosines.values()))


def asked_heading(heading: str) -> str:
    """The lines of a passage's ``heading`` (its title and heading lines) that may ask the
    question: its section headings, and its first line (the document title) only when it
    ends in "?" (an FAQ entry's title; an article's title names its topic)."""
    lines = [line.strip() for line in heading.split("\n") if line.strip()]
    return "\n".join(line for i, line in enumerate(lines) if i > 0 or line.endswith("?"))


def asked_cosine(candidate: Candidate) -> float | None:
    """``candidate``'s heading cosine when its heading may ask the question
    (:func:`asked_heading` finds a line in it), else ``None``."""
    if candidate.heading_cosine is None or not asked_heading(candidate.text[: candidate.body]):
        return None
    return candidate.heading_cosine


def asks_number(question: str) -> bool:
    """True when ``question`` asks for a quantity, a duration, a price or a date
    (:data:`NUMBER_QUESTION`)."""
    return NUMBER_QUESTION.search(question) is not None


def asks_date(question: str) -> bool:
    """True when ``question`` asks when (:data:`DATE_QUESTION`)."""
    return DATE_QUESTION.search(question) is not None


def choose_span(
    candidates: Sequence[Candidate],
    words: Sequence[Sequence[str]],
    idf: Sequence[float],
    terms: Terms,
    question: str = "",
) -> Span | None:
    """The span that answers (module docstring) among the first :data:`PASSAGES`
    ``candidates`` (best first), for the question's content ``words`` (groups of alternative
    terms, as :class:`kbsearch.judge.evidence.TermStatistics` gives them), their ``idf`` and
    the ``question``'s text (read for what it asks: :func:`asks_number`, :func:`asks_date`);
    ``None`` when no passage has a body sentence."""
    listed = [c.cosine for c in candidates[:PASSAGES] if c.cosine is not None]
    top = listed[0] if listed else 0.0
    floor = min(listed, default=0.0)
    headed = [h for c in candidates[:PASSAGES] if (h := asked_cosine(c)) is not None]
    heading_top = max(headed, default=0.0)
    heading_floor = min(headed, default=0.0)
    number = asks_number(question)
    when = asks_date(question)
    dense = [c for c in candidates[:PASSAGES] if c.sentence_cosines]
    best_sentence = max(
        (max(c.sentence_cosines.values()) for c in dense if c.sentence_cosines), default=0.0
    )
    best: list[tuple[float, float, int, int, int]] = []  # per passage: score, cover, i, s, e
    _same_length(words, idf)
    idf_total = sum(idf)
    word_bits = WordBits(words)
    for rank, candidate in enumerate(candidates[:PASSAGES]):
        text = candidate.text
        spans = [
            (s, e) for s, e in sentence_offsets(text, candidate.language) if s >= candidate.body
        ]
        prior = DENSE_WEIGHT * ((floor if candidate.cosine is None else candidate.cosine) - top)
        prior -= RANK_WEIGHT * rank
        if headed:
            asks = asked_cosine(candidate)
            prior += HEADING_WEIGHT * ((heading_floor if asks is None else asks) - heading_top)
        found: tuple[float, float, int, int, int] | None = None
        own = [terms(text[s:e]) for s, e in spans]
        headers = table_headers(text, spans)
        scored = [t if h is None else t | own[h] for t, h in zip(own, headers, strict=True)]
        bits = [word_bits(t) for t in scored]
        heading_terms = terms(text[: candidate.body])
        local = topic_weights(heading_terms, words, _local_weights(bits, idf))
        local_total = sum(local)
        heads = sub_headings(text, candidate.body)
        starts = [h[0] for h in heads]
        part = [bisect_right(starts, s) for s, _ in spans]  # 0: before any sub-heading
        skipped = [
            any(h[0] <= s and e <= h[1] for h in heads) or _passed_over(text[s:e], own[i], words, i)
            for i, (s, e) in enumerate(spans)
        ]
        kept = [i for i in range(len(spans)) if not skipped[i]]
        stop = [bisect_right(part, k) for k in part]  # where each sentence's part ends
        opening: dict[int, int] = {}  # per part, its first sentence kept
        for i in kept:
            opening.setdefault(part[i], i)
        asked = asked_heading(text[: candidate.body])
        for i in kept:
            opens = opening[part[i]] == i
            built = windows(text, spans[: stop[i]], i, skipped)
            whole = (spans[i][0], spans[stop[i] - 1][1])
            if opens and whole[1] - whole[0] <= BODY_WIDTH:
                built.append(whole)  # a short body (or part of it) answers whole
            lead = 0.0
            if opens:  # the part's headings: the passage's, then its own sub-heading line
                sub = text[slice(*heads[part[i] - 1])] if part[i] else ""
                lead = LEAD_WEIGHT * coverage(terms(f"{asked}\n{sub}"), words, idf)
            for start, end in built:
                window = 0  # the words the run holds: its sentences' (table headers with rows)
                for j, (s, e) in enumerate(spans):
                    if start <= s and e <= end:
                        window |= bits[j]
                cover = share(window, idf, idf_total)
                score = share(window, local, local_total) + prior
                score += LENGTH_BONUS * (end - start) / SPAN_WIDTH
                score += lead
                if number and DIGIT.search(text, start, end):
                    score += NUMBER_BONUS
                if when and DATE.search(text[start:end]):
                    score += DATE_BONUS
                if candidate.sentence_cosines:
                    score += SENTENCE_WEIGHT * (
                        _window_cosine(candidate.sentence_cosines, start, end) - best_sentence
                    )
                if found is None or score > found[0]:
                    found = (score, cover, rank, start, end)
        if found is None and spans:  # every sentence restates or introduces: the first
            start, end = extended(text, spans[: stop[0]], 0)
            cover = coverage(terms(text[start:end]), words, idf)
            found = (prior, cover, rank, start, end)
        if found is not None:
            best.append(found)
    if not best:
        return None
    winner = max(best, key=lambda b: (b[0], -b[2]))
    others = [b for b in best if b is not winner]
    margin = winner[0] - max((b[0] for b in others), default=winner[0])
    agree = (
        sum(b[1] >= winner[1] / 2 for b in others) / len(others) if others and winner[1] else 0.0
    )
    score, cover, rank, start, end = winner
    return Span(rank, start, end, score, cover, margin, agree)
