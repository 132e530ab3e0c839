"""Prometheus metrics (the official ``prometheus_client``), one registry per app.

- ``kbsearch_requests_total{route, method, status}``: requests answered, by route template.
- ``kbsearch_request_duration_seconds{route}``: latency histogram.
- ``kbsearch_index_generation``: the index's write counter.
- ``kbsearch_documents`` / ``kbsearch_passages``: what the caller's audience may see (a public
  scrape counts public documents and passages only).
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST as CONTENT_TYPE  # noqa: F401 (re-exported)
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


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
        """The request metrics plus the index gauges for the caller's audience."""
        index = CollectorRegistry()
        Gauge("kbsearch_index_generation", "Write counter of the index.", registry=index).set(
            generation
        )
        Gauge(
            "kbsearch_documents", "Document versions visible to this audience.", registry=index
        ).set(documents)
        Gauge("kbsearch_passages", "Passages visible to this audience.", registry=index).set(
            passages
        )
        return generate_latest(self.registry) + generate_latest(index)
