"""scripts/check_wheel.py, which .ci/run runs on the built wheel: it names a package file the
wheel lacks, a cache file it should not ship, and a version other than kbsearch's."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from support_docs import script

import kbsearch

ROOT = Path(__file__).parents[1]


def checker() -> ModuleType:
    return script("check_wheel")


@pytest.fixture
def check() -> ModuleType:
    inside = subprocess.run(["git", "rev-parse"], cwd=ROOT, capture_output=True).returncode == 0
    if not inside:
        pytest.skip("not a git checkout: the package files are what git tracks")
    return checker()


def wheel(tmp_path: Path, names: set[str], version: str = kbsearch.__version__) -> Path:
    path = tmp_path / f"kbsearch-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name in sorted(names):
            archive.writestr(name, "")
    return path


def test_a_wheel_with_every_package_file_passes(check: ModuleType, tmp_path: Path) -> None:
    files = check.tracked()
    assert "kbsearch/judge/models/abstain.json" in files
    assert "kbsearch/examples/helpcentre/inventory.csv" in files
    assert check.problems(wheel(tmp_path, files)) == []


def test_a_missing_model_a_cache_file_and_another_version_are_named(
    check: ModuleType, tmp_path: Path
) -> None:
    files = check.tracked() - {"kbsearch/fuse/models/fusion_lgbm.txt"}
    files |= {"kbsearch/__pycache__/cli.cpython-311.pyc"}
    found = check.problems(wheel(tmp_path, files, version="9.9.9"))
    assert found == [
        "missing from the wheel: kbsearch/fuse/models/fusion_lgbm.txt",
        "should not ship: kbsearch/__pycache__/cli.cpython-311.pyc",
        "kbsearch-9.9.9-py3-none-any.whl: not the version of kbsearch.__version__",
    ]
