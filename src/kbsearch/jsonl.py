"""JSON Lines (https://jsonlines.org): one JSON value a line, blank lines skipped. The one reader
of the BEIR corpus (:mod:`kbsearch.ingest.beir`), of the question files
(:mod:`kbsearch.evaluation.formats`) and of the gold answers (:mod:`kbsearch.evaluation.answers`);
each names its own error."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# (line number, the decoding error) -> the exception to raise: a json.JSONDecodeError for text
# that is not JSON, another ValueError or a RecursionError for a value Python cannot hold
BadLine = Callable[[int, ValueError | RecursionError], Exception]


def json_lines(path: Path, bad_line: BadLine, encoding: str = "utf-8") -> Iterator[tuple[int, Any]]:
    """``(line number from 1, decoded value)`` for each non-blank line of ``path``.

    Raises:
        what ``bad_line`` returns, for a line that does not decode; OSError and
        UnicodeDecodeError as :meth:`pathlib.Path.open` and reading raise them.
    """
    with path.open(encoding=encoding) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except (ValueError, RecursionError) as exc:
                raise bad_line(number, exc) from exc
            yield number, value
