"""Sentence segmentation, one function for every module that needs sentences (passage
splitting, answer spans).

It runs ``sentencex`` (Wikimedia's rule-based segmenter: abbreviations per language, breaks
never taken inside brackets or quotes, ~300 languages), not a rule on ``.``/``!``/``?``: "Install
it (yes, really!) and restart." stays one sentence, "M. Dupont" and "e.g. this" are not cut.
Line breaks are sentence breaks too (list items, table rows and code lines rarely end in a
full stop).
"""

from __future__ import annotations

from dataclasses import dataclass

from sentencex import get_sentence_boundaries

DEFAULT_LANGUAGE = "en"


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
            for bound in get_sentence_boundaries(lang, line):
                part = line[bound["start_index"] : bound["end_index"]]
                stripped = part.strip()
                if stripped:
                    begin = line_start + bound["start_index"] + len(part) - len(part.lstrip())
                    out.append(Sentence(stripped, begin, begin + len(stripped)))
        line_start += len(line) + 1
    return out
