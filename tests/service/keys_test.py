"""Keys files as people write them: a byte-order mark, another encoding, a key that no
HTTP header can carry. Each either works or stops the server at start with one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest
from support_service import PUBLIC_READ

from kbsearch.errors import InvalidArgumentError
from kbsearch.service.keys import KeyRing


def test_a_byte_order_mark_is_not_part_of_the_first_key(tmp_path: Path) -> None:
    """An editor's UTF-8 byte-order mark made the first key unusable (every request 401)."""
    path = tmp_path / "keys.txt"
    path.write_bytes(f"\ufeff{PUBLIC_READ} public read\n".encode())
    caller = KeyRing.load(path).caller(PUBLIC_READ)
    assert caller is not None and caller.audience == "public"


def test_a_keys_file_that_is_not_utf8_is_a_clear_error(tmp_path: Path) -> None:
    """It raised UnicodeDecodeError: a traceback at start instead of ``error: ...``."""
    path = tmp_path / "keys.txt"
    path.write_bytes(f"{PUBLIC_READ} public read\n".encode() + b"\xff\xfe staff read\n")
    with pytest.raises(InvalidArgumentError, match="not UTF-8"):
        KeyRing.load(path)


def test_a_key_no_header_can_carry_is_refused(tmp_path: Path) -> None:
    """HTTP headers carry printable ASCII (the server reads other bytes as Latin-1): a key
    with other characters was loaded but never matched."""
    path = tmp_path / "keys.txt"
    path.write_text("pübl1c-reader-key-0123456789 public read\n", encoding="utf-8")
    with pytest.raises(InvalidArgumentError, match="printable ASCII"):
        KeyRing.load(path)
