"""The rules a document's id and metadata follow wherever a person writes them: an upload's form
(``PUT /documents/{doc_id}``), a file's front matter (or card fields) and an inventory row. One
check, :func:`check_fields`, so ``kbsearch index`` refuses what the API refuses, with the same
message.

A doc id is what a URL path and a folder name can carry: 1 to 128 letters, digits, ``.``,
``_`` or ``-``, with ``/`` between parts that each start with a letter or digit (no ``\\``,
no ``..`` part, no empty part, no space or control character, nothing a passage id reserves:
``@``, ``#``); a version the same without ``/``. A label is ``public`` or ``staff``. A title
(300 characters), an owner and a doc type (100 each) are one line without control or
text-direction characters.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from datetime import date

from kbsearch.errors import InvalidArgumentError, shown_value

ACCESS_LABELS = ("public", "staff")
ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# a doc id as a folder makes them (kbsearch.ingest.metadata.path_doc_id): segments like ID
DOC_ID = re.compile(r"(?=[^\n]{1,128}$)[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9][A-Za-z0-9._-]*)*")
# the free-text metadata: a title is shown with every hit, owner and type in lists
MAX_FIELD_CHARS = {"title": 300, "owner": 100, "doc_type": 100}

# Unicode categories a metadata field may not hold: controls (Cc: NUL, line breaks, ESC, DEL,
# C1), format characters (Cf: the direction marks, embeddings, overrides and isolates U+200E,
# U+200F, U+061C, U+202A-U+202E, U+2066-U+2069, zero-width characters, U+FEFF), which can make a
# title read as another one, and the line and paragraph separators (Zl U+2028, Zp U+2029)
UNSHOWN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def unshown(ch: str) -> bool:
    """Whether ``ch`` may not appear in a metadata field (:data:`UNSHOWN_CATEGORIES`)."""
    return unicodedata.category(ch) in UNSHOWN_CATEGORIES


def check_fields(
    *,
    doc_id: str | None = None,
    version: str | None = None,
    access: str | None = None,
    texts: Mapping[str, str] | None = None,
    effective_from: date | None = None,
    effective_to: date | None = None,
) -> None:
    """Check the fields given (``None``: not given, not checked), in this order: ``texts``
    (``{name: value}`` of :data:`MAX_FIELD_CHARS`' fields), ``doc_id``, ``version``,
    ``access``, then that ``effective_to`` is not before ``effective_from``. See the module
    docstring for the rules.

    Raises:
        InvalidArgumentError: the first field that breaks its rule, named with the value.
    """
    for name, value in (texts or {}).items():
        most = MAX_FIELD_CHARS[name]
        if len(value) > most:
            raise InvalidArgumentError(f"{name} is {len(value):,} characters long; at most {most}")
        odd = next((ch for ch in value if unshown(ch)), None)
        if odd is not None:
            raise InvalidArgumentError(
                f"{name} holds the control character U+{ord(odd):04X}; send one line of"
                " text without control or text-direction characters"
            )
    if doc_id is not None and not DOC_ID.fullmatch(doc_id):
        raise InvalidArgumentError(
            "doc_id must be 1 to 128 letters, digits, '.', '_' or '-' (and '/' between"
            f" parts that start with a letter or digit), got {shown_value(doc_id)}"
        )
    if version is not None and not ID.fullmatch(version):
        raise InvalidArgumentError(
            f"version must be 1 to 128 letters, digits, '.', '_' or '-', got {shown_value(version)}"
        )
    if access is not None and access not in ACCESS_LABELS:
        raise InvalidArgumentError(
            f"access must be {' or '.join(ACCESS_LABELS)}, got {shown_value(access)}"
        )
    if effective_from and effective_to and effective_to < effective_from:
        raise InvalidArgumentError("effective_to is before effective_from")
