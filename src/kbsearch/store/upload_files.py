"""The files of the upload store (``<db>.uploads/<doc_id>/v<version>/<name>``), kept in step with
the index through a crash (``kill -9``, power loss) or a full disk.

Every change of a version's folder (an upload replacing its file, a deletion) runs under a
journal, ``<db>.uploads/.journal/<doc_id>@<version>``: a file that is also the change's lock
(``flock``; the system drops it when its process dies) and records, before anything else
changes, the index's content hash of that version (or that it had none) and the new file's
name. The order of a replacement:

1. the journal is written and synced;
2. the new bytes go to ``.incoming`` in the version's folder, synced (a full disk fails here,
   with the stored file untouched);
3. the stored file, if any, is linked as ``.previous`` (no copy, no space), then
   ``.incoming`` is renamed over ``<name>`` (atomic);
4. the caller indexes ``<name>`` in one transaction (the commit point);
5. :func:`settle` compares the index's hash with the journal's: a change means the index took
   the new version (``.previous`` goes), none means it did not (``.previous`` comes back, or a
   new file goes); then the folder is made to hold exactly the file the index names (none:
   the folder goes) and the journal is removed, last.

Step 5 runs after the write whether it succeeded or failed, and again on the next start
(:func:`recover`, from the server's start and from every :meth:`KnowledgeBase.index
<kbsearch.facade.indexing.Indexing.index>`) for a journal whose process died: each step of it can
be repeated, so a crash during a recovery is recovered too. A journal whose lock is held
belongs to a live writer (this process's or another's) and is left alone.

File-system failures are :class:`~kbsearch.errors.StorageFullError` (no space or quota) or
:class:`~kbsearch.errors.StorageError`, naming no server path.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import quote, unquote

from ..errors import StorageError, StorageFullError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock; one writer per index assumed
    fcntl = None  # type: ignore[assignment]

JOURNALS = ".journal"
INCOMING = ".incoming"
PREVIOUS = ".previous"
INVENTORY = ".inventory.csv"
NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
CLAIM_TRIES = 20  # a folder removed between two steps of a claim, by a concurrent settle


class IndexState(Protocol):
    """What the journal needs of the index: one stored version's hash and source."""

    def state(self, doc_id: str, version: str) -> tuple[str, str] | None: ...


@dataclass(frozen=True)
class Intent:
    """A journal's record: the index's hash of the version before the change (``None``: not
    stored), the file the change puts in place (``None``: a deletion) and whether a file of
    that name was there before."""

    before: str | None
    target: str | None
    had_target: bool

    def dumps(self) -> bytes:
        return json.dumps(
            {"before": self.before, "target": self.target, "had_target": self.had_target}
        ).encode()

    @classmethod
    def loads(cls, raw: bytes) -> Intent | None:
        """``None`` for a journal its writer did not finish writing (nothing else changed)."""
        try:
            data = json.loads(raw)
            return cls(data["before"], data["target"], bool(data["had_target"]))
        except (ValueError, KeyError, TypeError):
            return None


def storage_error(exc: OSError) -> StorageError:
    """``exc`` as the API's 503: the disk is full, or the store cannot be written."""
    if exc.errno in NO_SPACE:
        return StorageFullError(
            "the disk holding the upload store is full; nothing was lost: the stored file and"
            " the index keep the previous version; free some space and upload again"
        )
    return StorageError(f"cannot write the upload store: {exc.strerror or type(exc).__name__}")


@contextlib.contextmanager
def file_errors() -> Iterator[None]:
    """Turns an :class:`OSError` into :func:`storage_error`'s error."""
    try:
        yield
    except OSError as exc:
        raise storage_error(exc) from exc


def write_synced(path: Path, data: bytes) -> None:
    """``data`` in a new file ``path`` (replacing one), flushed to the disk."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_folder(folder: Path) -> None:
    """A folder's entries (a rename, a new file) flushed to the disk, where it can be."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class UploadFiles:
    """The upload store in the folder ``root`` (an index's
    :func:`~kbsearch.present.sources.uploads_folder`; see the module docstring)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()  # resolved, as the index records a file's source
        self.journals = self.root / JOURNALS

    def home(self, doc_id: str, version: str) -> Path:
        """``doc_id``'s folder of ``version``: the id percent-encoded (``guide/parking`` ->
        ``guide%2Fparking``), so that no id's folder sits inside another's."""
        return self.root / quote(doc_id, safe="") / f"v{version}"

    @contextlib.contextmanager
    def replacing(
        self, index: IndexState, doc_id: str, version: str, name: str, content: bytes
    ) -> Iterator[Path]:
        """``content`` in place as the version's file ``name`` (the stored one kept aside);
        yields its path, for the caller to index. On leaving, normally or not, the folder is
        settled by what the index holds (module docstring, step 5).

        Raises:
            StorageFullError, StorageError: the file cannot be written (nothing changed).
        """
        home = self.home(doc_id, version)
        with self._claim(index, doc_id, version) as journal:
            assert journal is not None  # waited for
            target = home / name
            try:
                with file_errors():
                    state = index.state(doc_id, version)
                    intent = Intent(state[0] if state else None, name, target.exists())
                    write_synced(journal, intent.dumps())
                    home.mkdir(parents=True, exist_ok=True)
                    write_synced(home / INCOMING, content)
                    if intent.had_target:
                        (home / PREVIOUS).unlink(missing_ok=True)
                        os.link(target, home / PREVIOUS)
                    os.replace(home / INCOMING, target)
                    sync_folder(home)
                yield target
            finally:
                with file_errors():
                    self._settle(index, doc_id, version, journal)

    @contextlib.contextmanager
    def removing(self, index: IndexState, doc_id: str, version: str) -> Iterator[None]:
        """A deletion of the version from the index (the caller's, inside the block), then of
        its folder once the index no longer holds it.

        Raises:
            StorageFullError, StorageError: the journal cannot be written (nothing changed).
        """
        with self._claim(index, doc_id, version) as journal:
            assert journal is not None  # waited for
            try:
                with file_errors():
                    state = index.state(doc_id, version)
                    write_synced(journal, Intent(state[0] if state else None, None, False).dumps())
                yield
            finally:
                with file_errors():
                    self._settle(index, doc_id, version, journal)

    @contextlib.contextmanager
    def holding(self, index: IndexState, doc_id: str, version: str) -> Iterator[None]:
        """The version's folder held still, for the caller to read its file (a backup): its
        journal claimed, so no change of it runs meanwhile (a live writer is waited for, a
        dead one's change settled first); the folder then holds exactly the file
        ``index.state`` names now. Settled on leaving, like any claim. A store this process
        may not write (read-only media, another user's folder) is read as it is, unclaimed:
        no journal can be made there, and a writer that may write it is not waited for.

        Raises:
            StorageFullError, StorageError: the journal cannot be claimed.
        """
        if not os.access(self.root, os.W_OK):
            yield
            return
        with self._claim(index, doc_id, version) as journal:
            assert journal is not None  # waited for
            try:
                yield
            finally:
                with file_errors():
                    self._settle(index, doc_id, version, journal)

    def recover(self, index: IndexState, *, sweep: bool = False) -> list[str]:
        """Settle every journal whose writer died; with ``sweep``, also every version folder
        that does not hold exactly the file the index names (left by a version of kbsearch
        without journals; it reads every folder: for a start, not for every write). Returns
        the ``doc_id@version`` settled, sorted. One that cannot be settled now (a live writer
        holds it, the disk refuses) is left for the next time."""
        keys = set()
        with contextlib.suppress(OSError):
            keys |= {p.name for p in self.journals.iterdir() if "@" in p.name}
        if sweep:
            keys |= self._unsettled_folders(index)
        settled = []
        for key in sorted(keys):
            encoded, _, version = key.rpartition("@")
            doc_id = unquote(encoded)
            with (
                contextlib.suppress(OSError, StorageError),
                self._claim(index, doc_id, version, wait=False) as journal,
            ):
                if journal is not None:
                    self._settle(index, doc_id, version, journal)
                    settled.append(f"{doc_id}@{version}")
        _remove_if_empty(self.journals)  # a crash between a settle's last two steps
        _remove_if_empty(self.root)
        return settled

    def _unsettled_folders(self, index: IndexState) -> set[str]:
        """The ``doc_id@version`` of each version folder that holds anything but the one
        file the index names; a document folder's entry that is no version's folder (a
        temporary folder of an older kbsearch) is removed."""
        keys = set()
        with contextlib.suppress(OSError):
            for home in self.root.glob("*/*"):
                if home.parent.name == JOURNALS:
                    continue
                if not home.name.startswith("v") or not home.is_dir():
                    _remove(home)
                    continue
                doc_id, version = unquote(home.parent.name), home.name[1:]
                state = index.state(doc_id, version)
                if list(home.iterdir()) != ([Path(state[1])] if state else []):
                    keys.add(f"{home.parent.name}@{version}")  # as a journal names it
        return keys

    @contextlib.contextmanager
    def _claim(
        self, index: IndexState, doc_id: str, version: str, *, wait: bool = True
    ) -> Iterator[Path | None]:
        """The journal of ``doc_id@version``, locked by this process: yields its path, holding
        no intent yet (a dead writer's journal found there is settled first). ``wait=False``:
        yields ``None`` at once where a live writer holds it.

        Raises:
            StorageFullError, StorageError: the journal cannot be created.
        """
        path = self.journals / f"{quote(doc_id, safe='')}@{version}"
        for _ in range(CLAIM_TRIES):
            with file_errors():
                try:
                    self.journals.mkdir(parents=True, exist_ok=True)
                    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
                except FileNotFoundError:
                    continue  # the journal folder went meanwhile (a settle, emptied)
            try:
                if not _lock(fd, wait):
                    yield None
                    return
                if not _same_file(fd, path):
                    continue  # settled and removed by another writer while this one waited
                if os.fstat(fd).st_size:  # a writer died with its change recorded
                    with file_errors():
                        self._settle(index, doc_id, version, path)
                    continue
                yield path
                return
            finally:
                os.close(fd)
        raise StorageError(f"cannot claim the upload store's journal of {doc_id} v{version}")

    def _settle(self, index: IndexState, doc_id: str, version: str, journal: Path) -> None:
        """Step 5 of the module docstring, for the journal ``journal`` (locked by the caller)."""
        home = self.home(doc_id, version)
        intent = Intent.loads(journal.read_bytes()) if journal.exists() else None
        state = index.state(doc_id, version)
        if intent is not None and intent.target is not None:
            taken = (state[0] if state else None) != intent.before
            if not taken:
                if (home / PREVIOUS).exists():
                    os.replace(home / PREVIOUS, home / intent.target)
                elif not intent.had_target:
                    (home / intent.target).unlink(missing_ok=True)
        source = Path(state[1]) if state else None
        if source is not None and source.parent == home and source.is_file():
            for entry in home.iterdir():
                if entry != source:
                    _remove(entry)
            sync_folder(home)
        else:
            if home.exists():
                shutil.rmtree(home)
            _remove_if_empty(home.parent)
        journal.unlink(missing_ok=True)
        _remove_if_empty(self.journals)
        _remove_if_empty(self.root)


def _lock(fd: int, wait: bool) -> bool:
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry)
    else:
        entry.unlink(missing_ok=True)


def _remove_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):
        folder.rmdir()
