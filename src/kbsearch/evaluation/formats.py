"""Readers of question-set formats, in a registry (:data:`READERS`).

- ``beir``: a folder with ``queries.jsonl`` (``{"_id", "text"}``), ``qrels/<split>.tsv``
  (``query-id  corpus-id  score`` with a header line) and usually ``corpus.jsonl``. The questions
  are the queries that appear in the qrels split; scores are graded relevance (0 = judged not
  relevant). Matching by document id (Thakur et al. 2021, BEIR).
- ``policy``: the policy assistant's JSONL, one question per line with ``id, question, language,
  kind, as_of, public_ok, abstain, reference_answer, keys, must_not, relevant`` (list of
  ``{doc_id, version, section, access}``), ``relevant_chunks`` (passage ids), ``wrong_version``,
  ``tags``, ``notes``. Matching by document + version + section.
- ``tutorial``: a JSON list of ``{"question", "relevant": [ids], "name"?}``; ids are
  document (card) ids.
- ``trec``: a TREC qrels file (``qid 0 docid grade``) and a topics file, either tab-separated
  ``qid<TAB>text`` or classic ``<top><num>...<title>...</top>`` SGML.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kbsearch.errors import EvaluationError, shown_value
from kbsearch.evaluation.answers import normalize_answer, split_answer
from kbsearch.evaluation.questions import MATCH_RULES, Question, QuestionSet, Relevant, parse_date
from kbsearch.evaluation.trec import trec_lines, unescape_id
from kbsearch.jsonl import json_lines

Reader = Callable[[Path, str, "str | None"], QuestionSet]

TOPIC_NAMES: tuple[str, ...] = ("topics.tsv", "topics.txt", "topics", "queries.tsv", "queries.txt")
QRELS_NAMES: tuple[str, ...] = ("qrels.txt", "qrels.tsv", "qrels")


def _id_relevant(doc_or_passage_id: str, grade: int, rule: str) -> Relevant:
    if rule == "passage":
        return Relevant(passage_id=doc_or_passage_id, grade=grade)
    return Relevant(doc_id=doc_or_passage_id, grade=grade)


def _id_rule(rule: str | None, fmt: str) -> str:
    if rule is None:
        return "document"
    if rule == "section":
        raise EvaluationError(f"the {fmt} format gives ids only: use rule document or passage")
    return rule


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    def bad_line(number: int, err: ValueError | RecursionError) -> EvaluationError:
        reason = err.msg if isinstance(err, json.JSONDecodeError) else "unreadable JSON value"
        return EvaluationError(f"{path}:{number}: not JSON: {reason}")

    for number, record in json_lines(path, bad_line, encoding="utf-8-sig"):
        if not isinstance(record, dict):
            raise EvaluationError(f"{path}:{number}: expected a JSON object per line")
        yield number, record


def _grade(value: str, where: str) -> int:
    try:
        return int(float(value))
    except (ValueError, OverflowError) as err:  # "nan"; "inf" overflows
        raise EvaluationError(f"{where}: relevance grade must be a number, got {value!r}") from err


def _add_judgement(
    judged: dict[str, dict[str, int]], qid: str, doc: str, grade: int, where: str
) -> None:
    per_query = judged.setdefault(qid, {})
    if doc in per_query:
        raise EvaluationError(f"{where}: duplicate judgement for query {qid!r}, id {doc!r}")
    per_query[doc] = grade


def _relevant_from_grades(grades: dict[str, int], rule: str) -> tuple[Relevant, ...]:
    return tuple(_id_relevant(doc, g, rule) for doc, g in grades.items() if g >= 1)


def read_beir(folder: Path, split: str, rule: str | None) -> QuestionSet:
    """Read a BEIR folder; see the module docstring.

    Raises:
        EvaluationError: missing files, malformed lines, a qrels query absent from queries.
    """
    chosen = _id_rule(rule, "beir")
    queries_path = folder / "queries.jsonl"
    qrels_path = folder / "qrels" / f"{split}.tsv"
    for needed in (queries_path, qrels_path):
        if not needed.is_file():
            raise EvaluationError(f"BEIR folder {folder} lacks {needed.relative_to(folder)}")
    texts: dict[str, str] = {}
    for number, record in _jsonl(queries_path):
        if "_id" not in record or not isinstance(record.get("text"), str):
            raise EvaluationError(f"{queries_path}:{number}: needs '_id' and 'text'")
        texts[str(record["_id"])] = record["text"]
    judged: dict[str, dict[str, int]] = {}
    with qrels_path.open(encoding="utf-8", newline="") as handle:
        for number, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if not row or (number == 1 and row[0] == "query-id"):
                continue
            where = f"{qrels_path}:{number}"
            if len(row) != 3:
                raise EvaluationError(f"{where}: expected query-id, corpus-id, score")
            _add_judgement(judged, row[0], row[1], _grade(row[2], where), where)
    questions = []
    for qid, grades in judged.items():
        if qid not in texts:
            raise EvaluationError(f"{qrels_path}: query {qid!r} is not in {queries_path.name}")
        relevant = _relevant_from_grades(grades, chosen)
        questions.append(Question(qid=qid, text=texts[qid], relevant=relevant))
    corpus = folder / "corpus.jsonl"
    return QuestionSet(
        questions=tuple(questions),
        rule=chosen,
        format="beir",
        source=str(folder),
        corpus=corpus if corpus.is_file() else None,
    )


def _str_list(value: object, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise EvaluationError(f"{where}: expected a list of strings")
    return tuple(value)


def _check_keys(keys: object, where: str) -> None:
    """A question's ``keys`` (its gold for ``eval --answers``: what a right answer holds,
    :mod:`kbsearch.evaluation.answers`): a list of strings that each leave a word once
    normalised as answers are (:func:`~kbsearch.evaluation.answers.normalize_answer` or
    :func:`~kbsearch.evaluation.answers.split_answer`); a string was read one character a key,
    and a key of punctuation or articles only (``"..."``, ``"the"``) is held by no answer, so
    the question was never right, silently.

    Raises:
        EvaluationError: any other value.
    """
    for key in _str_list(keys, f"{where}: keys"):
        if not normalize_answer(key) and not split_answer(key):
            raise EvaluationError(
                f"{where}: key {shown_value(key)} is empty once normalised (lower case,"
                " punctuation and articles removed), so no answer holds it"
            )


def _policy_question(record: dict[str, Any], where: str, rule: str) -> Question:
    for key in ("id", "question"):
        if key not in record:
            raise EvaluationError(f"{where}: missing field {key!r}")
    items: list[Relevant] = []
    listed = record.get("relevant") or []
    if not isinstance(listed, list):
        raise EvaluationError(f"{where}: 'relevant' must be a list")
    for item in listed:
        if not isinstance(item, dict) or "doc_id" not in item:
            raise EvaluationError(f"{where}: each relevant item needs a doc_id")
        for key, kinds in (("doc_id", str | int), ("version", str | int | None)):
            value = item.get(key)  # [1] was the doc id "[1]", null the doc id "None"
            if isinstance(value, bool) or not isinstance(value, kinds):
                raise EvaluationError(f"{where}: a relevant item's {key!r} must be text")
        for key in ("section", "access"):
            if not isinstance(item.get(key), str | None):
                raise EvaluationError(f"{where}: a relevant item's {key!r} must be text")
        version = item.get("version")
        section = item.get("section")
        items.append(
            Relevant(
                doc_id=str(item["doc_id"]),
                version=None if version is None or rule == "document" else str(version),
                section=None if section is None or rule != "section" else str(section),
                access=item.get("access"),
            )
        )
    chunks = _str_list(record.get("relevant_chunks"), f"{where}: relevant_chunks")
    _check_keys(record.get("keys"), where)
    if rule == "passage" or (not items and chunks):
        items = [Relevant(passage_id=chunk) for chunk in chunks]
    if rule == "document":
        items = list({item.doc_id: item for item in items}.values())
    if not isinstance(record["question"], str) or not record["question"].strip():
        raise EvaluationError(f"{where}: 'question' must be a non-empty string")
    if not isinstance(record["id"], str | int) or isinstance(record["id"], bool):
        raise EvaluationError(f"{where}: 'id' must be a string or an integer")
    for key in ("language", "kind"):
        if not isinstance(record.get(key), str | None):
            raise EvaluationError(f"{where}: {key!r} must be a string")
    for key in ("public_ok", "abstain"):
        if not isinstance(record.get(key, False), bool):
            raise EvaluationError(f"{where}: {key!r} must be true or false, not {record[key]!r}")
    _check_keys(record.get("keys"), where)
    known = {"id", "question", "language", "kind", "as_of", "public_ok", "abstain", "relevant"}
    return Question(
        qid=str(record["id"]),
        text=str(record["question"]),
        language=record.get("language") or None,
        kind=record.get("kind") or None,
        as_of=parse_date(record.get("as_of"), where),
        public_ok=bool(record.get("public_ok", True)),
        abstain=bool(record.get("abstain", False)),
        relevant=tuple(items),
        extra={key: value for key, value in record.items() if key not in known},
    )


def read_policy(path: Path, split: str, rule: str | None) -> QuestionSet:
    """Read the policy assistant's question JSONL; see the module docstring.

    Raises:
        EvaluationError: a line is not a JSON object, a required field is missing, a bad date.
    """
    chosen = rule or "section"
    questions = tuple(
        _policy_question(record, f"{path}:{number}", chosen) for number, record in _jsonl(path)
    )
    return QuestionSet(
        questions=questions, rule=chosen, format="policy", source=str(path), access_aware=True
    )


def read_tutorial(path: Path, split: str, rule: str | None) -> QuestionSet:
    """Read the tutorial's JSON list of ``{question, relevant, name?}``; qids are ``q1``, ``q2``...

    Raises:
        EvaluationError: not a JSON list of such objects.
    """
    chosen = _id_rule(rule, "tutorial")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise EvaluationError(f"{path}: not JSON: {err.msg}") from err
    except (ValueError, RecursionError) as err:  # nested too deep, an integer too long
        raise EvaluationError(f"{path}: not JSON: unreadable JSON value") from err
    if not isinstance(data, list):
        raise EvaluationError(f"{path}: expected a JSON list of questions")
    questions = []
    for index, record in enumerate(data, start=1):
        where = f"{path}: question {index}"
        if not isinstance(record, dict) or not isinstance(record.get("question"), str):
            raise EvaluationError(f"{where}: needs a 'question' string")
        ids = _str_list(record.get("relevant"), f"{where}: relevant")
        name = record.get("name")
        questions.append(
            Question(
                qid=f"q{index}",
                text=record["question"],
                relevant=tuple(_id_relevant(i, 1, chosen) for i in dict.fromkeys(ids)),
                name=str(name) if name is not None else None,
            )
        )
    return QuestionSet(questions=tuple(questions), rule=chosen, format="tutorial", source=str(path))


_TOP = re.compile(r"<top>(.*?)</top>", re.DOTALL | re.IGNORECASE)
_NUM = re.compile(r"<num>\s*(?:Number:)?\s*(\S+)", re.IGNORECASE)
_TITLE = re.compile(r"<title>\s*(?:Topic:)?\s*(.*?)\s*(?=<|\Z)", re.DOTALL | re.IGNORECASE)


def read_topics(path: Path) -> dict[str, str]:
    """Read a topics file: classic TREC SGML (``<num>``, ``<title>``) or ``qid<TAB>text`` lines.

    Raises:
        EvaluationError: a topic without number or title, a line without a tab, a duplicate id.
    """
    text = path.read_text(encoding="utf-8")
    topics: dict[str, str] = {}
    if "<top>" in text.lower():
        for block in _TOP.findall(text):
            num, title = _NUM.search(block), _TITLE.search(block)
            if num is None or title is None:
                raise EvaluationError(f"{path}: a <top> block lacks <num> or <title>")
            if num.group(1) in topics:
                raise EvaluationError(f"{path}: duplicate topic {num.group(1)!r}")
            topics[num.group(1)] = " ".join(title.group(1).split())
        return topics
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        qid, tab, query = line.partition("\t")
        if not tab or not query.strip():
            raise EvaluationError(f"{path}:{number}: expected 'qid<TAB>text'")
        if qid.strip() in topics:
            raise EvaluationError(f"{path}:{number}: duplicate topic {qid.strip()!r}")
        topics[qid.strip()] = query.strip()
    return topics


def read_trec_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Read TREC qrels (``qid iteration docid grade``, whitespace-separated) into
    ``{qid: {docid: grade}}`` in file order, ids unescaped as kbsearch writes them
    (:func:`kbsearch.evaluation.trec.unescape_id`).

    Raises:
        EvaluationError: unreadable or not UTF-8, a line without four fields, a non-numeric
            grade, a duplicate pair.
    """
    judged: dict[str, dict[str, int]] = {}
    for number, fields in trec_lines(path, "qrels"):  # compare reads them apart
        where = f"{path}:{number}"
        if len(fields) != 4:
            raise EvaluationError(f"{where}: expected 'qid 0 docid grade'")
        qid, doc = unescape_id(fields[0]), unescape_id(fields[2])
        _add_judgement(judged, qid, doc, _grade(fields[3], where), where)
    return judged


def _find(folder: Path, names: tuple[str, ...], what: str) -> Path:
    for name in names:
        if (folder / name).is_file():
            return folder / name
    raise EvaluationError(f"no {what} file in {folder} (looked for {', '.join(names)})")


def read_trec(path: Path, split: str, rule: str | None) -> QuestionSet:
    """Read TREC qrels with their topics. ``path`` is a qrels file (topics looked up in the same
    folder under :data:`TOPIC_NAMES`) or a folder holding both (:data:`QRELS_NAMES`).

    Raises:
        EvaluationError: missing files, malformed lines, a judged query without a topic.
    """
    chosen = _id_rule(rule, "trec")
    folder = path if path.is_dir() else path.parent
    qrels_path = _find(path, QRELS_NAMES, "qrels") if path.is_dir() else path
    topics_path = _find(folder, TOPIC_NAMES, "topics")
    topics = read_topics(topics_path)
    questions = []
    for qid, grades in read_trec_qrels(qrels_path).items():
        if qid not in topics:
            raise EvaluationError(f"{qrels_path}: query {qid!r} has no topic in {topics_path}")
        relevant = _relevant_from_grades(grades, chosen)
        questions.append(Question(qid=qid, text=topics[qid], relevant=relevant))
    return QuestionSet(
        questions=tuple(questions), rule=chosen, format="trec", source=str(qrels_path)
    )


READERS: dict[str, Reader] = {
    "beir": read_beir,
    "policy": read_policy,
    "tutorial": read_tutorial,
    "trec": read_trec,
}


def detect_format(path: Path) -> str:
    """The name of the reader for ``path``: a folder with ``queries.jsonl`` and ``qrels/`` is
    ``beir``, a folder with qrels and topics files is ``trec``; a ``.jsonl`` file is ``policy``,
    a ``.json`` file ``tutorial``, any other file is TREC qrels.

    Raises:
        EvaluationError: a folder that is neither BEIR nor TREC.
    """
    if path.is_dir():
        if (path / "queries.jsonl").is_file() and (path / "qrels").is_dir():
            return "beir"
        if any((path / name).is_file() for name in QRELS_NAMES):
            return "trec"
        raise EvaluationError(
            f"{path}: not a BEIR folder (queries.jsonl + qrels/) nor a TREC folder (qrels + topics)"
        )
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return "policy"
    if suffix == ".json":
        return "tutorial"
    return "trec"


def load_questions(
    path: str | Path,
    split: str = "test",
    *,
    format: str | None = None,
    rule: str | None = None,
) -> QuestionSet:
    """Read a question set, detecting its format unless ``format`` is given.

    Args:
        path: a BEIR folder, a policy JSONL file, a tutorial JSON file, or a TREC qrels file
            (its topics file found next to it, see :mod:`kbsearch.evaluation.formats`).
        split: the BEIR qrels split (``qrels/<split>.tsv``).
        format: one of :data:`kbsearch.evaluation.formats.READERS` (``beir``, ``policy``,
            ``tutorial``, ``trec``); detected when None.
        rule: override the format's matching rule (``document``/``passage``/``section``); for
            id-based formats ``passage`` means the ids are passage ids.

    Raises:
        EvaluationError: unknown or undetectable format, malformed input (not UTF-8, a field
            of the wrong type), no question at all, unknown rule.
    """
    source = Path(path)
    if not source.exists():
        raise EvaluationError(f"question set not found: {source}")
    name = format or detect_format(source)
    if name not in READERS:
        raise EvaluationError(f"unknown question format {name!r}; known: {', '.join(READERS)}")
    if rule is not None and rule not in MATCH_RULES:
        raise EvaluationError(f"unknown matching rule {rule!r}; expected {', '.join(MATCH_RULES)}")
    try:
        questions = READERS[name](source, split, rule)
    except UnicodeDecodeError as exc:
        raise EvaluationError(f"{source}: not UTF-8 text (byte {exc.start})") from exc
    if not questions.questions:
        raise EvaluationError(f"{source}: no questions")
    return questions
