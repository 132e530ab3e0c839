"""Sentence segmentation, one function for every module that needs sentences (passage
splitting, answer spans).

It runs ``sentencex`` (Wikimedia's rule-based segmenter: abbreviations per language, breaks
never taken inside brackets or quotes, ~300 languages), not a rule on ``.``/``!``/``?``: "Install
it (yes, really!) and restart." stays one sentence, "M. Dupont" and "e.g. this" are not cut.
Line breaks are sentence breaks too (list items, table rows and code lines rarely end in a
full stop).

sentencex still breaks after some abbreviations ("Le Dr. Martin", "au XIXe s. la ville",
"en 52 av. J.-C. au maximum", "le 1er janv. 2020"): a break is undone (:func:`_continues`) when
the piece before ends on an abbreviation of :data:`ABBREVIATIONS` (or of
:data:`NUMBER_ABBREVIATIONS` with a digit next), or when the piece after opens on a lowercase
letter, a hyphen or closing punctuation (no sentence opens so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sentencex import get_sentence_boundaries

DEFAULT_LANGUAGE = "en"

# English and French abbreviations after which a full stop ends no sentence: titles before a
# name, "s." (siècle: "XIXe s."), "av."/"apr." ("av. J.-C."), months, "env.", "cf."... Words
# that often end a sentence with their full stop ("etc.", "min.", "sept.", "Jr.") are left out.
# fmt: off
ABBREVIATIONS = frozenset((
    "dr", "drs", "mme", "mmes", "mlle", "mlles", "mgr", "pr", "prof", "st", "ste", "sts", "mr",
    "mrs", "ms", "messrs", "gén", "gen", "lt", "col", "cdt", "capt", "cpt", "sgt", "adj", "rev",
    "hon", "av", "apr", "s", "ss", "janv", "févr", "fév", "avr", "juil", "déc", "oct", "nov",
    "jan", "feb", "aug", "dec", "env", "approx", "cf", "resp", "vs", "ca", "cie", "fig", "ill",
    "éd", "ed", "coll", "trad", "dir", "réf",
))
# Abbreviations that end no sentence when a number follows them ("p. 12", "No. 5", "vol. 2").
NUMBER_ABBREVIATIONS = frozenset((
    "p", "pp", "n", "no", "nos", "nº", "vol", "vols", "chap", "ch", "art", "sec", "tel", "tél", "t",
))
# fmt: on
CLOSING = frozenset("-–,;:)]}»”")  # a sentence that opens on one of these goes on the one before
_LAST_WORD = re.compile(r"(?:^|[\s(])(\w+)\.$")


@dataclass(frozen=True)
class Sentence:
    """One sentence of a text: ``text`` is ``source[start:end]``, stripped of surrounding
    whitespace (``start``/``end`` are character offsets into the text given)."""

    text: str
    start: int
    end: int


def sentences(text: str, language: str | None = None) -> list[Sentence]:
    """The sentences of ``text`` in order, with their character offsets; whitespace between
    them is left out and nothing else is (``text[s.start:s.end] == s.text``).

    ``language`` is an ISO 639-1 code (``"en"``, ``"fr"``...); ``None`` or ``""`` reads as
    English. An unknown code falls back to sentencex's generic rules.
    """
    lang = language or DEFAULT_LANGUAGE
    out: list[Sentence] = []
    line_start = 0
    for line in text.split("\n"):
        if line.strip():
            pieces: list[tuple[int, int]] = []
            for bound in get_sentence_boundaries(lang, line):
                part = line[bound["start_index"] : bound["end_index"]]
                stripped = part.strip()
                if stripped:
                    begin = bound["start_index"] + len(part) - len(part.lstrip())
                    end = begin + len(stripped)
                    if pieces and _continues(line[pieces[-1][0] : pieces[-1][1]], stripped):
                        pieces[-1] = (pieces[-1][0], end)
                    else:
                        pieces.append((begin, end))
            for begin, end in pieces:
                out.append(Sentence(line[begin:end], line_start + begin, line_start + end))
        line_start += len(line) + 1
    return out


def _continues(before: str, after: str) -> bool:
    """Whether the segmenter's piece ``after`` goes on ``before`` (the piece just before it
    on the same line) rather than opening a sentence: ``after`` opens on a lowercase letter,
    a hyphen or closing punctuation ("av. J." then "-C." then "au maximum"), or ``before``
    ends on an abbreviation ("Le Dr." then "Martin est venu.")."""
    first = after[0]
    if first.islower() or first in CLOSING:
        return True
    last = _LAST_WORD.search(before)
    if last is None:
        return False
    word = last.group(1).lower()
    return word in ABBREVIATIONS or (word in NUMBER_ABBREVIATIONS and first.isdigit())
