"""BM25 as Qdrant sparse vectors, from kbsearch's own analyzer.

The passage side carries BM25's term-frequency part, computed here (Robertson & Zaragoza,
"The Probabilistic Relevance Framework: BM25 and Beyond", 2009, eq. 3.15; the k1 = 1.2 and
b = 0.75 of FTS5's ``bm25()``, SQLite FTS5 documentation, section 5.1.1):

    w(t, D) = f(t, D) * (k1 + 1) / (f(t, D) + k1 * (1 - b + b * |D| / avgdl))

The query side is one value per query term (its number of occurrences, as FTS5 adds repeated
phrases again). Qdrant multiplies each query value by the IDF it computes itself when the
sparse vector is declared with ``Modifier.IDF`` (Qdrant documentation, "Sparse vectors",
IDF modifier), over the points that hold that vector:

    IDF_qdrant(t) = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))

so a passage's score is ``sum over query terms of IDF_qdrant(t) * w(t, D)``: FTS5's BM25
except for the IDF, which FTS5 computes as ``ln((N - n + 0.5) / (n + 0.5))`` clamped to 1e-6
(:func:`kbsearch.lexical.fts5_idf`). The two agree on rare terms and differ most on terms found
in about half of the passages or more (FTS5 nearly ignores them; Qdrant still counts them).

Tokens are those the embedded index stores: the analyser's body (stems for ``stem``), split into
words and accent-folded as FTS5's ``unicode61 remove_diacritics 2`` does. A term's index in the
sparse vector is the first four bytes of its BLAKE2b digest (stateless, so every writer of a
cluster agrees); two terms of a vocabulary of V share an index with expected V^2 / 2^33 pairs
(about one pair at 100,000 terms), which merges their statistics.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ...text.analysis import fold_diacritics, words

K1 = 1.2
B = 0.75


@lru_cache(maxsize=1 << 16)
def term_index(term: str) -> int:
    """The sparse index of ``term``: BLAKE2b digest's first 4 bytes, big-endian (0..2^32-1)."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest(), "big")


def tokens(body: str) -> list[str]:
    """The tokens FTS5 stores for an analysed ``body``: words, accents folded."""
    return [fold_diacritics(w) for w in words(body)]


@dataclass(frozen=True)
class SparseWeights:
    """One passage's term frequencies by sparse index (``(index, tf)`` pairs, indices
    ascending) and its length in tokens ``|D|``."""

    frequencies: tuple[tuple[int, int], ...]
    length: int

    @classmethod
    def from_body(cls, body: str) -> SparseWeights:
        """The weights of an analysed body (:func:`tokens`)."""
        found = tokens(body)
        counts = Counter(term_index(t) for t in found)
        return cls(tuple(sorted(counts.items())), len(found))

    def vector(self, avgdl: float, k1: float = K1, b: float = B) -> tuple[list[int], list[float]]:
        """``(indices, values)`` with ``values[i] = w(t, D)`` (module docstring) for the
        collection's average length ``avgdl`` (tokens; > 0).

        Raises:
            ValueError: ``avgdl`` not positive and finite.
        """
        if not (avgdl > 0 and math.isfinite(avgdl)):
            raise ValueError(f"average passage length must be positive, got {avgdl!r}")
        norm = k1 * (1 - b + b * self.length / avgdl)
        indices = [i for i, _ in self.frequencies]
        values = [tf * (k1 + 1) / (tf + norm) for _, tf in self.frequencies]
        return indices, values


def query_vector(terms: Sequence[str]) -> tuple[list[int], list[float]]:
    """``(indices, values)`` of prepared query ``terms`` (already analysed and folded): one
    value per distinct index, the number of times the query holds it."""
    counts = Counter(term_index(t) for t in terms)
    indices = sorted(counts)
    return indices, [float(counts[i]) for i in indices]


@dataclass(frozen=True)
class LengthStatistics:
    """The average passage lengths (tokens) sparse values are computed with: over every
    passage (``bm25``) and over public passages only (``bm25_public``). Each point records the
    ones it was written with, so drift can be found and repaired (:mod:`.mirror`)."""

    avgdl_all: float
    avgdl_public: float

    def drifted(self, other: LengthStatistics, tolerance: float, public: bool = True) -> bool:
        """Whether an average a point's sparse values use differs from ``other``'s by more
        than ``tolerance`` (relative): ``avgdl_all`` always, ``avgdl_public`` for a
        ``public`` point only (a staff point has no ``bm25_public`` vector, so a change of
        the public average leaves its values right)."""
        pairs = [(self.avgdl_all, other.avgdl_all)]
        if public:
            pairs.append((self.avgdl_public, other.avgdl_public))
        return any(abs(a - b) > tolerance * max(abs(b), 1e-12) for a, b in pairs)


def average_length(weights: Iterable[SparseWeights]) -> float:
    """Mean ``|D|`` over ``weights`` (0.0 when empty), as FTS5's avgdl over one table."""
    total = count = 0
    for w in weights:
        total += w.length
        count += 1
    return total / count if count else 0.0


def qdrant_idf(passages: int, frequency: int) -> float:
    """Qdrant's IDF modifier: ``ln(1 + (N - n + 0.5) / (n + 0.5))`` (module docstring)."""
    return math.log(1 + (passages - frequency + 0.5) / (frequency + 0.5))
