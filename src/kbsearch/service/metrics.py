"""Prometheus metrics (the official ``prometheus_client``), one registry per app.

- ``kbsearch_requests_total{route, method, status}``: requests answered, by route template.
- ``kbsearch_request_duration_seconds{route}``: latency histogram.
- ``kbsearch_index_generation``: the index's write counter.
- ``kbsearch_documents`` / ``kbsearch_passages``: what the caller's audience may see (a public
  scrape counts public documents and passages only).

Several server processes (``kbsearch serve --processes N``): ``prometheus_client``'s
multiprocess mode, chosen by ``$PROMETHEUS_MULTIPROC_DIR`` when it is imported, keeps each
process's counters and histograms in a file of that folder; a scrape, whichever process
answers it, sums every process's (those of a process that died and was replaced included,
so the counters never go back). The index gauges are read from the file at each scrape,
the same from every process.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from prometheus_client import CONTENT_TYPE_LATEST as CONTENT_TYPE  # noqa: F401 (re-exported)
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, values
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"


def shared_folder() -> str | None:
    """The folder every process's metrics are kept in, when ``prometheus_client`` runs in
    its multiprocess mode (``$PROMETHEUS_MULTIPROC_DIR`` was set when it was imported)."""
    if values.ValueClass is values.MutexValue:
        return None
    return os.environ.get(MULTIPROCESS_DIR)


class _IndexGauges(Collector):
    """The index gauges of one scrape, as metric families (not :class:`Gauge` objects: in
    multiprocess mode those would be kept in the shared files, one series per process)."""

    def __init__(self, generation: int, documents: int, passages: int) -> None:
        self.values = (
            ("kbsearch_index_generation", "Write counter of the index.", generation),
            ("kbsearch_documents", "Document versions visible to this audience.", documents),
            ("kbsearch_passages", "Passages visible to this audience.", passages),
        )

    def collect(self) -> Iterator[Metric]:
        for name, documentation, value in self.values:
            yield GaugeMetricFamily(name, documentation, value=value)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "kbsearch_requests",
            "HTTP requests answered, by route template, method and status.",
            ("route", "method", "status"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "kbsearch_request_duration_seconds",
            "Time to answer a request, by route template.",
            ("route",),
            buckets=BUCKETS,
            registry=self.registry,
        )

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        self.requests.labels(route, method, str(status)).inc()
        self.latency.labels(route).observe(seconds)

    def exposition(self, generation: int, documents: int, passages: int) -> bytes:
        """The request metrics (every process's, summed, in multiprocess mode) plus the index
        gauges for the caller's audience."""
        requests = self.registry
        folder = shared_folder()
        if folder is not None:
            requests = CollectorRegistry()
            MultiProcessCollector(requests, folder)
        index = CollectorRegistry()
        index.register(_IndexGauges(generation, documents, passages))
        return generate_latest(requests) + generate_latest(index)
