"""A backup of an index: a consistent copy of its SQLite file (SQLite's online backup: readers
and writers continue) and of its upload store (:mod:`kbsearch.store.upload_files`), the copy a
working index of its own.

The uploaded files the copy's documents name are copied to the copy's own upload store (the
folder the copy finds beside itself), and the copy's documents name them there, so that
searching, re-indexing or pruning the copy reads its own files, never the original's. Each file
is copied while its version's journal is claimed, and only while the index still holds the
version the SQLite copy holds: a file an upload replaced after the snapshot would not be the
one indexed, so the backup starts again (at most :data:`TRIES` times).

Everything is written under a temporary folder beside the destination
(``.NAME.XXXX.partial``), then moved into place: the old destination (``--force``) goes first,
then the uploads folder comes, then the index file, last. A crash leaves either no
destination or a whole one, never an index file without its uploads (a leftover
``.partial`` folder or uploads folder without its index file is no backup, and the next backup
replaces it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidArgumentError, StorageError
from .database import Database
from .schema import COUNTS_TABLE
from .upload_files import IndexState, UploadFiles, sync_folder

TRIES = 3  # snapshots taken before giving up on an upload store that keeps changing
SQLITE_HEADER = b"SQLite format 3\x00"
PARTIAL = ".partial"
COPY = "index.db"  # the index file's name inside the temporary folder
UPLOADS = "uploads"  # and its uploads folder's


@dataclass(frozen=True)
class Backup:
    """What a backup wrote: ``documents`` stored versions, ``uploads`` uploaded files of
    ``upload_bytes`` bytes in all (in ``uploads_folder``; ``None`` when there are none),
    ``missing`` the ``doc_id@version`` whose uploaded file the index names but the store
    lacks (their rows are copied, without a file), and ``detached``: the index's Qdrant
    target was left out (the copy is a SQLite index)."""

    documents: int
    uploads: int
    upload_bytes: int
    uploads_folder: str | None
    missing: tuple[str, ...]
    detached: bool


@dataclass(frozen=True)
class _Upload:
    """A stored version whose source lies in the upload store, as the snapshot holds it."""

    doc_id: str
    version: str
    content_hash: str
    source: str


def write_backup(
    database: Database,
    index: IndexState,
    uploads: str | os.PathLike[str],
    destination: str | os.PathLike[str],
    copy_uploads: str | os.PathLike[str],
    without_meta: Sequence[str] = (),
) -> Backup:
    """Back up the index ``database`` (whose stored versions ``index`` reads, its upload store
    in the folder ``uploads``) to the file ``destination``, its uploads to ``copy_uploads``
    (the folder the copy finds beside itself); the ``meta`` keys ``without_meta`` left out of
    the copy. An existing ``destination`` (a SQLite file) is replaced; see the module
    docstring.

    Raises:
        InvalidArgumentError: ``destination`` exists and is not a SQLite file, or does not
            exist while ``copy_uploads`` does.
        StorageError: the copy cannot be written (missing folder, full disk, an upload store
            that kept changing for :data:`TRIES` snapshots).
    """
    target = Path(destination).absolute()
    try:
        _refuse_other_file(target)
    except OSError as exc:
        raise _error(target, exc) from exc
    files, copy_root = UploadFiles(uploads), UploadFiles(copy_uploads).root
    if not target.exists() and (copy_root.exists() or copy_root.is_symlink()):
        # no backup's folder (no index beside it): someone's files, not replaced
        raise InvalidArgumentError(f"{copy_root} exists beside no index; not replacing it")
    for _ in range(TRIES):
        try:
            work = Path(
                tempfile.mkdtemp(prefix=f".{target.name}.", suffix=PARTIAL, dir=target.parent)
            )
        except OSError as exc:
            raise _error(target, exc) from exc
        try:
            done = _write(database, index, files, work, copy_root, without_meta)
            if done is not None:
                _move_into_place(work, target, copy_root, bool(done.uploads))
                return done
        except OSError as exc:
            raise _error(target, exc) from exc
        except sqlite3.Error as exc:
            raise StorageError(f"cannot write a backup to {target}: {exc}") from exc
        finally:
            shutil.rmtree(work, ignore_errors=True)
    raise StorageError(
        f"uploads kept replacing the files being backed up ({TRIES} tries); back up again"
    )


def _write(
    database: Database,
    index: IndexState,
    files: UploadFiles,
    work: Path,
    copy_root: Path,
    without_meta: Sequence[str],
) -> Backup | None:
    """The copy in ``work`` (``index.db``, ``uploads/``); ``None`` when an upload replaced a
    file after the snapshot (to start again)."""
    detached = database.backup(work / COPY, without_meta)
    documents, stored = _relocate(work / COPY, files.root, copy_root)
    copied, size, missing = 0, 0, []
    for upload in stored:
        with files.holding(index, upload.doc_id, upload.version):
            if index.state(upload.doc_id, upload.version) != (upload.content_hash, upload.source):
                return None
            place = work / UPLOADS / Path(upload.source).relative_to(files.root)
            written = _copy_synced(Path(upload.source), place)
            if written is None:
                missing.append(f"{upload.doc_id}@{upload.version}")
                continue
            copied, size = copied + 1, size + written
    folder = str(copy_root) if copied else None
    return Backup(documents, copied, size, folder, tuple(missing), detached)


def _relocate(copy: Path, root: Path, copy_root: Path) -> tuple[int, list[_Upload]]:
    """In the SQLite copy ``copy``: the documents whose source lies under ``root`` (the
    original's upload store) made to name the same file under ``copy_root``, the per-folder
    counts with them (:mod:`kbsearch.store.counts`); ``(documents stored, those uploads as
    the original names them)``."""
    old, new = str(root) + os.sep, str(copy_root) + os.sep
    connection = sqlite3.connect(copy)
    try:
        documents = connection.execute("SELECT count(*) FROM documents").fetchone()[0]
        rows = connection.execute(
            "SELECT doc_id, version, content_hash, source FROM documents"
            " WHERE substr(source, 1, ?) = ? ORDER BY doc_id, version",
            (len(old), old),
        ).fetchall()
        moved = "? || substr({0}, ?)"
        connection.execute(
            f"UPDATE documents SET source = {moved.format('source')}"
            " WHERE substr(source, 1, ?) = ?",
            (new, len(old) + 1, len(old), old),
        )
        connection.execute(
            f"UPDATE {COUNTS_TABLE} SET key = {moved.format('key')}"
            " WHERE kind = 'folder' AND substr(key, 1, ?) = ?",
            (new, len(old) + 1, len(old), old),
        )
        connection.commit()
    finally:
        connection.close()
    if Path(f"{copy}-wal").exists():  # the close checkpoints it; a copy without it is whole
        raise StorageError(f"cannot finish the backup copy {copy}: its WAL was not written back")
    return int(documents), [_Upload(*row) for row in rows]


def _copy_synced(source: Path, place: Path) -> int | None:
    """``source`` copied to the new file ``place`` (its folder made), flushed to the disk; the
    bytes copied, ``None`` when there is no ``source``.

    Raises:
        OSError: ``place`` cannot be written.
    """
    try:
        src = source.open("rb")
    except FileNotFoundError:
        return None
    with src:
        place.parent.mkdir(parents=True, exist_ok=True)
        with place.open("xb") as dst:
            shutil.copyfileobj(src, dst)
            dst.flush()
            os.fsync(dst.fileno())
            return dst.tell()


def _move_into_place(work: Path, target: Path, copy_root: Path, has_uploads: bool) -> None:
    """The finished copy in ``work`` moved to ``target`` and ``copy_root`` (module
    docstring): the old index file and its SQLite journals first, its uploads folder next,
    then the new uploads folder, and the new index file last."""
    target.unlink(missing_ok=True)
    for end in ("-wal", "-shm", "-journal"):  # an old file's: replayed into the new one
        Path(f"{target}{end}").unlink(missing_ok=True)
    if copy_root.is_dir() and not copy_root.is_symlink():
        shutil.rmtree(copy_root)
    else:
        copy_root.unlink(missing_ok=True)
    if has_uploads:
        sync_folder(work / UPLOADS)
        os.replace(work / UPLOADS, copy_root)
        sync_folder(copy_root.parent)
    os.replace(work / COPY, target)
    sync_folder(target.parent)


def _refuse_other_file(target: Path) -> None:
    """Raises InvalidArgumentError when ``target`` exists and is not a SQLite file (nor an
    empty one): replacing it would lose a file that is no index."""
    with contextlib.suppress(FileNotFoundError):
        if target.is_dir():
            raise InvalidArgumentError(f"{target} is a folder, not an index file")
        with target.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
        if head and head != SQLITE_HEADER:
            raise InvalidArgumentError(
                f"{target} exists and is not a SQLite index; not replacing it"
            )


def _error(target: Path, exc: OSError) -> StorageError:
    return StorageError(f"cannot write a backup to {target}: {exc.strerror or exc}")
