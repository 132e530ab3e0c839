"""py3langid's model unpacked once per machine into arrays that each process memory-maps.

py3langid ships its model as an LZMA-compressed ``.npz`` (4.6 MB, 68 MB unpacked) and
decompresses it in every process that detects a language: ~0.8 s of CPU, most of a one-shot
``kbsearch search`` on an index of two languages. :func:`load_identifier` unpacks it once into
``<cache root>/langid/py3langid-<version>-<size of the packed file>/`` (one ``.npy`` per array,
written into a temporary directory then renamed) and opens those arrays memory-mapped; the
identifier is built from the same arrays as py3langid's own loader builds it from, so it gives
the same probabilities (tested). Where the cache cannot be written, the model is unpacked in
memory as before.
"""

from __future__ import annotations

import contextlib
import lzma
import os
import shutil
import tempfile
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..cache import cache_root

if TYPE_CHECKING:
    from py3langid.langid import LanguageIdentifier

ARRAYS = ("ptc", "pc", "classes", "nextmove", "nextmove_row", "out_feat")


def _packed() -> Path:
    from py3langid.langid import MODEL_DIR, MODEL_FILE

    return Path(MODEL_DIR) / MODEL_FILE


def unpacked_dir(root: Path | None = None) -> Path:
    """Where this py3langid's model is unpacked (under ``root``, default the cache root)."""
    packed = _packed()
    name = f"py3langid-{metadata.version('py3langid')}-{packed.stat().st_size}"
    return (cache_root() if root is None else root) / "langid" / name


def _unpack() -> dict[str, np.ndarray]:
    with tempfile.TemporaryFile(suffix=".npz") as tmp:  # as py3langid unpacks it
        with lzma.open(_packed()) as src:
            shutil.copyfileobj(src, tmp, length=1 << 20)
        tmp.seek(0)
        with np.load(tmp, allow_pickle=False) as data:
            return {name: data[name] for name in ARRAYS}


def _read(directory: Path) -> dict[str, np.ndarray] | None:
    try:
        found = {n: np.load(directory / f"{n}.npy", mmap_mode="r") for n in ARRAYS}
    except (OSError, ValueError):
        return None
    rows = len(found["nextmove_row"])
    if len(found["out_feat"]) != rows or found["ptc"].shape[1:] != found["pc"].shape:
        return None
    return found


def _write(directory: Path, arrays: dict[str, np.ndarray]) -> None:
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".langid-", dir=directory.parent))
    try:
        for name, array in arrays.items():
            np.save(tmp / f"{name}.npy", array, allow_pickle=False)
        os.chmod(tmp, 0o755)
        if directory.exists():  # damaged (else it would have been read): mapped files survive
            shutil.rmtree(directory, ignore_errors=True)
        os.replace(tmp, directory)  # another process may have won: then ours is dropped
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if _read(directory) is None:
            raise


def load_arrays(root: Path | None = None) -> dict[str, np.ndarray]:
    """The model's arrays: memory-mapped from the unpacked copy, unpacking it first when it
    is missing or incomplete (kept in memory when the cache cannot be written)."""
    directory = unpacked_dir(root)
    found = _read(directory)
    if found is not None:
        return found
    arrays = _unpack()
    with contextlib.suppress(OSError):
        _write(directory, arrays)
    return arrays


def load_identifier(root: Path | None = None, **options: Any) -> LanguageIdentifier:
    """py3langid's ``LanguageIdentifier`` (``options``: its ``norm_probs`` ...) on
    :func:`load_arrays`; as ``LanguageIdentifier.from_model_file`` builds it, but its two
    transition tables are memory views of the mapped arrays instead of copies."""
    from py3langid.langid import LanguageIdentifier

    a = load_arrays(root)
    return LanguageIdentifier(
        np.asarray(a["ptc"]),
        np.asarray(a["pc"]),
        a["classes"].tolist(),
        np.ascontiguousarray(a["nextmove"]).data,
        a["out_feat"].tolist(),
        tk_row=np.ascontiguousarray(a["nextmove_row"]).data,
        **options,
    )
