"""Indexing: files -> documents -> passages -> store, incremental and atomic per document.

Each document version gets a content hash (its parsed blocks, its metadata and the index
settings). Re-indexing skips documents whose hash is unchanged, replaces changed ones in one
transaction each, and with ``prune`` removes the stored documents this run did not see whose
source file is gone or lies under the paths it indexed (so indexing one file with ``prune``
does not drop documents indexed from elsewhere). A failing document is reported and leaves its
stored version untouched; so does one over an ingest limit (:mod:`kbsearch.ingest.limits`:
its size, pages, passages, or its time budget, started when its file is parsed). Passage
vectors are computed in batches across documents, served from the embedding cache when the
same text was embedded before, and written in the same transaction as their passages
(:mod:`kbsearch.index.writer`, the indexer's writer).
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import asdict, replace
from pathlib import Path

from ..errors import IngestError, InvalidArgumentError, InventoryError, KbsearchError, shown_value
from ..ingest import parse_file
from ..ingest.conflicts import ResolvedDocument, refuse_claims, refuse_overlaps
from ..ingest.discovery import discover, nothing_indexable
from ..ingest.discovery import expand_paths as expand_paths
from ..ingest.inventory import InventoryRow, file_key, read_inventory
from ..ingest.limits import Budget, large_file_warning
from ..ingest.metadata import ACCESS_LABELS, known_language, path_doc_id, resolve_document
from ..present.sources import uploads_folder
from ..records import Document, ParsedDocument
from ..store import StoredDocument
from ..store.staging import STAGING_SUFFIX
from .report import DEFAULT_ACCESS as DEFAULT_ACCESS
from .report import IndexReport as IndexReport
from .report import Settings as Settings
from .writer import DocumentWriter

DEFAULT_ACCESS_META = "default_access"  # meta key: the index's remembered default label
# meta key: the access labels the inventories gave, by file (JSON), applied to a file that a
# later run finds with no inventory row, so leaving out --inventory cannot widen access
INVENTORY_ACCESS_META = "inventory_access"


def under_any(path: Path, roots: Sequence[Path]) -> bool:
    """True when ``path`` is one of ``roots`` or lies inside one of them."""
    return any(path == root or root in path.parents for root in roots)


def own_paths(db: Path) -> list[Path]:
    """The files and folders an index at ``db`` owns beside it: the file, its SQLite journal
    files, the staging copy of a re-embedding (:mod:`kbsearch.store.staging`) and the upload
    store (:func:`kbsearch.present.sources.uploads_folder`); for ``db`` a staging copy, those of the
    index it copies. A folder walk never indexes them and
    ``prune`` never removes an upload for lying under a folder indexed."""
    base = db.absolute()
    if base.name.endswith(STAGING_SUFFIX):  # a re-embedding writes the copy: the index's own
        base = base.with_name(base.name.removesuffix(STAGING_SUFFIX))
    names = [base.name + end for end in ("", STAGING_SUFFIX)]
    journals = [name + end for name in names for end in ("", "-wal", "-shm", "-journal")]
    return [base.with_name(n) for n in journals] + [Path(uploads_folder(base))]


def _gone(path: Path) -> bool:
    """True when ``path`` does not exist; a path that cannot be looked at (permission denied
    on a folder above it) is not gone."""
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False
    return False


def load_inventory(path: str | Path | None) -> dict[Path, InventoryRow]:
    """Inventory rows keyed by the resolved path of their file (relative to the CSV), in NFC
    (:func:`~kbsearch.ingest.inventory.file_key`: look a found file up by its ``file_key``)."""
    if path is None:
        return {}
    csv_path = Path(path)
    rows = read_inventory(csv_path)
    return {file_key((csv_path.parent / name).resolve()): row for name, row in rows.items()}


def content_hash(document: Document, parsed: ParsedDocument, settings: dict[str, object]) -> str:
    """sha256 over the metadata, the parsed blocks and the index settings."""
    payload = {
        "document": {k: str(v) for k, v in asdict(document).items() if k != "content_hash"},
        "blocks": [asdict(b) for b in parsed.blocks],
        "settings": settings,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


class Indexer:
    """Runs one indexing pass over a store (see module docstring); its :attr:`writer` embeds
    and writes the documents it queues."""

    def __init__(self, writer: DocumentWriter) -> None:
        self.writer = writer
        self.store = writer.store
        self.embedder = writer.embedder
        self.settings = writer.settings
        self.report = writer.report
        self.limits = writer.limits  # the writer's: a file's budget runs from parse to write
        self._budgets: dict[str, Budget] = {}  # a parsed file's budget, to its first document
        self._uploads: list[Path] = []  # the upload store of the index written

    def _fail(self, source: Path | str, reason: str) -> None:
        self.report.failed.append((str(source), reason))

    def default_access(self, requested: str | None) -> str:
        """The label for unlabelled documents: ``requested`` (then remembered by the index),
        else the one the index remembers, else ``staff``.

        Raises:
            InvalidArgumentError: an unknown label.
        """
        remembered = self.store.database.get_meta(DEFAULT_ACCESS_META)
        label = requested or remembered or DEFAULT_ACCESS
        if label not in ACCESS_LABELS:
            raise InvalidArgumentError(
                f"unknown access label {shown_value(label)} (expected {' or '.join(ACCESS_LABELS)})"
            )
        if requested and requested != remembered:
            with self.store.database.transaction():
                self.store.database.set_meta(DEFAULT_ACCESS_META, requested)
        return label

    def inventory_access(
        self, rows: dict[Path, InventoryRow], *, remember: bool = True
    ) -> dict[str, str]:
        """The access labels by file that the index remembers from its inventories, with
        those of ``rows`` (this run's inventory) merged in and recorded; with ``remember``
        false, only those of ``rows``, and nothing is read or written."""
        given = {str(key): row.access for key, row in rows.items() if row.access}
        if not remember:
            return given
        raw = self.store.database.get_meta(INVENTORY_ACCESS_META)
        remembered: dict[str, str] = json.loads(raw) if raw else {}
        merged = remembered | given
        if merged != remembered:
            with self.store.database.transaction():
                self.store.database.set_meta(INVENTORY_ACCESS_META, json.dumps(merged))
        return merged

    def run(
        self,
        paths: Sequence[str | Path],
        *,
        inventory: str | Path | None,
        default_access: str | None,
        prune: bool,
        lang: str | None,
        takeover: bool = False,
    ) -> IndexReport:
        """Index ``paths``; see the module docstring. With ``takeover``, a doc id and version
        stored from another file is replaced rather than refused (an upload replacing it).

        Raises:
            IngestError: a path does not exist, or nothing in ``paths`` can be indexed.
            InvalidArgumentError: ``lang`` is not a known language code, an unknown access
                label.
            InventoryError: the inventory cannot be read or is invalid.
        """
        lang = known_language(lang, "--lang") if lang else None
        rows = load_inventory(inventory)
        own = own_paths(Path(self.store.path))
        found = discover(paths, skip=own)
        if not found.files:
            raise IngestError(nothing_indexable(paths, found))
        self._uploads = [own[-1].resolve()]
        label = self.default_access(default_access)
        self.report.default_access_label = label
        # an upload names its file's label in its own inventory, and no later run reads the
        # uploads folder without one: remembering it would grow the map (and each PUT) with N
        remembered = self.inventory_access(rows, remember=not takeover)
        inventory_file = Path(inventory).resolve() if inventory else None
        self.report.unsupported = [
            str(p) for p in found.unsupported if p.resolve() != inventory_file
        ]
        roots = [Path(p).resolve() for p in paths]
        for folder, reason in found.unlisted:
            self._fail(folder, reason)
        unlisted = [folder.resolve() for folder, _ in found.unlisted]
        found_keys, root_keys = {file_key(f) for f in found.files}, [file_key(r) for r in roots]
        listed = (p for p in rows if p not in found_keys and _gone(p) and under_any(p, root_keys))
        for missing in sorted(listed):
            self._fail(missing, "listed in the inventory but not found")
        candidates, parsed_ok = self._resolve(found.files, rows, remembered, label, lang)
        # the stored versions this run may replace, refuse or find stale: those of its doc ids
        # and of the files it read (every document only for a prune, which looks at them all)
        stored = (
            {(d.document.doc_id, d.document.version): d for d in self.store.documents.all()}
            if prune
            else self.store.documents.about({c.document.doc_id for c in candidates}, parsed_ok)
        )
        yielded = {(c.document.doc_id, c.document.version) for c in candidates}
        # A stored version whose file was read this run without yielding it is stale.
        stale = {
            key
            for key, d in stored.items()
            if key not in yielded and d.document.source in parsed_ok
        }
        if not takeover:
            candidates, refused = refuse_claims(candidates, stored, parsed_ok)
            self.report.failed += refused
        candidates, refused = refuse_overlaps(candidates, stored, stale if prune else set())
        self.report.failed += refused
        settings_key = asdict(self.settings) | {
            "embedder": self.embedder.name if self.embedder else None
        }
        # each candidate let go once split, so its parsed blocks are not held while writing
        queue = deque(candidates)
        del candidates
        while queue:
            self._queue(queue.popleft(), stored, settings_key)
        self.writer.write_all()
        if prune:
            self._prune(stored, yielded, roots, unlisted)
        return self.report

    def _queue(
        self,
        cand: ResolvedDocument,
        stored: dict[tuple[str, str], StoredDocument],
        settings_key: dict[str, object],
    ) -> None:
        """Queue ``cand`` for the writer (split into passages), unless its stored version has
        the same content hash (counted unchanged)."""
        key = (cand.document.doc_id, cand.document.version)
        digest = content_hash(cand.document, cand.parsed, settings_key)
        document = replace(cand.document, content_hash=digest)
        old = stored.get(key)
        if old is not None and old.document.content_hash == digest:
            self.report.unchanged += 1
            self.report.default_access += cand.defaulted
            return
        self.writer.queue(
            document,
            cand.parsed,
            update=old is not None,
            defaulted=cand.defaulted,
            old_access=old.document.access if old else None,
            budget=self._budgets.pop(str(cand.source), None),
        )

    def _resolve(
        self,
        files: dict[Path, str],
        rows: dict[Path, InventoryRow],
        remembered: dict[str, str],
        label: str,
        lang: str | None,
    ) -> tuple[list[ResolvedDocument], set[str]]:
        """Parse every file and resolve its documents' metadata; a file with no inventory row
        this run keeps the access label an earlier inventory gave it (``remembered``, by
        file). Returns the candidates (no repeated doc_id+version) and the sources that
        parsed."""
        candidates: list[ResolvedDocument] = []
        parsed_ok: set[str] = set()
        seen: dict[tuple[str, str], str] = {}
        for source, parsed_or_error in self._parse(list(files)):
            if isinstance(parsed_or_error, KbsearchError):
                self._fail(source, str(parsed_or_error))
                continue
            parsed_ok.add(str(source))
            if not parsed_or_error:  # an empty corpus.jsonl or help-card list
                self.report.warnings.append((str(source), "holds no documents; nothing indexed"))
            for parsed in parsed_or_error:
                self.report.warnings += [(str(source), w) for w in parsed.warnings]
                try:
                    document, defaulted = resolve_document(
                        parsed,
                        source,
                        rows.get(file_key(source)),
                        path_id=files.get(source) or path_doc_id(Path(source.name)),
                        default_access=label,
                        lang=lang,
                        undetected="",
                    )
                except KbsearchError as exc:
                    self._fail(source, str(exc))
                    continue
                kept = remembered.get(str(file_key(source)))
                if kept is not None and file_key(source) not in rows:
                    document, defaulted = replace(document, access=kept), False
                key = (document.doc_id, document.version)
                if key in seen:
                    hint = (
                        "; give one of them another `doc_id:` (front matter or the inventory)"
                        if seen[key] != str(source)
                        else ""
                    )
                    self._fail(
                        source,
                        f"duplicate document {document.doc_id} version {document.version}"
                        f" (also in {seen[key]}){hint}",
                    )
                    continue
                seen[key] = str(source)
                candidates.append(ResolvedDocument(source, document, parsed, defaulted))
        return _undetected_languages(candidates), parsed_ok

    def _prune(
        self,
        stored: dict[tuple[str, str], StoredDocument],
        yielded: set[tuple[str, str]],
        roots: list[Path],
        unlisted: list[Path],
    ) -> None:
        """Remove stored versions this run did not yield whose file is gone or lies under the
        paths indexed; a file that exists but failed this run (or parsed to no text: a file
        truncated by accident) keeps its documents, and so does every file under a folder that
        could not be listed (its state is unknown)."""
        failed = {source for source, _ in self.report.failed} | self.writer.empty
        uploads = self._uploads  # an upload is the server's to remove, while its file is there
        for key in sorted(set(stored) - yielded):
            source = Path(stored[key].document.source)
            if str(source) in failed and not _gone(source):
                continue
            if under_any(source, unlisted):
                continue
            if _gone(source) or (under_any(source, roots) and not under_any(source, uploads)):
                self.store.documents.delete(*key)
                self.report.removed += 1

    def _parse(
        self, files: list[Path]
    ) -> Iterator[tuple[Path, list[ParsedDocument] | KbsearchError]]:
        for source in files:
            budget = self.limits.budget(source)
            try:
                with budget.timing():
                    parsed = parse_file(
                        source,
                        section_level=self.settings.section_level,
                        limits=self.limits,
                        budget=budget,
                    )
                budget.check("parse")
                self._budgets[str(source)] = budget
                warning = large_file_warning(source.stat().st_size, self.limits)
                if warning:
                    self.report.warnings.append((str(source), warning))
                yield source, parsed
            except (IngestError, InventoryError) as exc:
                yield source, exc
            except (OSError, UnicodeDecodeError) as exc:
                yield source, IngestError(f"cannot read {source.name}: {exc}")
            except RecursionError:
                yield source, IngestError(f"{source}: nested too deeply to read")
            except Exception as exc:  # noqa: BLE001 - one bad file must not stop the run
                yield (
                    source,
                    IngestError(f"{source}: cannot parse ({type(exc).__name__}: {_one_line(exc)})"),
                )


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200] + ("…" if len(text) > 200 else "")


def _undetected_languages(candidates: list[ResolvedDocument]) -> list[ResolvedDocument]:
    """The documents whose text told no language (a table of digits) take the language most
    of the run's other documents have (ties: the first in code order), English when none has
    one: a French collection's price table is French, not English."""
    counts: dict[str, int] = {}
    for c in candidates:
        if c.document.language:
            counts[c.document.language] = counts.get(c.document.language, 0) + 1
    default = min(counts, key=lambda lang: (-counts[lang], lang)) if counts else "en"
    return [
        c if c.document.language else replace(c, document=replace(c.document, language=default))
        for c in candidates
    ]
