"""Sentence segmentation of English and French text, with character offsets.

The sentence boundaries are those of ``sentencex`` (Wikimedia's rule-based segmenter,
https://github.com/wikimedia/sentencex, per-language abbreviation lists; it never ends a
sentence inside brackets or quotes: "(see the docs!)" stays whole). Two things are added
around it:

1. A line break always ends a sentence, so a list item, a table row, a heading or a code line
   is a unit of its own (sentencex reads "Steps:\\n1. Open" as "Steps:\\n1." then "Open").
2. A piece that cannot start a sentence is joined to the one before it: one that begins with
   a lower-case letter or a digit ("Voir l'art. | 12 du code"), or one after a piece of at most
   :data:`SHORT_PIECE` characters ("M. | Dupont", "1. | Open the page").
"""

from __future__ import annotations

import re
from functools import lru_cache

from sentencex import get_sentence_boundaries

SHORT_PIECE = 4  # characters (stripped) of a piece too short to be a sentence: "M.", "1.", "a)"
LINE = re.compile(r"[^\n]+")
LANGUAGES = ("en", "fr")


def sentences(text: str, language: str = "en") -> list[tuple[int, int]]:
    """``(start, end)`` character offsets of each sentence of ``text`` (module docstring),
    in order, leading and trailing white space excluded, empty ones dropped.

    ``language``: an ISO 639-1 code; sentencex's rules for it (its fallback chain for one it
    lacks, ending at English).
    """
    return list(_sentences(text, language or "en"))


@lru_cache(maxsize=8192)  # the same passages come back search after search
def _sentences(text: str, language: str) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for line in LINE.finditer(text):
        pieces: list[tuple[int, int]] = []
        for found in get_sentence_boundaries(language, line.group()):
            start = line.start() + _char_offset(line.group(), found["start_index"])
            end = line.start() + _char_offset(line.group(), found["end_index"])
            start, end = _strip(text, start, end)
            if end <= start:
                continue
            if pieces and _continues(text, pieces[-1], start):
                pieces[-1] = (pieces[-1][0], end)
            else:
                pieces.append((start, end))
        out += pieces
    return tuple(out)


def _char_offset(line: str, index: int) -> int:
    # sentencex's offsets count characters (Python str indices); kept in range defensively
    return max(0, min(index, len(line)))


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _continues(text: str, previous: tuple[int, int], start: int) -> bool:
    first = text[start]
    return (
        (first.isalpha() and first.islower())
        or first.isdigit()
        or (previous[1] - previous[0] <= SHORT_PIECE)
    )
