"""API keys: who is calling, which audience they search as, and whether they may write.

A keys file has one key per line, ``KEY AUDIENCE ACCESS`` separated by spaces, where AUDIENCE
is ``public`` or ``staff`` and ACCESS is ``read`` or ``write`` (``write`` needs
``staff``); ``#`` starts a comment. A key is at least 16 printable ASCII characters (what an
HTTP header carries); one written ``sha256:HEX`` is stored as the SHA-256 of the real key, so
the file need not hold it::

    # key                                   audience  access
    pub-widget-7f3c9a-0d41                  public    read
    sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8  staff  write

The audience comes from the key only, never from a request parameter. Keys are compared in
constant time (:func:`hmac.compare_digest` over SHA-256 digests, every entry checked) and are
never logged or echoed.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidArgumentError

AUDIENCES = ("public", "staff")
ACCESS = ("read", "write")


@dataclass(frozen=True)
class Caller:
    """Who a request comes from: its audience, whether it may write, and a label for logs
    (``key N``: the key's line number, never the key)."""

    audience: str
    can_write: bool
    label: str


ANONYMOUS = Caller(audience="public", can_write=False, label="anonymous")


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


@dataclass(frozen=True)
class _Entry:
    digest: bytes
    caller: Caller


class KeyRing:
    """The keys of a keys file; :meth:`caller` finds who presented a key.

    Raises (``load``):
        InvalidArgumentError: the file is missing, a line is malformed, an audience or access
            word is unknown, a sha256 entry is not 64 hex digits, or a key repeats.
    """

    def __init__(self, entries: list[_Entry]) -> None:
        self._entries = entries

    @classmethod
    def load(cls, path: str | Path) -> KeyRing:
        file = Path(path)
        try:  # utf-8-sig: an editor's byte-order mark is not part of the first key
            lines = file.read_text(encoding="utf-8-sig").splitlines()
        except OSError as exc:
            raise InvalidArgumentError(f"cannot read keys file {file}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise InvalidArgumentError(f"keys file {file} is not UTF-8 text") from None
        entries: list[_Entry] = []
        for number, raw in enumerate(lines, start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            where = f"{file}, line {number}"
            if len(parts) != 3:
                raise InvalidArgumentError(f"{where}: expected 'KEY AUDIENCE read|write'")
            key, audience, access = parts
            if audience not in AUDIENCES:
                raise InvalidArgumentError(f"{where}: audience must be public or staff")
            if access not in ACCESS:
                raise InvalidArgumentError(f"{where}: access must be read or write")
            if access == "write" and audience != "staff":
                # a writer sees what it replaces: staff only, so no public key can overwrite
                # (or probe) a staff document
                raise InvalidArgumentError(f"{where}: a write key must have the staff audience")
            if key.startswith("sha256:"):
                try:
                    digest = bytes.fromhex(key.removeprefix("sha256:"))
                except ValueError:
                    digest = b""
                if len(digest) != 32:
                    raise InvalidArgumentError(f"{where}: sha256: needs 64 hex digits")
            else:
                if len(key) < 16:
                    raise InvalidArgumentError(f"{where}: a key needs at least 16 characters")
                if not (key.isascii() and key.isprintable()):  # what a header can carry
                    raise InvalidArgumentError(f"{where}: a key must be printable ASCII")
                digest = _digest(key)
            if any(hmac.compare_digest(digest, e.digest) for e in entries):
                raise InvalidArgumentError(f"{where}: this key is already listed")
            entries.append(_Entry(digest, Caller(audience, access == "write", f"key {number}")))
        if not entries:
            raise InvalidArgumentError(f"{file} lists no keys")
        return cls(entries)

    def caller(self, key: str) -> Caller | None:
        """The caller a key belongs to, or ``None``. Every entry is compared (constant time
        in the key and in which entry matches)."""
        presented = _digest(key)
        found: Caller | None = None
        for entry in self._entries:
            if hmac.compare_digest(presented, entry.digest):
                found = entry.caller
        return found

    def __len__(self) -> int:
        return len(self._entries)
