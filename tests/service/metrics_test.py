"""``/metrics`` of several server processes (``kbsearch serve --processes N``): every
process's request counters summed, whichever answers the scrape; the index gauges once."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import values
from prometheus_client.parser import text_string_to_metric_families

from kbsearch.service.metrics import MULTIPROCESS_DIR, Metrics


def _samples(exposition: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(exposition.decode())
        for s in family.samples
    }


def _in_process(monkeypatch: pytest.MonkeyPatch, pid: str) -> Metrics:
    """A :class:`Metrics` as process ``pid`` makes it in multiprocess mode (until the next
    call: a labelled series takes the value class of when it is first used)."""
    monkeypatch.setattr(values, "ValueClass", values.MultiProcessValue(lambda: pid))
    return Metrics()


SEARCH = ("kbsearch_requests_total", (("method", "GET"), ("route", "/search"), ("status", "200")))


def test_a_scrape_sums_every_processs_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MULTIPROCESS_DIR, str(tmp_path))
    one = _in_process(monkeypatch, "101")  # its series are made at its first request
    one.observe("/search", "GET", 200, 0.02)
    two = _in_process(monkeypatch, "102")
    for _ in range(2):
        two.observe("/search", "GET", 200, 0.2)
    for metrics in (one, two):
        samples = _samples(metrics.exposition(7, 3, 12))
        assert samples[SEARCH] == 3
        count = ("kbsearch_request_duration_seconds_count", (("route", "/search"),))
        assert samples[count] == 3
        assert samples[("kbsearch_index_generation", ())] == 7
        assert samples[("kbsearch_passages", ())] == 12
    # no gauge file: the index gauges are the scrape's, not kept per process
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == ["counter_101.db", "counter_102.db", "histogram_101.db", "histogram_102.db"]


def test_one_process_counts_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MULTIPROCESS_DIR, raising=False)
    one, two = Metrics(), Metrics()
    one.observe("/search", "GET", 200, 0.02)
    two.observe("/search", "GET", 200, 0.02)
    assert _samples(one.exposition(1, 1, 1))[SEARCH] == 1
