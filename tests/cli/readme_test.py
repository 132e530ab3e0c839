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


def test_the_documented_ingest_limits_are_the_real_defaults() -> None:
    """Issue 22: the README's table of ingest limits names every declared limit once, with
    its real default."""
    from kbsearch.ingest.limits import LIMITS, IngestLimits

    section = re.search(r"### Limits on huge or hostile files\n(.*?)\n###", README, re.S)
    assert section is not None, "the README's limits section moved"
    rows = re.findall(r"^\| `(\w+)` \| (\d+)\b", section.group(1), re.M)
    assert [name for name, _ in rows] == [limit.name for limit in LIMITS]
    defaults = IngestLimits()
    assert {name: int(value) for name, value in rows} == {
        limit.name: getattr(defaults, limit.name) for limit in LIMITS
    }


def _readme_and_docs() -> dict[str, str]:
    root = Path(__file__).parents[2]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    return {page.name: page.read_text(encoding="utf-8") for page in pages}


def test_every_pip_install_line_works_in_a_checkout() -> None:
    """issue 22: `pip install 'kbsearch[serve]'` fails in a checkout (kbsearch is not on an
    index); the working spelling is `pip install '.[serve]'`, with extras pyproject declares."""
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    extras = set(pyproject["project"]["optional-dependencies"])
    seen = 0
    for name, text in _readme_and_docs().items():
        for line in re.findall(r"pip install ([^`\n&#]+)", text):
            for target in shlex.split(line):
                if target.startswith("-"):
                    continue
                assert not target.startswith("kbsearch"), f"{name}: pip install {line}"
                if target.startswith("."):
                    seen += 1
                    wanted = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", target)
                    assert wanted is not None, f"{name}: pip install {line}"
                    assert set(filter(None, (wanted.group(1) or "").split(","))) <= extras
    assert seen >= 4


@pytest.mark.parametrize(
    "command",
    [
        ["search", "parcel refund", "-k", "2"],
        ["ask", "parcel refund", "-k", "2"],
        ["explain", "parcel refund", "PASSAGE", "-k", "2"],
    ],
)
def test_the_short_k_the_readme_names_is_the_long_one(
    command: list[str], demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README says the CLI's `-k` returns 5 by default: `-k N` is `--k N`."""
    assert "the CLI (`-k`)" in README
    monkeypatch.setattr(
        kbsearch.index.embedder_slot, "load_embedder", lambda spec: FakeEmbedder(64)
    )
    monkeypatch.setattr(kbsearch.index.embedder_slot, "resolve_spec", lambda spec: "fake:bow")
    with kbsearch.open_kb(demo_db) as kb:
        passage = kb.search("parcel refund", route="lexical")[0].passage_id
    args = [passage if word == "PASSAGE" else word for word in command] + ["--db", str(demo_db)]
    short = CliRunner().invoke(cli, args)
    long = CliRunner().invoke(cli, [("--k" if word == "-k" else word) for word in args])
    assert short.exit_code == 0, short.output
    assert short.output == long.output


def test_the_documented_verdict_bands_are_the_shipped_ones() -> None:
    """The README's three verdicts: answered from the shipped model's threshold, uncertain
    from its floor (the bands of the confidence every search and answer shows)."""
    from kbsearch.judge.confidence import ConfidenceModel

    threshold, floor = ConfidenceModel.load().bands
    assert floor is not None
    assert f"`min_confidence` (default {threshold:.2f}" in README
    assert f"`uncertain_from` ({floor:.2f}" in README
    assert "of the question's words (IDF-weighted); otherwise" not in README  # no second gate
