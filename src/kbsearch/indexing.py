"""Indexing: files -> documents -> passages -> store, incremental and atomic per document.

Each document version gets a content hash (its parsed blocks, its metadata and the index
settings). Re-indexing skips documents whose hash is unchanged, replaces changed ones in one
transaction each, and with ``prune`` removes the stored documents this run did not see whose
source file is gone or lies under the paths it indexed (so indexing one file with ``prune``
does not drop documents indexed from elsewhere). A failing document is reported and leaves its
stored version untouched. Passage vectors are computed in batches across documents, served from
the embedding cache when the same text was embedded before, and written in the same transaction
as their passages.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import date
from pathlib import Path

import numpy as np

from .analysis import Analyzer, words
from .chunking import make_passages
from .embedders import Embedder
from .errors import IngestError, InventoryError, KbsearchError
from .ingest import SUPPORTED_SUFFIXES, parse_file
from .ingest.inventory import InventoryRow, read_inventory
from .language import detect_language
from .records import Document, ParsedDocument, Passage
from .store import Store

EMBED_BATCH = 64
ACCESS_LABELS = ("public", "staff")


@dataclass
class IndexReport:
    """Counts of one indexing run, plus the failures with their reasons."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    default_access: int = 0
    passages: int = 0
    embedded: int = 0

    @property
    def ok(self) -> bool:
        return not self.failed

    def as_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["failed"] = [{"source": s, "reason": r} for s, r in self.failed]
        return out


@dataclass(frozen=True)
class Settings:
    """What an index is built with; recorded in its meta table."""

    analyzer: str = "stem"
    section_level: int = 2
    passage_budget: int = 512
    overlap: int = 1


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files named, plus the supported files under named folders (sorted, hidden skipped).

    Raises:
        IngestError: a path does not exist.
    """
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(
                p
                for p in path.rglob("*")
                if p.is_file()
                and p.suffix.lower() in SUPPORTED_SUFFIXES
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        elif path.is_file():
            files.append(path)
        else:
            raise IngestError(f"{path}: no such file or folder")
    return list(dict.fromkeys(p.resolve() for p in files))


def under_any(path: Path, roots: Sequence[Path]) -> bool:
    """True when ``path`` is one of ``roots`` or lies inside one of them."""
    return any(path == root or root in path.parents for root in roots)


def load_inventory(path: str | Path | None) -> dict[Path, InventoryRow]:
    """Inventory rows keyed by the resolved path of their file (relative to the CSV)."""
    if path is None:
        return {}
    csv_path = Path(path)
    rows = read_inventory(csv_path)
    return {(csv_path.parent / name).resolve(): row for name, row in rows.items()}


def _date(value: object) -> date | None:
    if value in (None, ""):
        return None
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError as exc:
        raise IngestError(f"malformed date {value!r} (expected YYYY-MM-DD)") from exc


def resolve_document(
    parsed: ParsedDocument,
    source: Path,
    row: InventoryRow | None,
    *,
    default_access: str,
    lang: str | None,
) -> tuple[Document, bool]:
    """The document metadata: inventory first, then front matter, then defaults.

    Returns the document (without content hash) and whether it got the default access label.
    """
    meta = dict(parsed.metadata)
    inv = {k: v for k, v in asdict(row).items() if v not in (None, "")} if row else {}

    def pick(name: str, fallback: object = "") -> object:
        return inv.get(name) or meta.get(name) or fallback

    doc_id = str(parsed.doc_id or pick("doc_id") or source.stem)
    title = str(pick("title") or parsed.title or doc_id)
    access = str(pick("access", ""))
    defaulted = not access
    access = access or default_access
    if access not in ACCESS_LABELS:
        raise IngestError(
            f"unknown access label {access!r} (expected {' or '.join(ACCESS_LABELS)})"
        )
    text = " ".join(b.text for b in parsed.blocks[:20] if b.text)
    language = str(pick("language") or lang or detect_language(f"{title}\n{text}"))
    document = Document(
        doc_id=doc_id,
        version=str(pick("version", "1")),
        title=title,
        language=language,
        access=access,
        effective_from=_date(pick("effective_from", None)),
        effective_to=_date(pick("effective_to", None)),
        owner=str(pick("owner")),
        doc_type=str(pick("doc_type")),
        format=str(pick("format") or source.suffix.lstrip(".").lower()),
        source=str(source),
    )
    start, end = document.effective_from, document.effective_to
    if start and end and end < start:
        raise IngestError(f"{doc_id}: effective_to is before effective_from")
    return document, defaulted


def content_hash(document: Document, parsed: ParsedDocument, settings: dict[str, object]) -> str:
    """sha256 over the metadata, the parsed blocks and the index settings."""
    payload = {
        "document": {k: str(v) for k, v in asdict(document).items() if k != "content_hash"},
        "blocks": [asdict(b) for b in parsed.blocks],
        "settings": settings,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


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


class Indexer:
    """Runs one indexing pass over a store (see module docstring)."""

    def __init__(
        self,
        store: Store,
        analyzer: Analyzer,
        embedder: Embedder | None,
        settings: Settings,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.store = store
        self.analyzer = analyzer
        self.embedder = embedder
        self.settings = settings
        self.progress = progress
        self.report = IndexReport()
        self._pending: list[_Pending] = []

    def token_counter(self) -> Callable[[str], int]:
        if self.embedder is None:
            return approximate_tokens
        embedder = self.embedder
        return lambda text: embedder.token_count(text, "passage")

    def run(
        self,
        paths: Sequence[str | Path],
        *,
        inventory: str | Path | None,
        default_access: str,
        prune: bool,
        lang: str | None,
    ) -> IndexReport:
        rows = load_inventory(inventory)
        roots = [Path(p).resolve() for p in paths]
        for missing in sorted(p for p in rows if not p.exists() and under_any(p, roots)):
            self.report.failed.append((str(missing), "listed in the inventory but not found"))
        stored = self.store.document_hashes()
        seen: dict[tuple[str, str], str] = {}
        settings_key = asdict(self.settings) | {
            "embedder": self.embedder.name if self.embedder else None
        }
        for source, parsed_or_error in self._parse(expand_paths(paths)):
            if isinstance(parsed_or_error, KbsearchError):
                self.report.failed.append((str(source), str(parsed_or_error)))
                continue
            for parsed in parsed_or_error:
                try:
                    document, defaulted = resolve_document(
                        parsed,
                        source,
                        rows.get(source),
                        default_access=default_access,
                        lang=lang,
                    )
                except KbsearchError as exc:
                    self.report.failed.append((str(source), str(exc)))
                    continue
                key = (document.doc_id, document.version)
                if key in seen:
                    self.report.failed.append(
                        (
                            str(source),
                            f"duplicate document {document.doc_id} version {document.version}"
                            f" (also in {seen[key]})",
                        )
                    )
                    continue
                seen[key] = str(source)
                digest = content_hash(document, parsed, settings_key)
                document = replace(document, content_hash=digest)
                if stored.get(key) == digest:
                    self.report.unchanged += 1
                    self.report.default_access += defaulted
                    continue
                self._queue(document, parsed, update=key in stored, defaulted=defaulted)
        self._write_all()
        if prune:
            sources = self.store.document_sources()
            for key in sorted(set(stored) - set(seen)):
                source = Path(sources[key])
                if not source.exists() or under_any(source, roots):
                    self.store.delete_document(*key)
                    self.report.removed += 1
        return self.report

    def _parse(
        self, files: list[Path]
    ) -> Iterator[tuple[Path, list[ParsedDocument] | KbsearchError]]:
        for source in files:
            try:
                yield source, parse_file(source, section_level=self.settings.section_level)
            except (IngestError, InventoryError) as exc:
                yield source, exc
            except (OSError, UnicodeDecodeError) as exc:
                yield source, IngestError(f"cannot read {source.name}: {exc}")

    def _queue(
        self, document: Document, parsed: ParsedDocument, *, update: bool, defaulted: bool
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
        if not passages:
            self.report.failed.append((document.source, "no text to index"))
            return
        self._pending.append(_Pending(document, passages, update, defaulted))

    def _write_all(self) -> None:
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
                self.store.write_document(item.document, item.passages, bodies, block)
            except Exception as exc:  # the transaction rolled back: old version intact
                self.report.failed.append((item.document.source, f"write failed: {exc}"))
                continue
            self.report.passages += n
            self.report.default_access += item.defaulted
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
