"""Writing a file a user asked for (an evaluation report, a TREC run, an answers dump): its
folder made, and any failure (a folder that cannot be made, a path that is a folder, no
permission, a full disk) one :class:`~kbsearch.errors.StorageError` naming the path."""

from __future__ import annotations

from pathlib import Path

from kbsearch.errors import StorageError


def write_output(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path``, making its folder; returns the path.

    Raises:
        StorageError: the folder or the file cannot be written.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise StorageError(f"cannot write {target}: {exc.strerror or exc}") from exc
    return target


def make_folder(path: str | Path) -> Path:
    """Make the folder ``path`` (and its parents) unless it exists; returns it.

    Raises:
        StorageError: it cannot be made (a file or a link loop there, no permission).
    """
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:  # a file, or a link to nothing or in a loop
        raise StorageError(f"cannot make the folder {folder}: something else is there") from exc
    except OSError as exc:
        raise StorageError(f"cannot make the folder {folder}: {exc.strerror or exc}") from exc
    return folder
