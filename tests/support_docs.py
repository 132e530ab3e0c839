"""Helpers for the tests of the README and the docs site (not a test module): the pages as
text, the sections of a page, and the ``kbsearch`` command lines of its ``bash`` blocks."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).parents[1]
DOCS = ROOT / "docs"


def read(name: str) -> str:
    """``README.md`` or ``CHANGELOG.md`` at the root, else a page under ``docs/``."""
    path = ROOT / name if name in ("README.md", "CHANGELOG.md") else DOCS / name
    return path.read_text(encoding="utf-8")


def pages() -> dict[str, str]:
    """The README and every written page of the site, by path (``guide/serving.md``)."""
    out = {"README.md": read("README.md")}
    for path in sorted(DOCS.rglob("*.md")):
        out[path.relative_to(DOCS).as_posix()] = path.read_text(encoding="utf-8")
    return out


def section(text: str, heading: str) -> str:
    """The body of the section whose heading line is ``heading`` (``## Keys``), up to the next
    heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    found = re.search(
        rf"^{re.escape(heading)}\n(.*?)(?=^#{{1,{len(level)}}} |\Z)", text, re.S | re.M
    )
    assert found is not None, f"the section {heading!r} moved"
    return found.group(1)


def bash_commands(text: str) -> list[list[str]]:
    """The ``kbsearch`` command lines of the ``bash`` blocks of ``text``, as words: comments
    dropped, ``a ; b`` as two commands."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            for command in line.split(" # ")[0].split(" ; "):
                words = shlex.split(command)
                if words[:1] == ["kbsearch"]:
                    commands.append(words)
    return commands


def script(name: str) -> ModuleType:
    """``scripts/NAME.py`` loaded as a module (the scripts folder is not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hooks() -> ModuleType:
    """``scripts/docs_hooks.py``, the MkDocs hooks that generate the reference pages."""
    return script("docs_hooks")


def rendered(name: str) -> str:
    """A page's Markdown once the hooks have put the generated references in."""
    return str(hooks().on_page_markdown(read(name), None, None, None))
