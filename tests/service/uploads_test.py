"""The upload store on a full disk (issue 22): a ``PUT`` that cannot be written keeps the
current version's stored file and its indexed text, answers 503 ``{"error": ...}``, and leaves
nothing behind. On a real full file system (a small tmpfs, where this machine lets the tests
mount one) and through a fault-injecting writer that always runs."""

from __future__ import annotations

import errno
import os
import pathlib
import shutil
import sqlite3
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support_service import STAFF_WRITE, auth

import kbsearch
from kbsearch.errors import StorageFullError
from kbsearch.service.uploads import Upload, write_upload

ORIGINAL = b"# Memo\n\n## Body\n\nThe markeroriginal word is in the first upload.\n"


def big_upload(tag: str, kib: int) -> bytes:
    """A Markdown upload of about ``kib`` KiB, with ``marker<tag>`` in its first passage."""
    words = " ".join(f"w{i}x{tag}" for i in range(kib * 1024 // 10))
    return f"# Memo\n\n## Body\n\nThe marker{tag} word.\n\n## More\n\n{words}\n".encode()


def put(url: str, content: bytes, name: str = "memo.md") -> httpx.Response:
    return httpx.put(
        f"{url}/documents/memo",
        files={"file": (name, content)},
        data={"access": "public"},
        headers=auth(STAFF_WRITE),
        timeout=60,
    )


def indexed_markers(db: Path) -> list[str]:
    con = sqlite3.connect(db)
    try:
        texts = [r[0] for r in con.execute("SELECT text FROM passages WHERE doc_id = 'memo'")]
    finally:
        con.close()
    return sorted({w for t in texts for w in t.split() if w.startswith("marker")})


def store_entries(db: Path) -> list[str]:
    uploads = Path(str(db) + ".uploads")
    return sorted(str(p.relative_to(uploads)) for p in uploads.rglob("*"))


def lexical_index(db: Path, corpus: Path) -> None:
    corpus.mkdir()
    (corpus / "faq.md").write_text(
        "---\naccess: public\n---\n# FAQ\n\n## Hours\n\nOpen from nine to five.\n"
    )
    with kbsearch.open_kb(db, create=True, embedder="none") as kb:
        assert kb.index([corpus]).added == 1


def assert_unchanged(db: Path, response: httpx.Response) -> None:
    """The failed PUT's answer and what it left: the first upload, as it was."""
    assert response.status_code == 503, response.text
    assert response.headers["content-type"] == "application/json"
    assert "full" in response.json()["error"]
    stored = Path(str(db) + ".uploads") / "memo" / "v1" / "memo.md"
    assert stored.read_bytes() == ORIGINAL
    assert indexed_markers(db) == ["markeroriginal"]
    assert store_entries(db) == ["memo", "memo/v1", "memo/v1/memo.md"]


# -- a real full file system -------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MiB tmpfs mounted for the test (skipped where mounting is not permitted)."""
    where = tmp_path / "disk"
    where.mkdir()
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` but ``leave`` bytes (rounded to pages) with a file; returns the file."""
    filler = disk / f"filler-{uuid.uuid4().hex}"
    chunk = b"\0" * 65536
    with filler.open("wb") as out:
        try:
            while True:
                out.write(chunk)
                out.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    with filler.open("r+b") as out:
        out.truncate(max(0, filler.stat().st_size - leave))
    return filler


@pytest.mark.parametrize(
    ("room", "what"),
    [(8 * 1024, "the file"), (256 * 1024, "the index")],
    ids=["no-room-for-the-file", "no-room-for-the-index"],
)
def test_a_full_disk_during_put_keeps_the_stored_file_and_the_index(
    small_disk: Path, serve: Callable[..., Any], keys_file: Path, tmp_path: Path,
    room: int, what: str,
) -> None:  # fmt: skip
    db = small_disk / "kb.db"
    lexical_index(db, tmp_path / "corpus")
    server = serve(db, keys=keys_file, embedder=None)
    assert put(server.url, ORIGINAL).status_code == 201
    update = big_upload("new", 150)
    filler = fill(small_disk, leave=room)
    assert_unchanged(db, put(server.url, update))
    assert_unchanged(db, put(server.url, update, name="other.md"))
    filler.unlink()  # room again: the same upload goes through
    assert put(server.url, update).status_code == 200
    assert indexed_markers(db) == ["markernew"]
    assert (Path(str(db) + ".uploads") / "memo" / "v1" / "memo.md").read_bytes() == update
    assert store_entries(db) == ["memo", "memo/v1", "memo/v1/memo.md"]


# -- a fault-injecting writer (runs everywhere) -------------------------------------------------


class FullDisk:
    """Writes to files under ``folder`` stop once ``free`` bytes are spent, with ENOSPC (as a
    full disk does, after a partial write), whichever call writes them: ``os.write`` on a
    file opened with ``os.open``, or ``Path.write_bytes``/``write_text``."""

    def __init__(self, folder: Path, free: int) -> None:
        self.folder = str(folder.absolute())
        self.free = free
        self.fds: set[int] = set()

    def under(self, path: Any) -> bool:
        return os.path.abspath(os.fspath(path)).startswith(self.folder + os.sep)

    def spend(self, data: bytes) -> int:
        n = min(len(data), self.free)
        self.free -= n
        return n

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real_open, real_write, real_close = os.open, os.write, os.close
        real_write_bytes = pathlib.Path.write_bytes

        def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            fd = real_open(path, flags, *args, **kwargs)
            if self.under(path) and flags & (os.O_WRONLY | os.O_RDWR):
                self.fds.add(fd)
            return fd

        def write(fd: int, data: Any) -> int:
            if fd not in self.fds:
                return real_write(fd, data)
            data = bytes(data)
            n = self.spend(data)
            if n == 0 and data:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real_write(fd, data[:n])

        def close(fd: int) -> None:
            self.fds.discard(fd)
            real_close(fd)

        def write_bytes(path: pathlib.Path, data: Any) -> int:
            if not self.under(path):
                return real_write_bytes(path, data)
            data = bytes(data)
            n = self.spend(data)
            real_write_bytes(path, data[:n])
            if n < len(data):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
            return n

        def write_text(path: pathlib.Path, text: str, encoding: str | None = None,
                       errors: str | None = None, newline: str | None = None) -> int:  # fmt: skip
            return write_bytes(path, text.encode(encoding or "utf-8", errors or "strict"))

        monkeypatch.setattr(os, "open", open_)
        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(os, "close", close)
        monkeypatch.setattr(pathlib.Path, "write_bytes", write_bytes)
        monkeypatch.setattr(pathlib.Path, "write_text", write_text)


@pytest.mark.parametrize("free", [0, 100, 16384])
@pytest.mark.parametrize("name", ["memo.md", "renamed.md"])
def test_a_put_that_runs_out_of_disk_is_503_and_changes_nothing(
    serve: Callable[..., Any], keys_file: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, free: int, name: str,
) -> None:  # fmt: skip
    db = tmp_path / "kb.db"
    lexical_index(db, tmp_path / "corpus")
    server = serve(db, keys=keys_file, embedder=None)
    assert put(server.url, ORIGINAL).status_code == 201
    disk = FullDisk(Path(str(db) + ".uploads"), free)
    disk.install(monkeypatch)
    assert_unchanged(db, put(server.url, big_upload("new", 64), name=name))
    monkeypatch.undo()
    assert put(server.url, big_upload("new", 64), name=name).status_code == 200
    assert indexed_markers(db) == ["markernew"]
    assert store_entries(db) == ["memo", "memo/v1", f"memo/v1/{name}"]


def test_a_first_upload_that_runs_out_of_disk_leaves_no_folder(
    serve: Callable[..., Any], keys_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "kb.db"
    lexical_index(db, tmp_path / "corpus")
    server = serve(db, keys=keys_file, embedder=None)
    FullDisk(Path(str(db) + ".uploads"), 1000).install(monkeypatch)
    response = put(server.url, big_upload("new", 64))
    assert response.status_code == 503, response.text
    assert "full" in response.json()["error"]
    assert not Path(str(db) + ".uploads").exists()
    assert indexed_markers(db) == []


def test_an_index_that_cannot_grow_keeps_the_stored_file(tmp_path: Path) -> None:
    """The index's own full disk (SQLite's page limit here): the stored file stays too."""
    db = tmp_path / "kb.db"
    lexical_index(db, tmp_path / "corpus")
    with kbsearch.open_kb(db) as kb:
        write_upload(kb, Upload("memo", "memo.md", ORIGINAL, access="public"))
        pages = kb.store.database.connection.execute("PRAGMA page_count").fetchone()[0]
        kb.store.database.connection.execute(f"PRAGMA max_page_count = {pages + 2}")
        with pytest.raises(StorageFullError):
            write_upload(kb, Upload("memo", "memo.md", big_upload("new", 200), access="public"))
    stored = Path(str(db) + ".uploads") / "memo" / "v1" / "memo.md"
    assert stored.read_bytes() == ORIGINAL
    assert indexed_markers(db) == ["markeroriginal"]
    assert store_entries(db) == ["memo", "memo/v1", "memo/v1/memo.md"]
