"""Which files an ``index`` run reads: the files named, plus the supported files under the
folders named. Hidden files and folders (``.git``, ``.draft.md``) and office lock files
(``~$report.docx``) are skipped; other files with an unsupported suffix are counted so the
run can say so. A folder that cannot be listed (``PermissionError``) is reported, not skipped
silently, so that ``--prune`` keeps the documents under it. Paths given as ``skip`` (an index's
own files and upload store, when it lies inside a folder indexed) are never walked into."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kbsearch.errors import IngestError
from kbsearch.ingest import SUPPORTED_SUFFIXES
from kbsearch.ingest.metadata import path_doc_id


@dataclass(frozen=True)
class Discovery:
    """``files``: resolved path -> the doc id its path gives (relative to the folder named,
    without suffix; the stem for a file named directly), in sorted order. ``unsupported``:
    files under the folders whose type kbsearch does not read. ``unlisted``: folders that
    could not be listed (or files that could not be looked at), as ``(path, reason)``; what
    lies under them is unknown."""

    files: dict[Path, str] = field(default_factory=dict)
    unsupported: tuple[Path, ...] = ()
    unlisted: tuple[tuple[Path, str], ...] = ()


def _skipped(name: str) -> bool:
    return name.startswith((".", "~$"))


def _walk(root: Path, skip: Collection[str]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The non-hidden entries under ``root`` that are not folders (sorted), and the folders
    that could not be listed; entries whose absolute path is in ``skip`` are left out.
    Symbolic links to folders are not followed (as ``rglob``)."""
    found: list[Path] = []
    unlisted: list[tuple[Path, str]] = []
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as exc:
            unlisted.append((folder, f"cannot list folder: {exc.strerror or exc}"))
            continue
        for entry in entries:
            if _skipped(entry.name) or (skip and os.path.abspath(entry.path) in skip):
                continue
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_folder = False
            (pending if is_folder else found).append(folder / entry.name)
    return sorted(found), sorted(unlisted)


def discover(paths: Iterable[str | Path], skip: Iterable[str | Path] = ()) -> Discovery:
    """Walk ``paths`` (files and folders), leaving out the files and folders ``skip`` names
    wherever a folder walk meets them (a file named in ``paths`` is read).

    Raises:
        IngestError: a path does not exist.
    """
    files: dict[Path, str] = {}
    unsupported: list[Path] = []
    unlisted: list[tuple[Path, str]] = []
    left_out = {form for p in skip for form in (os.path.abspath(p), os.path.realpath(p))}
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            if os.path.abspath(path) in left_out or os.path.realpath(path) in left_out:
                continue
            entries, cannot_list = _walk(path, left_out)
            unlisted += cannot_list
            for found in entries:
                try:
                    if not found.is_file():
                        continue
                except OSError as exc:  # a file that cannot be looked at is not "gone"
                    unlisted.append((found, f"cannot read: {exc.strerror or exc}"))
                    continue
                if found.suffix.lower() in SUPPORTED_SUFFIXES:
                    files.setdefault(found.resolve(), path_doc_id(found.relative_to(path)))
                else:
                    unsupported.append(found)
        elif path.is_file():
            files.setdefault(path.resolve(), path_doc_id(Path(path.name)))
        else:
            raise IngestError(f"{path}: no such file or folder")
    return Discovery(files, tuple(unsupported), tuple(unlisted))


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """The files an ``index`` run over ``paths`` reads (see :func:`discover`).

    Raises:
        IngestError: a path does not exist, or the paths hold no file kbsearch can read.
    """
    paths = list(paths)
    found = discover(paths)
    if not found.files:
        raise IngestError(nothing_indexable(paths, found))
    return list(found.files)


def nothing_indexable(paths: Iterable[str | Path], found: Discovery) -> str:
    """The message for a run that found no file to read."""
    named = ", ".join(str(p) for p in paths)
    skipped = f" ({len(found.unsupported)} unsupported file(s))" if found.unsupported else ""
    if found.unlisted:
        folder, reason = found.unlisted[0]
        more = f" and {len(found.unlisted) - 1} more" if len(found.unlisted) > 1 else ""
        skipped += f" ({folder}: {reason}{more})"
    return f"no file to index in {named}{skipped}; kbsearch reads {', '.join(SUPPORTED_SUFFIXES)}"
