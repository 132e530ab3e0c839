"""TREC run and qrels files, so trec_eval, ir-measures or ranx can check every number.

Run lines: ``qid Q0 docid rank score tag``. kbsearch writes rank-derived scores that strictly
decrease with the rank (``n - rank + 1`` for a list of ``n``), because trec_eval sorts by score
and breaks ties by docid: with raw tied scores it would judge another order than the returned one.
Qrels lines: ``qid 0 docid grade``.

Fields are separated by whitespace, so an id holding whitespace (a passage id made from a file
named ``return policy.md``) is written escaped: each whitespace character and ``%`` as ``%XX``
(its UTF-8 bytes, as in a URL: ``return%20policy@v1#refunds``), nothing else changed. Runs and
qrels are escaped alike, so any tool matches them; kbsearch reads both back unescaped
(:func:`unescape_id`, also for another system's files: a ``%XX`` there is read as that
character).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from urllib.parse import unquote

from kbsearch.errors import EvaluationError
from kbsearch.evaluation.metrics import check_run
from kbsearch.outputs import write_output

_ESCAPED = re.compile(r"[\s%]")


def escape_id(value: str) -> str:
    """``value`` with each whitespace character and ``%`` percent-encoded (UTF-8), so that it
    is one field of a TREC line (module docstring); the inverse of :func:`unescape_id`."""
    return _ESCAPED.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), value)


def unescape_id(value: str) -> str:
    """A TREC field read back: ``%XX`` sequences decoded (UTF-8), the rest as written."""
    return unquote(value) if "%" in value else value


def _field(value: str, what: str) -> str:
    if not value:
        raise EvaluationError(f"{what} {value!r} cannot be written to a TREC file (empty)")
    return escape_id(value)


def _check_token(value: str, what: str) -> None:
    if not value or any(c.isspace() for c in value):
        raise EvaluationError(f"{what} {value!r} cannot be written to a TREC file (whitespace)")


def write_trec_run(path: str | Path, run: Mapping[str, Sequence[str]], tag: str) -> Path:
    """Write ``{qid: [docid, ...]}`` (returned order) as a TREC run, ids escaped
    (:func:`escape_id`); returns the path.

    Raises:
        EvaluationError: a duplicate id in a list, an empty id, whitespace in the tag.
        StorageError: the file cannot be written.
    """
    check_run(run)
    _check_token(tag, "tag")
    lines = []
    for qid, docs in run.items():
        query = _field(qid, "query id")
        for rank, doc in enumerate(docs, start=1):
            field = _field(doc, "document id")
            lines.append(f"{query} Q0 {field} {rank} {len(docs) - rank + 1} {tag}\n")
    return write_output(path, "".join(lines))


def write_trec_qrels(path: str | Path, qrels: Mapping[str, Mapping[str, int]]) -> Path:
    """Write ``{qid: {docid: grade}}`` as TREC qrels, ids escaped (:func:`escape_id`);
    returns the path.

    Raises:
        EvaluationError: an empty id.
        StorageError: the file cannot be written.
    """
    lines = []
    for qid, judged in qrels.items():
        query = _field(qid, "query id")
        for doc, grade in judged.items():
            lines.append(f"{query} 0 {_field(doc, 'document id')} {grade}\n")
    return write_output(path, "".join(lines))


def trec_lines(path: Path, what: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number from 1, whitespace-separated fields)`` of each non-blank line of the
    TREC file ``path`` (``what``: its kind, for the message).

    Raises:
        EvaluationError: the file cannot be read, or is not UTF-8 text.
    """
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                fields = line.split()
                if fields:
                    yield number, fields
    except UnicodeDecodeError as exc:
        raise EvaluationError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
    except OSError as exc:
        raise EvaluationError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc


def read_trec_run(path: str | Path) -> dict[str, list[str]]:
    """Read a TREC run into ``{qid: [docid, ...]}`` ordered by decreasing score, equal scores
    by increasing rank column, then file order (so a kbsearch run reads back in returned order),
    ids unescaped (:func:`unescape_id`).

    Raises:
        EvaluationError: missing or unreadable file, not UTF-8, a line without six fields, a
            non-numeric rank or score, a score that is not finite, a docid listed twice for
            one query.
    """
    source = Path(path)
    if not source.is_file():
        raise EvaluationError(f"run file not found: {source}")
    rows: dict[str, list[tuple[float, int, int, str]]] = {}
    for number, fields in trec_lines(source, "run file"):
        if len(fields) != 6:
            raise EvaluationError(f"{source}:{number}: expected 'qid Q0 docid rank score tag'")
        try:
            rank, score = int(fields[3]), float(fields[4])
        except ValueError as err:
            raise EvaluationError(f"{source}:{number}: bad rank or score") from err
        if not math.isfinite(score):  # NaN sorts nowhere: the order would be noise
            raise EvaluationError(f"{source}:{number}: the score is not a finite number")
        entry = (-score, rank, number, unescape_id(fields[2]))
        rows.setdefault(unescape_id(fields[0]), []).append(entry)
    run = {qid: [doc for *_, doc in sorted(entries)] for qid, entries in rows.items()}
    try:
        check_run(run)
    except EvaluationError as err:
        raise EvaluationError(f"{source}: {err}") from err
    return run
