"""The README's search-side examples run as written against the demo help centre (issue 14
item 14): every `kbsearch search/ask/explain/show/inventory/stats/backup` line of its "Use" block,
with `kb.db` the demo index (fake embedder, no model)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import FakeEmbedder

import kbsearch
import kbsearch.index.embedder_slot
from kbsearch.cli import cli
from kbsearch.tasks.demo import demo_files, examples_dir

README = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
RUNNABLE = ("search", "ask", "explain", "show", "inventory", "stats", "backup")


def readme_commands() -> list[str]:
    block = re.search(r"## Use\n\n```bash\n(.*?)```", README, re.S)
    assert block is not None, "the README's Use block moved"
    commands = []
    for line in block.group(1).splitlines():
        for command in line.split(" # ")[0].split(" ; "):
            words = shlex.split(command)
            if words[:1] == ["kbsearch"] and words[1] in RUNNABLE and "--init" not in words:
                commands.append(command.strip())
    return commands


def test_the_use_block_has_search_examples() -> None:
    assert len(readme_commands()) >= 6
    assert {shlex.split(c)[1] for c in readme_commands()} >= {"search", "explain", "show"}


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("readme") / "kb.db"
    with kbsearch.open_kb(path, create=True, embedder=FakeEmbedder(dim=64)) as kb:
        assert kb.index(demo_files(), inventory=examples_dir() / "inventory.csv").ok
    return path


@pytest.mark.parametrize("command", readme_commands())
def test_readme_example_runs_as_written(
    command: str, demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        kbsearch.index.embedder_slot,
        "load_embedder",
        lambda spec: FakeEmbedder(64),
    )
    monkeypatch.setattr(kbsearch.index.embedder_slot, "resolve_spec", lambda spec: "fake:bow")
    monkeypatch.chdir(tmp_path)
    args = [str(demo_db) if word == "kb.db" else word for word in shlex.split(command)[1:]]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "no results" not in result.stdout
