"""Text analysis for the lexical route: query words, FTS5 match expressions, stemming.

FTS5 indexes with ``tokenize='unicode61 remove_diacritics 2'`` (SQLite FTS5 documentation,
section 4.3.1): tokens are runs of letters and digits, case-folded, diacritics removed. The
query side mirrors that split so a user's ``PK-2200-07`` becomes the words ``pk 2200 07``, and
every word is double-quoted so ``AND``/``OR``/``NOT``/``NEAR``, ``*``, ``:``, ``^`` and
parentheses are plain words, never FTS5 operators.

Both sides are cleaned by one function, :func:`clean_text` (NFKC; soft hyphens, zero-width
characters and word joiners dropped, control characters made spaces): the format parsers clean
documents with it and every route cleans the query with it (the lexical route's words, the dense
route's query text, the snippet marks), so ``pass\u00adword`` finds ``password`` and
``refund\x00policy`` is two words.

Both sides fold the ligatures ``œ``, ``æ`` and ``ß`` (``vœux`` and ``voeux`` are one word).

Two analyzers (chosen when the index is built and recorded in it):

- ``plain``: FTS5's own tokenizer on the passage text (ligatures folded first).
- ``stem``: each word Snowball-stemmed in its document's language (Porter, "Snowball: A language
  for stemming algorithms", 2001; PyStemmer), then accents folded; queries are stemmed with the
  stemmer of each language the index holds (or of ``--lang``).

Either one counts a passage's heading lines (its document title and heading path, which
:mod:`kbsearch.index.chunking` writes before the first blank line) ``heading_weight`` times
in the FTS5 body: the title of an FAQ entry is the question, and BM25 over the plain text
weighs it like one sentence of the answer. Repeating a field is BM25F's field weight
(Robertson, Zaragoza & Taylor, "Simple BM25 extension to multiple weighted fields", CIKM
2004) in its simplest form, with the repeats counted in the passage length; the weight is
recorded in the index (:class:`kbsearch.store.IndexSettings`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

import Stemmer  # PyStemmer

from ..errors import QueryError, shown_value
from .stopwords import content_words, strip_elisions

MAX_QUERY_CHARS = 2048
# queries whose analyses a process keeps (terms, match keys, language), each cache alike: as
# many as their vectors (kbsearch.retrieve.encoder.CACHE_SIZE); ~7 KB a query in all, so a
# server seeing only new query texts holds ~7 MB of them once full (4,096: ~28 MB, still
# growing 10 minutes into a served load)
QUERY_CACHE = 1024
WORD_RE = re.compile(r"[^\W_]+")
STEMMER_LANGUAGES = {"en": "english", "fr": "french"}
ANALYZERS = ("plain", "stem")
# stop words of both languages whatever the index holds: a French question about an English
# collection still carries "comment", and the reverse (kept only when every word is one)
STOPWORD_LANGUAGES = ("en", "fr")


# Characters that carry no text: soft hyphen, combining grapheme joiner, Mongolian vowel
# separator, zero-width space / non-joiner / joiner, left-to-right and right-to-left marks,
# word joiner and the invisible operators, byte-order mark (zero-width no-break space); the
# bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), which
# reorder how the text around them shows ("Trojan Source", CVE-2021-42574) in a terminal or
# a page, never what it says.
INVISIBLE = (
    "\u00ad\u034f\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_INVISIBLE = dict.fromkeys(map(ord, INVISIBLE))
# The C0 and C1 control characters but tab, line feed, form feed and carriage return.
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


def controls_as_spaces(text: str) -> str:
    """``text`` with each control character but tab and line breaks (NUL, ESC, DEL, the C1
    controls...) replaced by a space, one for one (offsets into ``text`` still hold): a
    separator, as a space is, rather than dropped, which glued the words on either side."""
    return _CONTROLS.sub(" ", text)


def clean_text(text: str) -> str:
    """``text`` NFKC-normalised (ligatures such as U+FB01 become ``fi``, no-break spaces
    become spaces) with the invisible characters (:data:`INVISIBLE`) removed and the control
    characters other than tab and line breaks turned into spaces
    (:func:`controls_as_spaces`); nothing else changes (whitespace is kept). The one cleaning
    of documents (:mod:`kbsearch.ingest.text`) and queries."""
    return controls_as_spaces(unicodedata.normalize("NFKC", text).translate(_INVISIBLE))


# Letters NFKC leaves alone that are spelled as two letters too (``main-d'œuvre`` and
# ``main-d'oeuvre``, ``ex æquo`` and ``ex aequo``); the ``ﬁ``-style typographic ligatures are
# already split by NFKC.
LIGATURES = str.maketrans({"œ": "oe", "Œ": "OE", "æ": "ae", "Æ": "AE", "ß": "ss", "ẞ": "SS"})


def fold_ligatures(text: str) -> str:
    """``œ`` -> ``oe``, ``æ`` -> ``ae``, ``ß`` -> ``ss`` (upper case too)."""
    return text.translate(LIGATURES)


def fold_diacritics(text: str) -> str:
    """Remove combining marks after NFKD decomposition (``données`` -> ``donnees``)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def is_text(text: str) -> bool:
    """True when ``text`` encodes to UTF-8 (no lone surrogates from undecodable input)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def words(text: str) -> list[str]:
    """Lower-cased words of ``text`` (:func:`clean_text`, ligatures folded, then runs of
    letters/digits), in order."""
    return WORD_RE.findall(fold_ligatures(clean_text(text)).lower())


def query_words(query: str) -> list[str]:
    """The words of a user query, validated.

    Raises:
        QueryError: the query is not a string or not valid text, is empty, has no letter or
            digit, or exceeds 2,048 characters.
    """
    if not isinstance(query, str):
        raise QueryError(f"query must be text, got {type(query).__name__}")
    if not is_text(query):
        raise QueryError("query is not valid text (undecodable bytes)")
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"query of {len(query)} characters exceeds the limit of {MAX_QUERY_CHARS}")
    found = words(query)
    if not found:
        raise QueryError("query is empty or has no letter or digit to search for")
    return found


def acronyms(text: str) -> frozenset[str]:
    """The lower-cased words that ``text`` writes in capitals, two letters or more (``IT``,
    ``ON``, ``PK2200``): acronyms, content words even where their lower case is a stop word
    (RediSearch issue 3080: "IT helpdesk hours" searched for "helpdesk hours"). None when
    every word with a letter is in capitals: a shouted query is not made of acronyms."""
    cased = WORD_RE.findall(fold_ligatures(clean_text(text)))
    lettered = [w for w in cased if any(ch.isalpha() for ch in w)]
    capitals = [w for w in lettered if w.isupper() and sum(ch.isalpha() for ch in w) >= 2]
    if all(w.isupper() for w in lettered):
        return frozenset()
    return frozenset(w.lower() for w in capitals)


def content_query_words(query: str) -> list[str]:
    """The words of ``query`` the lexical route searches for and snippets mark, in order:
    French elisions and the English and French stop words dropped
    (:mod:`kbsearch.text.stopwords`), the query's :func:`acronyms` kept; all of its words when
    every one is a stop word."""
    unelided = strip_elisions(query)
    return content_words(words(unelided), STOPWORD_LANGUAGES, acronyms(unelided))


@lru_cache(maxsize=8)
def _stemmer(language: str) -> Stemmer.Stemmer | None:
    name = STEMMER_LANGUAGES.get(language)
    return Stemmer.Stemmer(name) if name else None


def stem_words(tokens: Sequence[str], language: str) -> list[str]:
    """Snowball stems of ``tokens`` for ``language`` (unchanged for an unknown language),
    with diacritics folded after stemming (folding first damages French stems)."""
    stemmer = _stemmer(language)
    stems = stemmer.stemWords(list(tokens)) if stemmer else list(tokens)
    return [fold_diacritics(s) for s in stems]


def dedupe(items: Iterable[str]) -> list[str]:
    """Items in first-seen order without repeats."""
    return list(dict.fromkeys(items))


def heading_lines(text: str) -> str:
    """The lines of ``text`` before its first blank line (a passage's title and heading
    path, :mod:`kbsearch.index.chunking`); empty when there is no blank line."""
    head, blank, _ = text.partition("\n\n")
    return head if blank else ""


class Analyzer:
    """Turns passage texts into FTS5 bodies and queries into search terms.

    ``heading_weight``: how many times a passage's heading lines count in its FTS5 body (1:
    once, as written; module docstring). Raises ``ValueError`` for an unknown ``name`` or a
    weight under 1.
    """

    def __init__(self, name: str, heading_weight: int = 1) -> None:
        if name not in ANALYZERS:
            raise ValueError(
                f"unknown analyzer {shown_value(name)}; choose one of {', '.join(ANALYZERS)}"
            )
        if heading_weight < 1:
            raise ValueError(f"the heading weight must be 1 or more, got {heading_weight}")
        self.name = name
        self.heading_weight = heading_weight

    def body(self, text: str, language: str) -> str:
        """The text FTS5 indexes for a passage written in ``language``: its heading lines
        (:func:`heading_lines`) ``heading_weight - 1`` more times, then the whole text."""
        head = heading_lines(text)
        if head and self.heading_weight > 1:
            text = "\n".join([head] * (self.heading_weight - 1) + [text])
        if self.name == "plain":
            return fold_ligatures(text)
        return " ".join(stem_words(words(text), language))

    def query_terms(
        self, query: str, languages: Sequence[str], stopwords: bool = True
    ) -> list[str]:
        """Distinct search terms of ``query``, in order.

        With ``stopwords`` (the default), French elisions and the English and French stop
        words are dropped first, acronyms kept (:func:`content_query_words`; a query of stop
        words only keeps them). With stemming, each word is stemmed with every language in
        ``languages`` (the index's languages, or the one a language filter names; English when
        there are none); a language without a stemmer adds the words unstemmed, as its passages are
        indexed.

        Raises:
            QueryError: see :func:`query_words`.
        """
        if not isinstance(query, str):
            query_words(query)  # raises QueryError (and keeps the cache's key hashable)
        return list(_query_terms(self.name, query, tuple(languages), stopwords))

    def word_terms(self, query: str, languages: Sequence[str]) -> list[tuple[str, ...]]:
        """The search terms of each distinct content word of ``query``, in order: the terms
        :meth:`query_terms` makes from that one word (one per language with stemming, repeats
        dropped). In an index of two languages a word has two stems, and the one of the other
        language is usually absent; grouping them lets a statistic count the word once.

        Raises:
            QueryError: see :func:`query_words`.
        """
        if not isinstance(query, str):
            query_words(query)  # raises QueryError
        return list(_word_terms(self.name, query, tuple(languages)))


# The two analyses below are cached per process: one search asks for them several times (the
# lexical route's candidates and scores, the abstention evidence) and a server sees the same
# queries again. An invalid query raises each time (exceptions are not cached).


@lru_cache(maxsize=QUERY_CACHE)
def _query_terms(
    analyzer: str, query: str, languages: tuple[str, ...], stopwords: bool
) -> tuple[str, ...]:
    found = query_words(query)
    if stopwords:
        found = content_query_words(query)
    if analyzer == "plain":
        return tuple(dedupe(found))
    langs = list(dict.fromkeys(languages)) or ["en"]
    return tuple(dedupe(stem for lang in langs for stem in stem_words(found, lang)))


@lru_cache(maxsize=QUERY_CACHE)
def _word_terms(
    analyzer: str, query: str, languages: tuple[str, ...]
) -> tuple[tuple[str, ...], ...]:
    query_words(query)  # raises QueryError
    found = dedupe(content_query_words(query))
    if analyzer == "plain":
        return tuple((w,) for w in found)
    langs = list(dict.fromkeys(languages)) or ["en"]
    groups = (tuple(dedupe(stem_words([w], lang)[0] for lang in langs)) for w in found)
    return tuple(dict.fromkeys(groups))


def match_expression(terms: Sequence[str]) -> str:
    """FTS5 query: every term double-quoted (a string, never an operator), OR-joined."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
