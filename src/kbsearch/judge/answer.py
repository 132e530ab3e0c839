"""A cited answer, uncertain, or "the documents don't say": what ``kbsearch ask`` prints.

Three verdicts (:data:`VERDICTS`): the abstention stage's (:class:`Decision.verdict
<kbsearch.judge.confidence.Decision>`), whose confidence reads the span it chose
(:meth:`kbsearch.judge.confidence.ConfidenceModel.judge`), so ``search`` and ``ask`` show the
same verdict for the same query:

- ``answered``: the confidence reaches the answer threshold: the span, cited;
- ``uncertain``: the confidence reaches the band's floor: the best span and its passage, said
  plainly to maybe not answer, then the other top passages, for checking;
- ``dont_say``: "the documents don't say" (:data:`NO_ANSWER`), with the nearest passages (also
  when no passage has a sentence to show).

The span is chosen from the top passages by :func:`kbsearch.judge.span.choose_span`; the
citation names the passage it came from: passage id, document title, section, version and
effective dates (left out for a first version with no dates) and source. The passages come
from the search's own hits, so nothing the audience may not see can appear. The nearest
passages are kept in every verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from functools import lru_cache
from typing import Any, Protocol

from ..records import Document, Hit
from ..text.analysis import Analyzer, stem_words, words
from ..text.matching import match_spans, query_keys
from ..text.stopwords import content_words, strip_elisions
from .span import Candidate, Span, choose_span, sub_headings
from .verdict import ANSWERED, DONT_SAY, UNCERTAIN, VERDICTS, Decision, band, shown_confidence

NO_ANSWER = "The documents don't say"
__all__ = ["ANSWERED", "DONT_SAY", "UNCERTAIN", "VERDICTS", "Answer", "compose", "render"]
UNCERTAIN_NOTE = "This may not answer the question"
UNCERTAIN_OTHERS = 4  # the other passages an uncertain answer lists, for checking


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

    ``verdict``: one of :data:`VERDICTS`; ``text``: the span (``None`` for ``dont_say``);
    ``start``/``end``: its character offsets in the cited passage's text; ``marks``: matched
    query words, offsets within ``text``; ``threshold``/``floor``: the confidence from which
    it answers / is uncertain; ``span``: the chosen span (its scores, and its offsets in
    ``nearest[span.passage]``, whatever the verdict; ``None`` without one); ``nearest``: the
    search's hits, best first (kept in every verdict).
    """

    query: str
    verdict: str
    confidence: float
    threshold: float
    floor: float
    text: str | None
    start: int | None
    end: int | None
    marks: tuple[tuple[int, int], ...]
    citation: Citation | None
    nearest: tuple[Hit, ...]
    span: Span | None = None

    @property
    def answerable(self) -> bool:
        """True for the ``answered`` verdict."""
        return self.verdict == ANSWERED

    @property
    def span_text(self) -> str | None:
        """The chosen span's text whatever the verdict (``text`` when one is shown; for
        ``dont_say``, what a lower minimum confidence would show; ``None`` without a span):
        for evaluation, never shown as an answer."""
        if self.span is None:
            return None
        return self.nearest[self.span.passage].text[self.span.start : self.span.end]

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "verdict": self.verdict,
            "answerable": self.answerable,
            "confidence": self.confidence,
            "min_confidence": self.threshold,  # named as in search results (decision_fields)
            "uncertain_from": self.floor,
            "answer": self.text if self.text is not None else NO_ANSWER,
            "note": UNCERTAIN_NOTE if self.verdict == UNCERTAIN else None,
            "start": self.start,
            "end": self.end,
            "marks": [list(m) for m in self.marks],
            "citation": self.citation.to_dict() if self.citation else None,
            "span": None
            if self.span is None
            else {
                "coverage": self.span.coverage,
                "score": self.span.score,
                "margin": self.span.margin,
                "agree": self.span.agree,
            },
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


def verdict(confidence: float, threshold: float, floor: float, coverage: float | None) -> str:
    """The verdict (module docstring) of a confidence against the band ``[floor, threshold)``
    (``coverage``: the chosen span's; ``None``: no span, never answered)."""
    if coverage is None:
        return DONT_SAY
    return band(confidence, threshold, min(floor, threshold))


def content_terms(text: str, analyzer: str, languages: Sequence[str]) -> frozenset[str]:
    """The content words of ``text`` as the query's are made into terms (French elisions and
    stop words dropped, stemmed in each of ``languages`` with the ``stem`` analyzer, accents
    folded); cached per process."""
    return _content_terms(text, analyzer, tuple(languages) or ("en",))


@lru_cache(maxsize=16384)
def _content_terms(text: str, analyzer: str, languages: tuple[str, ...]) -> frozenset[str]:
    from ..text.analysis import fold_diacritics

    found = content_words(words(strip_elisions(text)), ("en", "fr"))
    if analyzer == "plain":
        return frozenset(fold_diacritics(w) for w in found)
    return frozenset(t for lang in languages for t in stem_words(found, lang))


@dataclass(frozen=True)
class QuestionTerms:
    """The question's content words (groups of alternative terms) and their weights (IDF),
    as :class:`kbsearch.judge.evidence.TermStatistics` gives them; ``analyzer``: the
    index's."""

    words: tuple[tuple[str, ...], ...]
    idf: tuple[float, ...]
    analyzer: str = "stem"

    @classmethod
    def of(cls, query: str, languages: Sequence[str], analyzer: str = "stem") -> QuestionTerms:
        """Every content word of ``query`` at weight 1 (when no index statistics are at hand).

        Raises:
            QueryError: the query cannot be analysed.
        """
        found = tuple(Analyzer(analyzer).word_terms(query, languages))
        return cls(found, (1.0,) * len(found), analyzer)


def _body(passage: Shown, document: Document) -> int:
    """Where ``passage``'s body starts, after its title and heading lines."""
    return heading_prefix(
        passage.text, [document.title, passage.section, *passage.section.split(" > ")]
    )


def cited_section(passage: Shown, document: Document, start: int) -> str:
    """The section a span starting at offset ``start`` of ``passage`` stands under: the
    passage's, followed by the merged question line the span comes after, if any (an FAQ's
    entry too small to stand alone joins its parent's passage with its question as a line:
    :func:`kbsearch.judge.span.sub_headings`), so ``"Returns > Can I return a gift?"`` where
    the passage is ``Returns``. Only a line that asks a question is named: a short line of
    words may be a merged heading or an address, a caption, a label ("Important"), which the
    stored text does not tell apart, and a citation must not name a section that is none."""
    heads = sub_headings(passage.text, _body(passage, document))
    above = [line for line in heads if line[1] <= start]
    if not above:
        return passage.section
    line = passage.text[slice(*above[-1])]
    if not line.endswith("?"):
        return passage.section
    return f"{passage.section} > {line}" if passage.section else line


def _citation(hit: Hit, document: Document, start: int) -> Citation:
    return Citation(
        passage_id=hit.passage_id,
        doc_id=hit.doc_id,
        title=document.title,
        section=cited_section(hit, document, start),
        version=hit.version,
        effective_from=document.effective_from,
        effective_to=document.effective_to,
        source=document.source,
    )


class Shown(Protocol):
    """What a span is chosen from: a hit or a stored passage."""

    @property
    def passage_id(self) -> str: ...
    @property
    def doc_id(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def section(self) -> str: ...
    @property
    def text(self) -> str: ...


def choose(
    passages: Sequence[Shown],
    documents: Mapping[tuple[str, str], Document],
    languages: Sequence[str],
    terms: QuestionTerms,
    cosines: Mapping[str, float],
    query: str = "",
    sentence_cosines: Mapping[str, Mapping[tuple[int, int], float]] | None = None,
    heading_cosines: Mapping[str, float] | None = None,
) -> Span | None:
    """The span that answers (:func:`kbsearch.judge.span.choose_span`) among ``passages``
    (best first, each with its document in ``documents`` by ``(doc_id, version)``: the
    caller keeps only those), their bodies after the title and heading lines, for the
    question's ``terms``, the passages' ``cosines`` to the question and their sentences'
    (``sentence_cosines``, as :func:`compose`'s) and their headings' (``heading_cosines``, by
    passage id; a passage without a heading vector is left out), for ``query``; what the
    abstention stage judges and ``ask`` shows."""
    language = languages[0] if len(languages) == 1 else "en"
    candidates = []
    for p in passages:
        document = documents[(p.doc_id, p.version)]
        body = _body(p, document)
        cosine = cosines.get(p.passage_id)
        own = (sentence_cosines or {}).get(p.passage_id)
        heading = (heading_cosines or {}).get(p.passage_id)
        candidates.append(
            Candidate(p.text, body, cosine, document.language or language, own, heading)
        )
    return choose_span(
        candidates,
        terms.words,
        terms.idf,
        lambda text: content_terms(text, terms.analyzer, languages),
        query,
    )


def compose(
    query: str,
    decision: Decision,
    hits: Sequence[Hit],
    documents: Mapping[tuple[str, str], Document],
    languages: Sequence[str],
    question: QuestionTerms | None = None,
    cosines: Mapping[str, float] | None = None,
    sentence_cosines: Mapping[str, Mapping[tuple[int, int], float]] | None = None,
    heading_cosines: Mapping[str, float] | None = None,
) -> Answer:
    """The answer from the decision, the hits (best first), their documents by ``(doc_id,
    version)`` (a hit without one is not a candidate), the question's terms (default: every
    content word at weight 1), the passages' cosines to the question (the dense route's
    list; default none) and, by passage id, its sentences' cosines to the question by their
    ``(start, end)`` offsets in the passage text (when sentence vectors are at hand; default
    none: the span is chosen on words and passage cosines) and the cosines of their heading
    vectors by passage id (default none).

    Raises:
        QueryError: the query cannot be analysed (only without ``question``).
    """
    floor = decision.threshold if decision.floor is None else decision.floor
    usable = [h for h in hits if (h.doc_id, h.version) in documents]
    ids = [h.passage_id for h in usable]
    span = decision.span
    if span is not None and decision.span_passage in ids:  # the span the stage judged
        span = replace(span, passage=ids.index(decision.span_passage))
    else:
        terms = question or QuestionTerms.of(query, languages)
        span = choose(
            usable, documents, languages, terms, cosines or {}, query, sentence_cosines,
            heading_cosines,
        )  # fmt: skip
    chosen = DONT_SAY if span is None else decision.verdict
    if span is None:
        return Answer(
            query, DONT_SAY, decision.confidence, decision.threshold, floor,
            None, None, None, (), None, tuple(hits), None,
        )  # fmt: skip
    hit = usable[span.passage]
    span = replace(span, passage=hits.index(hit))  # as the answer's nearest list counts
    if chosen == DONT_SAY:
        return Answer(
            query, DONT_SAY, decision.confidence, decision.threshold, floor,
            None, None, None, (), None, tuple(hits), span,
        )  # fmt: skip
    text = hit.text[span.start : span.end]
    matches = match_spans(text, query_keys(query, languages), languages)
    return Answer(
        query,
        chosen,
        decision.confidence,
        decision.threshold,
        floor,
        text,
        span.start,
        span.end,
        tuple((s, e) for s, e, _ in matches),
        _citation(hit, documents[(hit.doc_id, hit.version)], span.start),
        tuple(hits),
        span,
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


def verdict_line(verdict_: str, confidence: float, threshold: float, floor: float) -> str:
    """The one line that states a verdict and its confidence, as ``ask`` and ``search`` print
    it (the same words on the page and in the MCP tools' descriptions)."""
    shown, answers = shown_confidence(confidence), shown_confidence(threshold)
    if verdict_ == ANSWERED:
        return f"Answered (confidence {shown}, answers from {answers})"
    if verdict_ == UNCERTAIN:
        return f"Uncertain (confidence {shown}, answers from {answers}): {UNCERTAIN_NOTE.lower()}"
    return f"{NO_ANSWER} (confidence {shown}, below {shown_confidence(min(floor, threshold))})"


def render(answer: Answer, mark: Callable[[str], str] = str) -> str:
    """The text ``kbsearch ask`` prints (module docstring); ``mark`` styles the answer's
    matched query words (e.g. bold on a terminal)."""
    state = verdict_line(answer.verdict, answer.confidence, answer.threshold, answer.floor)
    if answer.verdict != DONT_SAY and answer.citation is not None:
        c = answer.citation
        about = ""  # a first version in force with no dates: nothing worth saying
        if c.version != "1" or c.effective_from or c.effective_to:
            about = f" (version {c.version}, {_in_force(c.effective_from, c.effective_to)})"
        lines = [f"{UNCERTAIN_NOTE}:", ""] if answer.verdict == UNCERTAIN else []
        lines += [
            marked(str(answer.text), answer.marks, mark),
            "",
            f"Source: {' > '.join(filter(None, (c.title, c.section)))}{about}",
            f"Passage: {c.passage_id}" + (f"  File: {c.source}" if c.source else ""),
            state,
        ]
        others = [h for h in answer.nearest if h.passage_id != c.passage_id][:UNCERTAIN_OTHERS]
        if answer.verdict == UNCERTAIN and others:  # the answer may be in another of them
            lines += ["", "Other passages, for checking:"]
            lines += _listed(others)
        return "\n".join(lines)
    lines = [f"{state}."]
    if answer.nearest:
        lines += ["", "Nearest passages, for checking:"]
        lines += _listed(answer.nearest)
    return "\n".join(lines)


def _listed(hits: Sequence[Hit]) -> list[str]:
    """One line per hit, for checking: its rank, passage id and section."""
    return [f"  {h.rank}. {h.passage_id}  {h.section}".rstrip() for h in hits]
