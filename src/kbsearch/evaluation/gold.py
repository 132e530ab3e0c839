"""Check a question set against an index before trusting its scores.

A relevant item that names a document the index lacks, a version it lacks, or a passage the
question's own filters hide (a staff passage for a public question, a version not in force on
its date), or a section that no passage of the document's versions is in (a misspelt heading),
can never be found: its question scores 0 however good the search is. Such items are
almost always mistakes in the question file, so they are reported, not silently scored.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from kbsearch.evaluation.judging import section_covers
from kbsearch.evaluation.questions import QuestionSet
from kbsearch.evaluation.runner import question_filters
from kbsearch.filters import Audience, in_force
from kbsearch.records import Document


@dataclass(frozen=True)
class Unreachable:
    """A relevant item of question ``qid`` that no search of that question can return."""

    qid: str
    item: str
    reason: str


def unreachable_relevant(
    questions: QuestionSet,
    documents: Iterable[Document],
    passage_ids: set[str] | Mapping[str, str] | None = None,
    sections: Mapping[tuple[str, str], Collection[str]] | None = None,
) -> list[Unreachable]:
    """Relevant items that the index cannot return for their question (see module docstring).

    ``passage_ids`` (the passages the question set names, or every passage of the index) is
    needed only for items named by passage; given as a mapping from passage id to its access
    label, a passage hidden from the question's audience is reported too. ``sections`` maps
    ``(doc_id, version)`` to the section names of its passages; given, an item naming a section
    that no passage of its document's visible, in-force versions covers
    (:func:`kbsearch.evaluation.judging.section_covers`) is reported.
    """
    versions: dict[str, dict[str, Document]] = {}
    for doc in documents:
        versions.setdefault(doc.doc_id, {})[doc.version] = doc
    out: list[Unreachable] = []
    for q in questions.questions:
        if not q.has_relevant:
            continue
        filters = question_filters(q, questions.access_aware, use_language=False)
        day, seer = filters.day, Audience.parse(filters.audience)
        for item in q.relevant:
            if item.passage_id is not None:
                if passage_ids is not None and item.passage_id not in passage_ids:
                    out.append(Unreachable(q.qid, item.passage_id, "no such passage"))
                elif isinstance(passage_ids, Mapping) and not seer.sees(
                    passage_ids[item.passage_id]
                ):
                    out.append(
                        Unreachable(q.qid, item.passage_id, "hidden from the question's audience")
                    )
                continue
            name = str(item.doc_id) + (f"@v{item.version}" if item.version else "")
            known = versions.get(str(item.doc_id))
            if not known:
                out.append(Unreachable(q.qid, name, "no such document in the index"))
                continue
            candidates = [known[item.version]] if item.version in known else []
            if item.version is None:
                candidates = list(known.values())
            if not candidates:
                out.append(Unreachable(q.qid, name, "no such version in the index"))
                continue
            if not any(seer.sees(d.access) for d in candidates):
                out.append(Unreachable(q.qid, name, "hidden from the question's audience"))
            elif not any(in_force(d.effective_from, d.effective_to, day) for d in candidates):
                out.append(Unreachable(q.qid, name, f"not in force on {day.isoformat()}"))
            elif item.section is not None and sections is not None:
                wanted = item.section
                reachable = [
                    d
                    for d in candidates
                    if seer.sees(d.access) and in_force(d.effective_from, d.effective_to, day)
                ]
                if not any(
                    section_covers(wanted, s)
                    for d in reachable
                    for s in sections.get((d.doc_id, d.version), ())
                ):
                    out.append(Unreachable(q.qid, f"{name}#{wanted}", "no such section"))
    return out
