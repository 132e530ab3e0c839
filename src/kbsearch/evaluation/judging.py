"""Judge search hits against a question's relevant items.

A hit is judged by the first relevant item it matches:

- a ``Relevant(passage_id=...)`` matches the hit with that passage id;
- a ``Relevant(doc_id=..., version=..., section=...)`` (the policy assistant's rule) matches a
  hit from the same document and version whose section covers it:
  ``slugify(relevant.section)`` equals ``slugify(hit.section)`` or the slug of one of the hit
  section's `` > `` components (a passage of a sub-section lies inside the section). A hit
  from version 4 never covers a version-3 item;
- a ``Relevant(doc_id=...)`` (optionally with ``version``) matches any passage of that document.

Each hit becomes a *unit key*: the key of the relevant item it matches, otherwise its own key at
the question set's granularity (``document``: the doc id; ``section``: ``doc@vVERSION#slug``;
``passage``: the passage id). The ranked hit list is then collapsed to distinct keys in
first-appearance order, so that a relevant document (or section) found by several passages counts
once, at the rank of its first passage, and the passages after it move up. This is the usual
*max-passage* evaluation of split corpora in BEIR/MS MARCO document ranking: the judged run is a
list of distinct documents, as trec_eval expects (it refuses duplicate ids).
"""

from __future__ import annotations

from collections.abc import Sequence

from kbsearch.errors import EvaluationError
from kbsearch.evaluation.questions import MATCH_RULES, Question, QuestionSet, Relevant
from kbsearch.records import Hit
from kbsearch.text.slugs import slugify


def _section_slug(section: str) -> str:
    return slugify(section) or "top"


def relevant_key(item: Relevant) -> str:
    """The id a relevant item is judged under (the docid of the qrels written for it):
    ``doc@vVERSION#slug``, or ``doc#slug`` for a section of any version (no ``@vNone``)."""
    if item.passage_id is not None:
        return item.passage_id
    if item.section is not None:
        version = "" if item.version is None else f"@v{item.version}"
        return f"{item.doc_id}{version}#{_section_slug(item.section)}"
    if item.version is not None:
        return f"{item.doc_id}@v{item.version}"
    return str(item.doc_id)


def section_covers(relevant_section: str, hit_section: str) -> bool:
    """True when the hit's section covers the relevant section: equal slugs, or the relevant
    slug equals the slug of one of the hit section's `` > `` components (the hit's passage is
    that section or lies inside it: ``"Orders"`` is covered by ``"Orders > Cancelling"``)."""
    wanted = slugify(relevant_section)
    parts = hit_section.split(" > ")
    return wanted == slugify(hit_section) or any(wanted == slugify(p) for p in parts)


def matches(item: Relevant, hit: Hit) -> bool:
    """True when ``hit`` is the relevant ``item`` (see the module docstring for the rules)."""
    if item.passage_id is not None:
        return hit.passage_id == item.passage_id
    if hit.doc_id != item.doc_id:
        return False
    if item.version is not None and hit.version != item.version:
        return False
    return item.section is None or section_covers(item.section, hit.section)


def unit_key(hit: Hit, rule: str) -> str:
    """The key of a hit that matches no relevant item, at the granularity of ``rule``.

    Raises:
        EvaluationError: unknown rule.
    """
    if rule == "document":
        return hit.doc_id
    if rule == "passage":
        return hit.passage_id
    if rule == "section":
        return f"{hit.doc_id}@v{hit.version}#{_section_slug(hit.section)}"
    raise EvaluationError(f"unknown matching rule {rule!r}; expected {', '.join(MATCH_RULES)}")


def question_qrels(question: Question) -> dict[str, int]:
    """``{key: grade}`` for a question's relevant items; empty for abstain questions.
    A key listed twice keeps its highest grade."""
    if question.abstain:
        return {}
    grades: dict[str, int] = {}
    for item in question.relevant:
        key = relevant_key(item)
        grades[key] = max(grades.get(key, 0), item.grade)
    return grades


def judge_hits(question: Question, hits: Sequence[Hit], rule: str) -> list[str]:
    """The judged run of one question: distinct unit keys in first-appearance order.

    Raises:
        EvaluationError: unknown rule, or the same passage id returned twice.
    """
    items = () if question.abstain else question.relevant
    keys = [relevant_key(item) for item in items]
    seen_passages: set[str] = set()
    judged: dict[str, None] = {}
    for hit in hits:
        if hit.passage_id in seen_passages:
            raise EvaluationError(
                f"question {question.qid!r}: passage {hit.passage_id!r} returned twice"
            )
        seen_passages.add(hit.passage_id)
        key = next((k for k, item in zip(keys, items, strict=True) if matches(item, hit)), None)
        judged.setdefault(key if key is not None else unit_key(hit, rule), None)
    return list(judged)


def set_qrels(questions: QuestionSet) -> dict[str, dict[str, int]]:
    """``{qid: {key: grade}}`` for every question of the set (empty dict when none relevant)."""
    return {q.qid: question_qrels(q) for q in questions.questions}
