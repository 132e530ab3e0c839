"""Which files an ``index`` run reads: the files named, plus the supported files under the
folders named. Hidden files and folders (``.git``, ``.draft.md``) and office lock files
(``~$report.docx``) are skipped; other files with an unsupported suffix are counted so the
run can say so."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kbsearch.errors import IngestError
from kbsearch.ingest import SUPPORTED_SUFFIXES
from kbsearch.ingest.metadata import path_doc_id


@dataclass(frozen=True)
class Discovery:
    """``files``: resolved path -> the doc id its path gives (relative to the folder named,
    without suffix; the stem for a file named directly), in sorted order. ``unsupported``:
    files under the folders whose type kbsearch does not read."""

    files: dict[Path, str] = field(default_factory=dict)
    unsupported: tuple[Path, ...] = ()


def _skipped(relative: Path) -> bool:
    return any(part.startswith((".", "~$")) for part in relative.parts)


def discover(paths: Iterable[str | Path]) -> Discovery:
    """Walk ``paths`` (files and folders).

    Raises:
        IngestError: a path does not exist.
    """
    files: dict[Path, str] = {}
    unsupported: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for found in sorted(path.rglob("*")):
                relative = found.relative_to(path)
                if not found.is_file() or _skipped(relative):
                    continue
                if found.suffix.lower() in SUPPORTED_SUFFIXES:
                    files.setdefault(found.resolve(), path_doc_id(relative))
                else:
                    unsupported.append(found)
        elif path.is_file():
            files.setdefault(path.resolve(), path_doc_id(Path(path.name)))
        else:
            raise IngestError(f"{path}: no such file or folder")
    return Discovery(files, tuple(unsupported))


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
    return f"no file to index in {named}{skipped}; kbsearch reads {', '.join(SUPPORTED_SUFFIXES)}"
