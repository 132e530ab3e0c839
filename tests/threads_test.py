"""$KBSEARCH_THREADS: one reading for the embedder's pool, the dense scan and torch."""

from __future__ import annotations

import pytest

from kbsearch.threads import parse_threads, scan_threads


@pytest.mark.parametrize(("value", "want"), [("3", 3), (" 2 ", 2), ("64", 64), (4, 4)])
def test_a_thread_count_is_a_whole_number_from_1_to_64(value: str | int, want: int) -> None:
    assert parse_threads(value) == want


@pytest.mark.parametrize("value", ["0", "65", "999", "-1", "+2", "2.5", "0x2", "٣", "", "abc"])
def test_anything_else_is_no_thread_count(value: str) -> None:
    assert parse_threads(value) is None


def test_the_dense_scan_reads_it_as_the_embedder_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan took "٣" as 3 and " 2" as its default, the embedder both as numbers."""
    for value, want in [("3", 3), (" 3", 3), ("٣", 2), ("999", 2)]:
        monkeypatch.setenv("KBSEARCH_THREADS", value)
        assert scan_threads() == want
    monkeypatch.delenv("KBSEARCH_THREADS")
    assert scan_threads() == 2
