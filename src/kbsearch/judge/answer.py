"""A cited answer, or "the documents don't say": what ``kbsearch ask`` prints.

When the abstention stage finds the question answerable, the answer is the best sentence (or
short window) of the top passage for the query
(:func:`kbsearch.present.snippets.make_snippet`, query words weighted by their IDF), with its
citation: passage id, document title, section, version,
effective dates and source. Otherwise the answer is :data:`NO_ANSWER` with the confidence, and
the nearest passages are kept for an agent to check. The passages come from the search's own
hits, so nothing the audience may not see can appear.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from ..present.snippets import Snippet, make_snippet, sentence_spans
from ..records import Document, Hit
from .confidence import Decision

NO_ANSWER = "The documents don't say"
ANSWER_WIDTH = 240  # characters of the answer span at most


@dataclass(frozen=True)
class Citation:
    """Where an answer comes from (dates inclusive, ``None`` = open)."""

    passage_id: str
    doc_id: str
    title: str
    section: str
    version: str
    effective_from: date | None
    effective_to: date | None
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "passage_id": self.passage_id,
            "doc_id": self.doc_id,
            "title": self.title,
            "section": self.section,
            "version": self.version,
            "effective_from": self.effective_from.isoformat() if self.effective_from else None,
            "effective_to": self.effective_to.isoformat() if self.effective_to else None,
            "source": self.source,
        }


@dataclass(frozen=True)
class Answer:
    """The answer to one question.

    ``text``: the answer span (``None`` when abstaining); ``start``/``end``: its character
    offsets in the cited passage's text; ``marks``: matched query words, offsets within
    ``text``; ``nearest``: the search's hits, best first (kept in both cases).
    """

    query: str
    answerable: bool
    confidence: float
    threshold: float
    text: str | None
    start: int | None
    end: int | None
    marks: tuple[tuple[int, int], ...]
    citation: Citation | None
    nearest: tuple[Hit, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "answerable": self.answerable,
            "confidence": self.confidence,
            "min_confidence": self.threshold,  # named as in search results (decision_fields)
            "answer": self.text if self.answerable else NO_ANSWER,
            "start": self.start,
            "end": self.end,
            "marks": [list(m) for m in self.marks],
            "citation": self.citation.to_dict() if self.citation else None,
            "nearest": [
                {
                    "rank": h.rank,
                    "passage_id": h.passage_id,
                    "doc_id": h.doc_id,
                    "version": h.version,
                    "section": h.section,
                    "score": h.score,
                }
                for h in self.nearest
            ],
        }


def heading_prefix(text: str, titles: Sequence[str]) -> int:
    """Characters at the start of ``text`` taken by its leading lines that are one of
    ``titles`` (the document title and the section headings the passage text begins with)."""
    wanted = {t.strip() for t in titles if t.strip()}
    position = 0
    for line in text.split("\n"):
        if line.strip() and line.strip() not in wanted:
            break
        position += len(line) + 1
    return min(position, len(text))


def best_sentence(
    text: str,
    query: str,
    languages: Sequence[str],
    term_weights: Mapping[str, float] | None,
    skip_prefix: int,
) -> Snippet:
    """The sentence of the best snippet window that holds the most matched query words (the
    first such; after the heading lines when one is there), or the window itself when no
    whole sentence lies in it (a sentence longer than :data:`ANSWER_WIDTH`)."""
    window = make_snippet(
        text,
        query,
        languages,
        width=ANSWER_WIDTH,
        term_weights=term_weights,
        skip_prefix=skip_prefix,
    )
    marks = [(window.start + s, window.start + e) for s, e in window.marks]
    # whole sentences: a clause cut at ";" drops what the sentence goes on to say
    spans = sentence_spans(text, clauses=False)
    inside = [(s, e) for s, e in spans if window.start <= s and e <= window.end]
    inside = [span for span in inside if span[0] >= skip_prefix] or inside
    if not inside:
        return window
    start, end = max(
        inside, key=lambda span: (sum(span[0] <= m and n <= span[1] for m, n in marks), -span[0])
    )
    return Snippet(
        text[start:end],
        start,
        end,
        tuple((m - start, n - start) for m, n in marks if start <= m and n <= end),
        start > 0,
        end < len(text),
    )


def compose(
    query: str,
    decision: Decision,
    hits: Sequence[Hit],
    document: Document | None,
    languages: Sequence[str],
    term_weights: Mapping[str, float] | None = None,
) -> Answer:
    """The answer from the decision, the hits (best first) and the top hit's document.

    Abstains also when there is no hit or no document for the top hit.
    """
    if not decision.answerable or not hits or document is None:
        return Answer(
            query,
            False,
            decision.confidence,
            decision.threshold,
            None,
            None,
            None,
            (),
            None,
            tuple(hits),
        )
    top = hits[0]
    sections = [document.title, top.section, *top.section.split(" > ")]
    snippet = best_sentence(
        top.text, query, languages, term_weights, heading_prefix(top.text, sections)
    )
    citation = Citation(
        passage_id=top.passage_id,
        doc_id=top.doc_id,
        title=document.title,
        section=top.section,
        version=top.version,
        effective_from=document.effective_from,
        effective_to=document.effective_to,
        source=document.source,
    )
    lead = len(snippet.text) - len(snippet.text.lstrip())  # marks: offsets in the answer
    return Answer(
        query,
        True,
        decision.confidence,
        decision.threshold,
        snippet.text.strip(),
        snippet.start,
        snippet.end,
        tuple((m - lead, n - lead) for m, n in snippet.marks if m >= lead),
        citation,
        tuple(hits),
    )


def _in_force(start: date | None, end: date | None) -> str:
    """``"in force 2026-01-01 to 2026-06-30"``, ``"in force from ..."``, ``"in force until
    ..."`` or ``"no effective dates"``."""
    if start and end:
        return f"in force {start.isoformat()} to {end.isoformat()}"
    if start:
        return f"in force from {start.isoformat()}"
    if end:
        return f"in force until {end.isoformat()}"
    return "no effective dates"


def marked(text: str, marks: Sequence[tuple[int, int]], mark: Callable[[str], str]) -> str:
    """``text`` with each ``(start, end)`` span of ``marks`` passed through ``mark``."""
    pieces, last = [], 0
    for start, end in sorted(marks):
        if last <= start < end <= len(text):
            pieces += [text[last:start], mark(text[start:end])]
            last = end
    return "".join([*pieces, text[last:]])


def render(answer: Answer, mark: Callable[[str], str] = str) -> str:
    """The text ``kbsearch ask`` prints (module docstring); ``mark`` styles the answer's
    matched query words (e.g. bold on a terminal)."""
    if answer.answerable and answer.citation is not None:
        c = answer.citation
        dates = _in_force(c.effective_from, c.effective_to)
        return "\n".join(
            [
                marked(str(answer.text), answer.marks, mark),
                "",
                f"Source: {' > '.join(filter(None, (c.title, c.section)))}"
                f" (version {c.version}, {dates})",
                f"Passage: {c.passage_id}" + (f"  File: {c.source}" if c.source else ""),
                f"Confidence: {answer.confidence:.2f} (answers from {answer.threshold:.2f})",
            ]
        )
    lines = [
        f"{NO_ANSWER} (confidence {answer.confidence:.2f}, below {answer.threshold:.2f}).",
    ]
    if answer.nearest:
        lines += ["", "Nearest passages, for checking:"]
        lines += [f"  {h.rank}. {h.passage_id}  {h.section}" for h in answer.nearest]
    return "\n".join(lines)
