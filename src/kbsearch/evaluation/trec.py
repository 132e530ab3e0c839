"""TREC run and qrels files, so trec_eval, ir-measures or ranx can check every number.

Run lines: ``qid Q0 docid rank score tag``. kbsearch writes rank-derived scores that strictly
decrease with the rank (``n - rank + 1`` for a list of ``n``), because trec_eval sorts by score
and breaks ties by docid: with raw tied scores it would judge another order than the returned one.
Qrels lines: ``qid 0 docid grade``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from kbsearch.errors import EvaluationError
from kbsearch.evaluation.metrics import check_run


def _check_token(value: str, what: str) -> None:
    if not value or any(c.isspace() for c in value):
        raise EvaluationError(f"{what} {value!r} cannot be written to a TREC file (whitespace)")


def write_trec_run(path: str | Path, run: Mapping[str, Sequence[str]], tag: str) -> Path:
    """Write ``{qid: [docid, ...]}`` (returned order) as a TREC run; returns the path.

    Raises:
        EvaluationError: a duplicate id in a list, whitespace in an id or in the tag.
    """
    check_run(run)
    _check_token(tag, "tag")
    lines = []
    for qid, docs in run.items():
        _check_token(qid, "query id")
        for rank, doc in enumerate(docs, start=1):
            _check_token(doc, "document id")
            lines.append(f"{qid} Q0 {doc} {rank} {len(docs) - rank + 1} {tag}\n")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(lines), encoding="utf-8")
    return target


def write_trec_qrels(path: str | Path, qrels: Mapping[str, Mapping[str, int]]) -> Path:
    """Write ``{qid: {docid: grade}}`` as TREC qrels; returns the path.

    Raises:
        EvaluationError: whitespace in an id.
    """
    lines = []
    for qid, judged in qrels.items():
        _check_token(qid, "query id")
        for doc, grade in judged.items():
            _check_token(doc, "document id")
            lines.append(f"{qid} 0 {doc} {grade}\n")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(lines), encoding="utf-8")
    return target


def read_trec_run(path: str | Path) -> dict[str, list[str]]:
    """Read a TREC run into ``{qid: [docid, ...]}`` ordered by decreasing score, equal scores
    by increasing rank column, then file order (so a kbsearch run reads back in returned order).

    Raises:
        EvaluationError: missing file, a line without six fields, a non-numeric rank or score,
            a docid listed twice for one query.
    """
    source = Path(path)
    if not source.is_file():
        raise EvaluationError(f"run file not found: {source}")
    rows: dict[str, list[tuple[float, int, int, str]]] = {}
    with source.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 6:
                raise EvaluationError(f"{source}:{number}: expected 'qid Q0 docid rank score tag'")
            try:
                rank, score = int(fields[3]), float(fields[4])
            except ValueError as err:
                raise EvaluationError(f"{source}:{number}: bad rank or score") from err
            rows.setdefault(fields[0], []).append((-score, rank, number, fields[2]))
    run = {qid: [doc for *_, doc in sorted(entries)] for qid, entries in rows.items()}
    try:
        check_run(run)
    except EvaluationError as err:
        raise EvaluationError(f"{source}: {err}") from err
    return run
