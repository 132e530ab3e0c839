"""reStructuredText written for Sphinx: its directives and roles read as Sphinx shows them
(docutils alone drops the directives it does not know with their content, and keeps an
unknown role's raw markup)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbsearch.ingest import parse_file
from kbsearch.ingest.rst import role_text

SPHINX = """Command line
============

Reset a lost password with :option:`--gui-password`, then see
:ref:`the database folder <config-locations>` and :py:func:`~os.path.join`.

.. toctree::
   :maxdepth: 2

   intro
   usage

Generate options
----------------

.. cmdoption:: --gui-password=<password|->

    Specify a new GUI password, to update the config file.

.. versionadded:: 1.2
   :class: note

   Passwords are hashed before they are written.

.. seealso::

   The :doc:`security page </users/security>`.

.. graphviz::

   digraph { a -> b }
"""


def test_sphinx_directives_keep_their_text_and_roles_show_theirs(tmp_path: Path) -> None:
    path = tmp_path / "cli.rst"
    path.write_text(SPHINX)
    doc = parse_file(path)[0]
    assert [(b.section, b.text) for b in doc.blocks] == [
        (
            (),
            "Reset a lost password with --gui-password, then see the database folder and join.",
        ),
        (("Generate options",), "--gui-password=<password|->"),
        (("Generate options",), "Specify a new GUI password, to update the config file."),
        (("Generate options",), "New in version 1.2."),
        (("Generate options",), "Passwords are hashed before they are written."),
        (("Generate options",), "See also: The security page."),
    ]


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        (":ref:`the folder <config-locations>`", "the folder"),
        (":ref:`<config-locations>`", "config-locations"),
        (":option:`--gui-password`", "--gui-password"),
        (":py:func:`~os.path.join`", "join"),
        (":stconf:opt:`maxConflicts`", "maxConflicts"),  # a project's own role
        (":doc:`!/users/faq`", "/users/faq"),
        ("*emphasis*", None),  # not a role: left as it is
    ],
)
def test_role_text(source: str, shown: str | None) -> None:
    assert role_text(source) == shown


def _blocks(tmp_path: Path, source: str) -> list[str]:
    path = tmp_path / "page.rst"
    path.write_text(source)
    return [b.text for b in parse_file(path)[0].blocks]


def test_a_version_note_keeps_the_text_after_its_version(tmp_path: Path) -> None:
    # Sphinx's usual form: the note's text on the lines after the version (it read 'Changed
    # in version 2.0 :func:`foo` now returns bar..', its markup raw)
    source = """Notes
=====

.. versionchanged:: 2.0
   :func:`foo` now returns ``bar``.

.. deprecated:: 3.0
"""
    assert _blocks(tmp_path, source) == [
        "Changed in version 2.0: foo now returns bar.",
        "Deprecated since version 3.0.",
    ]


def test_a_title_argument_is_inline_markup_a_condition_is_not_shown(tmp_path: Path) -> None:
    source = """Tabs
====

.. seealso:: :ref:`the folder <config-locations>`

.. todo:: Document the :option:`--home` flag.

.. only:: html

   Only on the web.

.. grid:: 1 2 3

   .. grid-item-card:: Install with ``pip``

      Card body.

.. tabs::

   .. code-tab:: python

      for x in y:
          print(*x)
"""
    assert _blocks(tmp_path, source) == [
        "See also: the folder",
        "Document the --home flag.",
        "Only on the web.",
        "Install with pip",
        "Card body.",
        "for x in y:\n    print(*x)",
    ]


def test_docutils_class_directive_still_gives_no_text(tmp_path: Path) -> None:
    # docutils' own ``.. class::`` (class names for the next element or the content) shows no
    # text; Sphinx's Python class (a signature) shows its signature
    source = """Classes
=======

.. class:: special

A paragraph.

.. class:: boxed wide

   Boxed content.

.. class:: Point(x, y)

   A point.
"""
    assert _blocks(tmp_path, source) == [
        "A paragraph.",
        "Boxed content.",
        "Point(x, y)",
        "A point.",
    ]


def test_a_bare_ref_to_a_section_of_the_page_shows_its_title(tmp_path: Path) -> None:
    # Sphinx shows ``:ref:`gui-password``` as the section's title; it read "see gui-password".
    # A label of another page (unknown here) still gives itself; a seealso says "See also"
    # (it read "config-file for every key", a bare sentence fragment)
    source = """.. _config-file:

Configuration
=============

Set a password first (see :ref:`gui-password`, :ref:`config-file`, :ref:`cli-options`).

.. _gui-password:

GUI password
------------

.. seealso:: :ref:`cli-options` for every flag.

.. seealso::

   - :ref:`gui-password`
"""
    assert _blocks(tmp_path, source) == [
        "Set a password first (see GUI password, Configuration, cli-options).",
        "See also: cli-options for every flag.",
        "See also:",
        "GUI password",
    ]
