"""The writer of an indexing run (:class:`kbsearch.index.indexer.Indexer` holds one):
each queued document is split into passages, their vectors are computed in batches of about
``EMBED_BATCH`` passages across documents (from the embedding cache when the same text was
embedded before), and each document is written with its passages, FTS5 rows and vectors in one
transaction, so a failing document leaves its stored version untouched.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..embedders import Embedder
from ..errors import KbsearchError, StorageError
from ..records import Document, ParsedDocument, Passage
from ..store import IndexSettings, Store
from ..text.analysis import Analyzer, words
from .chunking import make_passages
from .report import IndexReport, Settings

EMBED_BATCH = 64


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def approximate_tokens(text: str) -> int:
    """Token count used when the index has no embedder: words and punctuation marks."""
    return len(words(text)) + text.count(",") + text.count(".")


@dataclass
class _Pending:
    document: Document
    passages: list[Passage]
    update: bool
    defaulted: bool = False
    old_access: str | None = None


@dataclass
class DocumentWriter:
    """Queues documents, then embeds and writes them into ``store``, counting what it wrote
    and what failed in ``report`` (the run's); ``record``: the index settings, written with
    the first document and checked with every other; ``empty``: the sources that parsed to
    no text this run."""

    store: Store
    analyzer: Analyzer
    embedder: Embedder | None
    settings: Settings
    progress: Callable[[int, int], None] | None = None
    record: IndexSettings | None = None
    report: IndexReport = field(default_factory=IndexReport)
    empty: set[str] = field(default_factory=set, init=False)
    _pending: list[_Pending] = field(default_factory=list, init=False)

    def token_counter(self) -> Callable[[str], int]:
        if self.embedder is None:
            return approximate_tokens
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
    ) -> None:
        try:
            passages = make_passages(
                document,
                parsed,
                budget=self.settings.passage_budget,
                token_count=self.token_counter(),
                overlap=self.settings.overlap,
            )
        except KbsearchError as exc:
            self.report.failed.append((document.source, str(exc)))
            return
        if not passages or not parsed.blocks:
            reason = "has only a title" if parsed.title else "has no text"
            self.report.warnings.append((document.source, f"{reason}; nothing indexed"))
            self.empty.add(document.source)
            return
        self._pending.append(_Pending(document, passages, update, defaulted, old_access))

    def write_all(self) -> None:
        """Embed and write the queued documents in batches of about ``EMBED_BATCH`` passages,
        reporting ``(done, total)`` passages to the progress callback."""
        total = sum(len(item.passages) for item in self._pending)
        done = 0
        batch: list[_Pending] = []
        for position, item in enumerate(self._pending):
            batch.append(item)
            size = sum(len(b.passages) for b in batch)
            if size >= EMBED_BATCH or position == len(self._pending) - 1:
                self._write_batch(batch)
                done += size
                if self.progress:
                    self.progress(done, total)
                batch = []
        self._pending = []

    def _write_batch(self, pending: list[_Pending]) -> None:
        texts = [p.text for item in pending for p in item.passages]
        try:
            vectors = self.embed_passages(texts) if self.embedder else None
        except StorageError:  # the embedding cache cannot be written: stop the run
            raise
        except KbsearchError as exc:
            for item in pending:
                self.report.failed.append((item.document.source, str(exc)))
            return
        offset = 0
        for item in pending:
            n = len(item.passages)
            block = None if vectors is None else vectors[offset : offset + n]
            offset += n
            bodies = [self.analyzer.body(p.text, item.document.language) for p in item.passages]
            try:
                self.store.write_document(
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
        """Passage vectors for ``texts``, from the cache where possible; new vectors are
        cached (and committed) as soon as they are computed."""
        assert self.embedder is not None
        embedder = self.embedder
        hashes = [text_hash(t) for t in texts]
        cached = self.store.cached_vectors(embedder.name, "passage", hashes)
        missing = list(dict.fromkeys(h for h in hashes if h not in cached))
        if missing:
            by_hash = dict(zip(hashes, texts, strict=True))
            fresh = embedder.encode_passages([by_hash[h] for h in missing])
            self.store.cache_vectors(
                embedder.name, "passage", dict(zip(missing, fresh, strict=True))
            )
            self.report.embedded += len(missing)
            cached.update(
                {h: v.astype(np.float32).tobytes() for h, v in zip(missing, fresh, strict=True)}
            )
        out = np.frombuffer(b"".join(cached[h] for h in hashes), dtype=np.float32)
        return out.reshape(len(texts), embedder.dim)
