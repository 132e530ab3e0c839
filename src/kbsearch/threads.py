"""``$KBSEARCH_THREADS``: the threads of the embedder's pool, of a large dense scan and of a
reranker's torch. One reading for all of them: a whole number of ASCII digits from 1 to
:data:`MAX_THREADS` (as ``kbsearch serve --model-threads``), spaces around it allowed."""

from __future__ import annotations

import os

DEFAULT_THREADS = 2
MAX_THREADS = 64  # as serve's --model-threads


def parse_threads(value: str | int) -> int | None:
    """``value`` as a thread count, or ``None`` when it is not one (``"0"``, ``"abc"``,
    ``"2.5"``, ``"+2"``, ``"٣"``, ``"999"``)."""
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()):
        return None
    n = int(text)
    return n if 1 <= n <= MAX_THREADS else None


def env_threads() -> str | None:
    """``$KBSEARCH_THREADS`` as set (``None`` when unset or empty)."""
    return os.environ.get("KBSEARCH_THREADS") or None


def scan_threads() -> int:
    """``$KBSEARCH_THREADS`` when it is a thread count (:func:`parse_threads`), else
    :data:`DEFAULT_THREADS`."""
    value = env_threads()
    return (parse_threads(value) if value else None) or DEFAULT_THREADS
