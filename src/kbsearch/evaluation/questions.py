"""Question records and the question-set loader.

A question set is a tuple of :class:`Question` plus the *matching rule* that says how a search
hit is compared with the question's relevant items (see :mod:`kbsearch.evaluation.judging`):

- ``"document"``: by document id, any passage of a relevant document (BEIR, TREC, tutorial);
- ``"passage"``: by passage id;
- ``"section"``: by document + version + section (the policy assistant's rule).

Formats are read by the readers registered in :mod:`kbsearch.evaluation.formats`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

from kbsearch.errors import EvaluationError, InvalidArgumentError
from kbsearch.filters import parse_day

MATCH_RULES: tuple[str, ...] = ("document", "passage", "section")


@dataclass(frozen=True)
class Relevant:
    """One relevant item of a question, with its graded relevance (``grade >= 1``).

    Either ``passage_id`` is set (matched by passage id), or ``doc_id`` (matched by document),
    optionally with ``version`` and ``section`` (matched by document + version + section).
    ``access`` is the item's access label when the source gives it.
    """

    passage_id: str | None = None
    doc_id: str | None = None
    version: str | None = None
    section: str | None = None
    grade: int = 1
    access: str | None = None

    def __post_init__(self) -> None:
        if self.passage_id is None and self.doc_id is None:
            raise EvaluationError("a relevant item needs a passage_id or a doc_id")
        if self.grade < 1:
            raise EvaluationError(f"a relevant item has grade >= 1, got {self.grade}")


@dataclass(frozen=True)
class Question:
    """A question to search, with the filters it is searched under and what answers it.

    ``as_of`` and ``language`` become search filters; ``public_ok`` selects the audience
    (``True`` -> ``public``, ``False`` -> ``staff``). ``abstain`` marks a question the corpus
    cannot answer: it is counted apart, as a question with no relevant passage.
    ``extra`` keeps the source's other fields (reference answer, keys, must_not, tags...).
    """

    qid: str
    text: str
    language: str | None = None
    kind: str | None = None
    as_of: date | None = None
    public_ok: bool = True
    abstain: bool = False
    relevant: tuple[Relevant, ...] = ()
    name: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def has_relevant(self) -> bool:
        """True when the question has at least one relevant item and is not an abstain one."""
        return bool(self.relevant) and not self.abstain


@dataclass(frozen=True)
class QuestionSet:
    """Questions read from one source, with the matching rule of that source.

    ``access_aware`` is False for formats that carry no access information (BEIR, TREC,
    tutorial): those questions are searched as the ``staff`` audience, which sees everything.
    ``corpus`` is the corpus file that comes with the set (BEIR ``corpus.jsonl``), if any.
    """

    questions: tuple[Question, ...]
    rule: str
    format: str
    source: str = ""
    access_aware: bool = False
    corpus: Path | None = None

    def __post_init__(self) -> None:
        if self.rule not in MATCH_RULES:
            raise EvaluationError(
                f"unknown matching rule {self.rule!r}; expected one of {', '.join(MATCH_RULES)}"
            )
        seen: set[str] = set()
        for question in self.questions:
            if question.qid in seen:
                raise EvaluationError(f"duplicate question id {question.qid!r} in {self.source}")
            seen.add(question.qid)

    def __len__(self) -> int:
        return len(self.questions)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The distinct question kinds, sorted (empty when no question has a kind)."""
        return tuple(sorted({q.kind for q in self.questions if q.kind}))

    def only_kind(self, kind: str) -> QuestionSet:
        """The subset of questions of one kind.

        Raises:
            EvaluationError: no question has that kind.
        """
        kept = tuple(q for q in self.questions if q.kind == kind)
        if not kept:
            known = ", ".join(self.kinds) or "none"
            raise EvaluationError(f"no question of kind {kind!r} (kinds: {known})")
        return replace(self, questions=kept)


def parse_date(value: object, where: str) -> date | None:
    """An ISO ``YYYY-MM-DD`` date, or None for an empty value.

    Raises:
        EvaluationError: the value is not an ISO date.
    """
    if value is not None and not isinstance(value, str):
        raise EvaluationError(f"{where}: date must be a YYYY-MM-DD string, got {value!r}")
    try:
        return None if value == "" else parse_day(value)
    except InvalidArgumentError as err:
        raise EvaluationError(f"{where}: bad date {value!r} (expected YYYY-MM-DD)") from err
