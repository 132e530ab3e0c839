"""The install hints errors carry name both spellings: by name once kbsearch is installed
(from a wheel or a checkout: pip resolves the name to the installed copy), and from a checkout's
folder (before kbsearch is installed, the name alone is on no index)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from kbsearch.errors import EXTRAS as DECLARED
from kbsearch.errors import install_hint

ROOT = Path(__file__).parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
EXTRAS = sorted(PYPROJECT["project"]["optional-dependencies"])


def test_the_extras_known_are_pyproject_s() -> None:
    assert sorted(DECLARED) == EXTRAS


@pytest.mark.parametrize("extra", EXTRAS)
def test_a_hint_names_the_extra_both_ways(extra: str) -> None:
    assert install_hint(extra) == (
        f"pip install 'kbsearch[{extra}]'; in a checkout: pip install '.[{extra}]'"
    )


def test_a_hint_for_an_undeclared_extra_is_a_bug() -> None:
    with pytest.raises(ValueError, match="no extra 'gpu'"):
        install_hint("gpu")


def test_no_message_in_the_code_spells_an_extra_one_way_only() -> None:
    """Every ``pip install 'kbsearch[...]'`` of a string the code raises or prints comes from
    :func:`install_hint` (docstrings and comments may name the installed spelling)."""
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "src/kbsearch").rglob("*.py"))
        if path.name != "errors.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "pip install 'kbsearch[" in line
        and "``" not in line  # reStructuredText: a docstring
        and not line.lstrip().startswith("#")
    ]
    assert not found


def test_shown_value_cuts_a_long_value_to_a_prefix_with_its_length() -> None:
    from kbsearch.errors import SHOWN_CHARS, shown_value

    assert shown_value("fr") == "'fr'" and shown_value(3) == "3"
    assert shown_value("x" * SHOWN_CHARS) == repr("x" * SHOWN_CHARS)
    assert shown_value("ab" * 15_000) == f"'{'ab' * 20}…' (30,000 characters)"
    assert shown_value("it's" * 20).startswith("\"it's") and '…" (80' in shown_value("it's" * 20)
    assert shown_value(10**100) == f"1{'0' * 39}… (101 characters)"


def test_shown_names_lists_short_names_as_sent_and_cuts_the_rest() -> None:
    from kbsearch.errors import shown_names

    assert shown_names(["fusion", "rrf_k"]) == "fusion, rrf_k"
    assert shown_names(["x" * 1_500]) == f"'{'x' * 40}…' (1,500 characters)"
    assert shown_names(["a b ", "\x1b[2J"]) == "'a b ', '\\x1b[2J'"
    assert shown_names([f"p{i}" for i in range(8)]) == "p0, p1, p2, p3, p4 and 3 more"
