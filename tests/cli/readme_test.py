"""The README's and the guide's search-side examples run as written against the demo help centre
(issue 14 item 14): every `kbsearch search/ask/explain/show/inventory/stats/backup` line of their
``bash`` blocks, with `kb.db` the demo index (fake embedder, no model); the limits, install lines
and verdict bands they state are the real ones."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import FakeEmbedder
from support_docs import ROOT, bash_commands, pages, read, section

import kbsearch
import kbsearch.index.embedder_slot
from kbsearch.cli import cli
from kbsearch.tasks.demo import demo_files, examples_dir

RUNNABLE = ("search", "ask", "explain", "show", "inventory", "stats", "backup")
# the pages whose examples run against the demo index
EXAMPLES = ("README.md", "guide/searching.md", "guide/answers.md", "guide/indexing.md")


def readme_commands() -> list[str]:
    commands = []
    for name in EXAMPLES:
        for words in bash_commands(read(name)):
            if words[1] in RUNNABLE and "--init" not in words:
                commands.append(shlex.join(words))
    return commands


def test_the_pages_have_search_examples() -> None:
    assert len(readme_commands()) >= 8
    assert {shlex.split(c)[1] for c in readme_commands()} >= {"search", "ask", "explain", "show"}
    assert {words[1] for words in bash_commands(read("README.md"))} >= {"search", "ask"}


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
    """Issue 22: the guide's table of ingest limits names every declared limit once, with
    its real default."""
    from kbsearch.ingest.limits import LIMITS, IngestLimits

    limits = section(read("guide/indexing.md"), "## Limits on huge or hostile files")
    rows = re.findall(r"^\| `(\w+)` \| (\d+)\b", limits, re.M)
    assert [name for name, _ in rows] == [limit.name for limit in LIMITS]
    defaults = IngestLimits()
    assert {name: int(value) for name, value in rows} == {
        limit.name: getattr(defaults, limit.name) for limit in LIMITS
    }


def test_every_pip_install_line_works() -> None:
    """issue 22: `pip install 'kbsearch[serve]'` fails before kbsearch is installed (it is not
    on an index): a checkout installs `.` (`pip install '.[serve]'`), a wheel its file (named
    with kbsearch's version), and only an installed kbsearch takes an extra by name
    (`pip install 'kbsearch[serve]'` then resolves to the installed copy), always with extras
    pyproject declares."""
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extras = set(pyproject["project"]["optional-dependencies"])
    wheel = re.escape(f"dist/kbsearch-{kbsearch.__version__}-py3-none-any.whl")
    seen: dict[str, int] = {}
    for name, text in pages().items():
        for line in re.findall(r"pip install ([^`\n&#]+)", text):
            for target in shlex.split(line):
                if target.startswith(("-", "https://")) or target == "torch":  # CPU torch
                    continue
                wanted = re.fullmatch(rf"(\.|kbsearch|{wheel})(?:\[([\w,-]+)\])?", target)
                assert wanted is not None, f"{name}: pip install {line}"
                assert wanted.group(1) != "kbsearch" or wanted.group(2), f"{name}: {line}"
                assert set(filter(None, (wanted.group(2) or "").split(","))) <= extras
                seen[wanted.group(1)] = seen.get(wanted.group(1), 0) + 1
    assert seen.get(".", 0) >= 4 and seen.get("kbsearch", 0) >= 1 and len(seen) == 3


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
    """The serving guide says the CLI's `-k` returns 5 by default: `-k N` is `--k N`."""
    assert "the CLI (`-k`) return 5 by default" in " ".join(read("guide/serving.md").split())
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
    """The guide's three verdicts: answered from the shipped model's threshold, uncertain
    from its floor (the bands of the confidence every search and answer shows)."""
    from kbsearch.judge.confidence import ConfidenceModel

    threshold, floor = ConfidenceModel.load().bands
    assert floor is not None
    answers = read("guide/answers.md")
    assert f"`min_confidence` (default {threshold:.2f}" in answers
    assert f"`uncertain_from` ({floor:.2f}" in answers
    assert "of the question's words (IDF-weighted)" not in answers  # no second gate


def test_the_pages_say_ask_needs_vectors() -> None:
    """`ask` on an index built with `--embedder none` is refused (the confidence reads both
    routes): the README's ask line, getting started and the answers guide say so."""
    readme = next(line for line in read("README.md").splitlines() if "kbsearch ask " in line)
    assert "needs vectors" in readme
    for name in ("guide/index.md", "guide/answers.md", "guide/indexing.md"):
        text = " ".join(read(name).split())
        assert "`ask` needs vectors" in text, name


def test_the_ask_help_states_the_shipped_rule() -> None:
    """`ask --help`'s default `--min-confidence` is the shipped model's, with the answered
    share it was chosen for (its rule in the model file), not an older rule's."""
    from kbsearch.judge.confidence import ConfidenceModel

    model = ConfidenceModel.load()
    threshold, floor = model.bands
    rule = (model.answer or model).info["threshold_rule"]
    share = re.search(r"right >= ([0-9.]+)", rule)
    assert share is not None, rule
    text = " ".join(CliRunner().invoke(cli, ["ask", "--help"]).output.split())
    assert f"{threshold:.2f}" in text and f"floor, {floor:.2f}" in text
    assert f"at least {round(float(share.group(1)) * 100)}%" in text
    assert "80%" not in text
