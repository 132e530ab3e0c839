"""Fixtures for the Qdrant backend tests: both ways to reach Qdrant, and a small synthetic
corpus with every filter field varied."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from support import FakeEmbedder

from kbsearch.backends.qdrant.client import ClientCollection
from kbsearch.backends.qdrant.collection import Collection
from kbsearch.backends.qdrant.edge import EdgeCollection
from kbsearch.backends.qdrant.points import PassagePoint, passage_points
from kbsearch.backends.qdrant.sparse import LengthStatistics, SparseWeights, average_length
from kbsearch.records import Document, Passage
from kbsearch.store import Store
from kbsearch.text.analysis import Analyzer

WORDS = [
    "refund",
    "parcel",
    "delivery",
    "return",
    "kettle",
    "warranty",
    "invoice",
    "card",
    "gift",
    "price",
    "drop",
    "week",
    "month",
    "day",
    "staff",
    "agent",
    "credit",
    "goodwill",
    "lost",
    "late",
    "tracked",
    "colis",
    "remboursement",
    "livraison",
    "garantie",
    "retour",
    "semaine",
    "jour",
    "carte",
    "cadeau",
    "prix",
]


@dataclass(frozen=True)
class Corpus:
    documents: list[Document]
    passages: dict[str, list[Passage]]  # doc key -> passages
    bodies: dict[str, list[str]]
    vectors: dict[str, np.ndarray]

    def key(self, d: Document) -> str:
        return f"{d.doc_id}@v{d.version}"

    def points(self) -> list[PassagePoint]:
        out: list[PassagePoint] = []
        for d in self.documents:
            k = self.key(d)
            sparse = [SparseWeights.from_body(b) for b in self.bodies[k]]
            out += passage_points(d, self.passages[k], sparse, self.vectors[k])
        return out

    def lengths(self) -> LengthStatistics:
        points = self.points()
        return LengthStatistics(
            average_length(p.sparse for p in points),
            average_length(p.sparse for p in points if p.public),
        )


def make_corpus(seed: int = 7, documents: int = 12, dim: int = 32) -> Corpus:
    """Documents with random access, language, effective bounds (some open), 1-4 passages."""
    rng = random.Random(seed)
    embedder = FakeEmbedder(dim=dim)
    analyzer = Analyzer("stem")
    docs, passages, bodies, vectors = [], {}, {}, {}
    for i in range(documents):
        start = rng.choice([None, date(2025, 1, 1), date(2025, 6, 1), date(2026, 1, 1)])
        end = rng.choice([None, None, date(2025, 12, 31), date(2026, 3, 31)])
        if start and end and end < start:
            start, end = end, start
        d = Document(
            doc_id=f"doc{i % 9}",
            version=str(1 + i // 9),
            title=f"Doc {i}",
            language=rng.choice(["en", "fr"]),
            access=rng.choice(["public", "public", "staff"]),
            effective_from=start,
            effective_to=end,
        )
        k = f"{d.doc_id}@v{d.version}"
        texts = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14)))
            for _ in range(rng.randint(1, 4))
        ]
        passages[k] = [
            Passage(f"{k}#s{j}", d.doc_id, d.version, f"s{j}", "text", t, j)
            for j, t in enumerate(texts)
        ]
        bodies[k] = [analyzer.body(t, d.language) for t in texts]
        vectors[k] = embedder.encode_passages(texts)
        docs.append(d)
    return Corpus(docs, passages, bodies, vectors)


def open_collection(kind: str, tmp_path: Path) -> Collection:
    if kind == "local":
        return ClientCollection.open(":memory:")
    return EdgeCollection(tmp_path / "edge")


@pytest.fixture(params=["local", "edge"])
def collection(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Collection]:
    c = open_collection(request.param, tmp_path)
    yield c
    c.close()


@pytest.fixture
def corpus() -> Corpus:
    return make_corpus()


@pytest.fixture
def store(tmp_path: Path, corpus: Corpus) -> Iterator[Store]:
    """An embedded index of :func:`corpus` (32-d fake vectors), in ``tmp_path``."""
    s = Store(tmp_path / "kb.db", create=True)
    with s.database.transaction():
        s.database.set_settings(
            {"analyzer": "stem", "dim": 32, "embedder": "fake:bow", "embedder_spec": "fake:bow"}
        )
    for d in corpus.documents:
        k = corpus.key(d)
        s.documents.write(d, corpus.passages[k], corpus.bodies[k], corpus.vectors[k])
    yield s
    s.close()
