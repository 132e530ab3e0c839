"""Check a built wheel (``python scripts/check_wheel.py dist/kbsearch-*.whl``): it holds every
file git tracks under ``src/kbsearch`` (the modules, the bundled demo help centre, the shipped
fusion and abstention models, the page's templates and static files), its version is the
package's ``__version__``, and it ships no test or cache file. Exits 1 naming what is wrong."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tracked() -> set[str]:
    """The files git tracks under src/kbsearch, as wheel paths (``kbsearch/...``)."""
    listing = subprocess.run(
        ["git", "ls-files", "src/kbsearch"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    return {path.removeprefix("src/") for path in listing}


def problems(wheel: Path) -> list[str]:
    names = set(zipfile.ZipFile(wheel).namelist())
    found = [f"missing from the wheel: {name}" for name in sorted(tracked() - names)]
    found += [
        f"should not ship: {name}"
        for name in sorted(names)
        if "__pycache__" in name or name.endswith(".pyc") or "/tests/" in name
    ]
    init = (ROOT / "src/kbsearch/__init__.py").read_text(encoding="utf-8")
    version = re.search(r'^__version__ = "([^"]+)"', init, re.M)
    if version is None or not wheel.name.startswith(f"kbsearch-{version.group(1)}-"):
        found.append(f"{wheel.name}: not the version of kbsearch.__version__")
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python scripts/check_wheel.py WHEEL", file=sys.stderr)
        return 2
    wheel = Path(argv[0])
    found = problems(wheel)
    for line in found:
        print(line, file=sys.stderr)
    if not found:
        print(f"{wheel.name}: {len(tracked())} package files, all present")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
