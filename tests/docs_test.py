"""What the docs site states is what the code does: the MCP tools and their arguments, the keys
file example, the exit codes, the evaluation defaults, the extras, and the HTTP reference
covering every route of the app's schema. (The CLI reference and the guide's search, index and
rerank defaults: tests/cli/options_test.py; the examples, limits and verdict bands:
tests/cli/readme_test.py.)"""

from __future__ import annotations

import asyncio
import re
import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from support_docs import ROOT, hooks, pages, read, rendered, section

import kbsearch
from kbsearch.cli import cli
from kbsearch.cli.errors import INTERRUPTED, LIBRARY_ERROR, USAGE_ERROR

VERDICT_SECTION = (
    "### 2026-12-02 — verdict bands by kind of question; which confidence features carry across"
    " collections (issue 21, engineer verdict)"
)


def table_rows(text: str) -> list[list[str]]:
    """The body rows of the Markdown tables of ``text``, as stripped cells."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows[1:] if rows else rows


def test_the_agents_page_names_every_mcp_tool_and_argument(tmp_path: Path) -> None:
    from kbsearch.service.engine import Engine
    from kbsearch.service.mcp_server import build_server

    (tmp_path / "page.md").write_text("# A page\n\nSome text.\n", encoding="utf-8")
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        kb.index([tmp_path / "page.md"], default_access="public")
    engine = Engine(tmp_path / "kb.db", workers=1)
    try:
        tools = asyncio.run(build_server(engine, "public").list_tools())
    finally:
        engine.close()
    served = {tool.name: list(tool.input_schema["properties"]) for tool in tools}
    documented = {
        row[0].strip("`"): [arg.strip("` ") for arg in row[1].split(",")]
        for row in table_rows(section(read("guide/agents.md"), "## Tools"))
    }
    assert documented == served


def test_the_keys_file_example_is_a_valid_keys_file(tmp_path: Path) -> None:
    from kbsearch.service.keys import KeyRing

    serving = read("guide/serving.md")
    example = re.search(r"A keys file:\n\n```text\n(.*?)```", serving, re.S)
    assert example is not None, "the keys file example moved"
    (tmp_path / "keys.txt").write_text(example.group(1), encoding="utf-8")
    ring = KeyRing.load(tmp_path / "keys.txt")
    curl = re.search(r"'Authorization: Bearer ([\w-]+)'", serving)
    assert curl is not None
    reader, writer = ring.caller(curl.group(1)), ring.caller("staff-writer-key-0002")
    assert reader is not None and (reader.audience, reader.can_write) == ("public", False)
    assert writer is not None and (writer.audience, writer.can_write) == ("staff", True)
    for text in (serving, read("README.md")):  # the README's example line is the same key
        assert f"{curl.group(1)} public read" in " ".join(text.split())


def test_the_exit_codes_are_the_real_ones(tmp_path: Path) -> None:
    codes = {
        int(row[0]): row[1]
        for row in table_rows(section(read("reference/errors.md"), "## The command line"))
    }
    assert set(codes) == {0, LIBRARY_ERROR, USAGE_ERROR, INTERRUPTED}
    missing = CliRunner().invoke(cli, ["search", "refund", "--db", str(tmp_path / "none.db")])
    assert missing.exit_code == LIBRARY_ERROR == 1
    usage = CliRunner().invoke(cli, ["search", "refund", "--db", "kb.db", "--k", "0"])
    assert usage.exit_code == USAGE_ERROR == 2
    assert INTERRUPTED == 130  # what tests/cli/interrupt_test.py sees a command exit with


def test_the_evaluation_page_states_the_compare_defaults() -> None:
    stated = re.search(
        r"`--resamples` (\d+), `--seed` (\d+), `--alpha` ([\d.]+)", read("guide/evaluation.md")
    )
    assert stated is not None
    compare = cli.commands["compare"]
    defaults = {p.name: p.default for p in compare.params if isinstance(p, click.Option)}
    assert (int(stated.group(1)), int(stated.group(2)), float(stated.group(3))) == (
        defaults["resamples"],
        defaults["seed"],
        defaults["alpha"],
    )
    assert "`--test randomization`, the default" in read("guide/evaluation.md")
    assert defaults["test"] == "randomization"


def test_the_extras_table_is_pyproject_s() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    rows = table_rows(section(read("guide/index.md"), "## Install"))
    assert sorted(row[0].strip("`") for row in rows) == sorted(
        pyproject["project"]["optional-dependencies"]
    )


def test_the_http_reference_has_every_route_of_the_schema() -> None:
    page = rendered("reference/http.md")
    spec = hooks().openapi_schema()
    routes = [
        (method.upper(), path)
        for path, item in spec["paths"].items()
        for method in item
        if method in ("get", "post", "put", "delete")
    ]
    assert len(routes) >= 10
    for method, path in routes:
        assert f"### {method} `{path}`" in page
    for status in ("401", "404", "422", "503"):
        assert f"| {status} |" in page


def test_every_page_of_the_site_is_in_the_nav() -> None:
    import yaml

    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = yaml.safe_load(config.replace("!!python", "#"))["nav"]

    def names(entries: list[object]) -> list[str]:
        out: list[str] = []
        for entry in entries:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            out += names(value) if isinstance(value, list) else [str(value)]
        return out

    assert sorted(names(nav)) == sorted(name for name in pages() if name != "README.md")


@pytest.mark.parametrize("name", ["README.md", "guide/index.md"])
def test_the_readme_and_the_guide_give_the_same_two_commands(name: str) -> None:
    assert "pip install . && kbsearch demo" in read("README.md")
    assert "pip install -e '.[test]' && python -m pytest" in read(name)


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


@pytest.mark.parametrize(
    ("name", "index"),
    [("README.md", 0), ("guide/index.md", 0), ("reference/python.md", 0), ("guide/agents.md", 0)],
)
def test_the_python_examples_run_as_written(
    name: str, index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each page's Python example, in a folder holding the demo help centre as ``docs/`` and
    its index as ``kb.db`` (the fake embedder for the one that builds an index; the MCP
    example starts a real ``kbsearch mcp`` over an index without vectors)."""
    import shutil

    from support import FakeEmbedder

    import kbsearch.index.embedder_slot
    from kbsearch.tasks.demo import demo_files, examples_dir

    code = python_blocks(read(name))[index]
    (tmp_path / "docs").mkdir()
    for path in [*demo_files(), examples_dir() / "inventory.csv"]:
        shutil.copy(path, tmp_path / "docs" / Path(path).name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(kbsearch.index.embedder_slot, "load_embedder", lambda spec: FakeEmbedder())
    monkeypatch.setattr(kbsearch.index.embedder_slot, "resolve_spec", lambda spec: "fake:bow")
    embedder = "none" if "mcp" in code else FakeEmbedder()
    if "create=True" not in code:
        with kbsearch.open_kb("kb.db", create=True, embedder=embedder) as kb:
            assert kb.index(["docs/"], inventory="docs/inventory.csv").ok
    exec(compile(code, name, "exec"), {"__name__": "__main__"})


def test_the_guide_quotes_the_benchmarks_page() -> None:
    """The served load and the confidence's limits the guide states are the benchmarks
    page's measured figures."""
    bench = section(read("benchmarks.md"), "## HTTP service load")
    serving = " ".join(read("guide/serving.md").split())
    quoted = re.search(
        r"([\d.]+) and ([\d.]+) requests/s, p99 ([\d.]+) and ([\d.]+) ms, no errors, at most "
        r"(\d+) MB",
        serving,
    )
    assert quoted is not None
    rate1, rate2, p99_1, p99_2, rss = quoted.groups()
    rows = [row for row in table_rows(bench) if row[0] == "a write each second"]
    assert [(row[2], row[5]) for row in rows] == [(rate1, p99_1), (rate2, p99_2)]
    assert max(int(row[-1].split("/")[-1]) for row in rows) == int(rss)
    assert "0 errors" in bench or all(row[7] == "0" for row in rows)
    # the span-aware confidence's final AUROC ("the shown span is right", all rows)
    answers = " ".join(read("guide/answers.md").split())
    limits = re.search(r"AUROC (0\.\d\d) on PIAF final and (0\.\d\d) on covid_faq_en", answers)
    # (its shell block holds "# ..." comment lines, so not ``section``)
    verdict = read("benchmarks.md").split(VERDICT_SECTION + "\n", 1)[1].split("\n### ", 1)[0]
    measured = {row[0].strip("*"): row[2].strip("*") for row in table_rows(verdict)}
    assert limits is not None
    finals = [measured[name] for name in ("PIAF final, all", "covid_faq_en final, all")]
    assert [f"{float(v):.2f}" for v in finals] == list(limits.groups())


def test_the_python_reference_documents_the_answer_and_its_json_names() -> None:
    """`kb.ask` returns :class:`kbsearch.judge.answer.Answer`: the Python reference renders it
    and maps each field whose JSON name differs to that name, as ``to_dict`` writes it."""
    from kbsearch.judge.answer import Answer

    text = " ".join(read("reference/python.md").split())
    assert "::: kbsearch.judge.answer.Answer" in read("reference/python.md")
    answer = Answer(
        query="q", verdict="answered", confidence=0.9, threshold=0.46, floor=0.26, text="span",
        start=0, end=4, marks=(), citation=None, nearest=(),
    )  # fmt: skip
    found = answer.to_dict()
    mapped = re.findall(r"`\.(\w+)` is `(\w+)`", text)
    assert {field for field, _ in mapped} >= {"text", "threshold", "floor"}
    for field, key in mapped:
        assert found[key] == getattr(answer, field), (field, key)


def test_the_passages_route_says_a_hash_is_sent_as_percent_23() -> None:
    """A passage id holds `#`, which a URL would cut as a fragment: the HTTP reference (from
    the schema) and the serving guide say it is sent as `%23`, with an example."""
    page = " ".join(rendered("reference/http.md").split())
    route = page.split("### GET `/passages/{passage_id}`", 1)[1].split("### ", 1)[0]
    assert "%23" in route
    guide = " ".join(section(read("guide/serving.md"), "## Searching over HTTP").split())
    assert "/passages/warranty@v2%23warranty-period" in guide


def test_the_gold_answers_default_is_as_the_evaluation_guide_says(tmp_path: Path) -> None:
    """`QUESTIONS/answers.jsonl` for a folder holding one; none for a single questions file."""
    from kbsearch.cli.eval_answers import gold_answers_path

    (tmp_path / "answers.jsonl").write_text("")
    (tmp_path / "questions.jsonl").write_text("")
    assert gold_answers_path(tmp_path, None) == tmp_path / "answers.jsonl"
    assert gold_answers_path(tmp_path / "questions.jsonl", None) is None
    text = " ".join(section(read("guide/evaluation.md"), "## Answer evaluation").split())
    assert "when QUESTIONS is a single `.jsonl` file there is no default" in text
