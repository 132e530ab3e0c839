"""``kill -9`` of a real ``kbsearch serve`` process in the middle of uploads and deletions:
after a restart (or any writer opening the index) the upload store and the index agree for
every document, and nothing is left over (issue 22).

Two ways of killing: at every step of a write (a server forked from a warmed-up process kills
itself with SIGKILL just before its Nth file-system change, or just after the index commits;
N = 1, 2, ... until a whole sequence of writes runs through), and from outside (``kill -9`` of a
cold ``kbsearch serve`` at a few moments of a stream of uploads). Index without vectors
(``--embedder none``), loopback only, bounded loops.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from support_service import KEYS, STAFF_WRITE, auth

import kbsearch

pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork") or not sys.platform.startswith("linux"), reason="needs Linux fork"
)

# A process that imports the server once, then forks one `kbsearch serve` per line it reads
# ({"args": [...], "log": PATH, "crash_at": N or 0}) and prints its pid. With crash_at = N the
# child kills itself (SIGKILL) just before the Nth file-system change its write thread makes
# (creating or truncating a file, a new folder, a rename, a link, removing a file or an empty
# folder), or just after the index commits a document write or deletion, whichever is Nth.
ZYGOTE = r"""
import builtins, io, json, os, signal, sys, threading
import uvicorn, kbsearch, kbsearch.cli, kbsearch.service.app, kbsearch.service.uploads
from kbsearch.store.documents import Documents

def install(crash_at):
    count = [0]

    def point():
        if threading.current_thread().name.startswith("kbsearch-write"):
            count[0] += 1
            if count[0] == crash_at:
                os.kill(os.getpid(), signal.SIGKILL)

    def before(fn, writes=None):
        def wrapped(*args, **kwargs):
            if writes is None or writes(*args, **kwargs):
                point()
            return fn(*args, **kwargs)
        return wrapped

    def after(fn):
        def wrapped(*args, **kwargs):
            out = fn(*args, **kwargs)
            point()
            return out
        return wrapped

    def writing_mode(file, mode="r", *args, **kwargs):
        return any(c in mode for c in "wax+")

    def writing_flags(path, flags, *args, **kwargs):
        return bool(flags & (os.O_CREAT | os.O_TRUNC))

    def new_folder(path, *args, **kwargs):
        return not os.path.exists(path)

    def empty_folder(path, *args, dir_fd=None, **kwargs):
        try:
            fd = os.open(path, os.O_RDONLY, dir_fd=dir_fd)
        except OSError:
            return False
        try:
            return not os.listdir(fd)
        finally:
            os.close(fd)

    def existing(path, *args, dir_fd=None, **kwargs):
        try:
            os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
            return True
        except OSError:
            return False

    # only the calls that change something count (no mkdir of a folder that exists...)
    os.mkdir = before(os.mkdir, new_folder)
    os.rmdir = before(os.rmdir, empty_folder)
    for name in ("unlink", "remove"):
        setattr(os, name, before(getattr(os, name), existing))
    for name in ("rename", "replace", "link"):
        setattr(os, name, before(getattr(os, name)))
    os.open = before(os.open, writing_flags)
    io.open = before(io.open, writing_mode)
    builtins.open = io.open
    for name in ("write", "delete"):
        setattr(Documents, name, after(getattr(Documents, name)))

def warm_up():
    # one app built, settled and closed: every lazy import and cache in place before any
    # fork (each child then starts in a fraction of a second)
    import tempfile
    import kbsearch.embedders.convert.export, kbsearch.service.pages
    from kbsearch.service.app import create_app
    with tempfile.TemporaryDirectory() as tmp:
        doc = os.path.join(tmp, "warm.md")
        with open(doc, "w") as out:
            out.write("# Warm\n\n## Up\n\nwarm text.\n")
        with kbsearch.open_kb(os.path.join(tmp, "warm.db"), create=True, embedder="none") as kb:
            kb.index([doc])
        app = create_app(os.path.join(tmp, "warm.db"))
        app.state.service.settle()
        app.state.service.engine.close()

warm_up()
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reaped by the system
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.dup2(log, 1)
        os.dup2(log, 2)
        if job["crash_at"]:
            install(job["crash_at"])
        sys.argv = ["kbsearch", *job["args"]]
        try:
            kbsearch.cli.main()
        finally:
            os._exit(0)
    print(pid, flush=True)
"""

MEMO = "# Memo\n\n## Body\n\nThe marker{tag} word is in this upload.\n"


def memo(tag: str) -> bytes:
    return MEMO.format(tag=tag).encode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_serving(url: str, alive: Callable[[], bool], log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if not alive():
            break
        time.sleep(0.05)
    raise AssertionError(f"the server did not start: {log.read_text(errors='replace')[-2000:]}")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (not yet reaped) is dead too
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


def kill(pid: int) -> None:
    """``kill -9``, then wait until the process is gone."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    wait_dead(pid)


def wait_dead(pid: int) -> None:
    deadline = time.monotonic() + 30
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not alive(pid)


@pytest.fixture
def index(tmp_path: Path) -> tuple[Path, Path]:
    """An index without vectors holding one public document, and a keys file."""
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "faq.md").write_text(
        "---\naccess: public\n---\n# FAQ\n\n## Hours\n\nOpen from nine to five.\n"
    )
    db = tmp_path / "kb.db"
    with kbsearch.open_kb(db, create=True, embedder="none") as kb:
        assert kb.index([tmp_path / "corpus"]).added == 1
    keys = tmp_path / "keys.txt"
    keys.write_text(KEYS)
    return db, keys


class Zygote:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.process = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
        )
        self.lives = 0

    def serve(self, db: Path, keys: Path, crash_at: int) -> tuple[int, str]:
        """A forked ``kbsearch serve`` on a free port, serving: its pid and base URL."""
        assert self.process.stdin is not None and self.process.stdout is not None
        port = free_port()
        log = self.folder / f"serve-{self.lives}.log"
        self.lives += 1
        args = ["serve", "--db", str(db), "--keys", str(keys), "--port", str(port)]
        job = {"args": args, "log": str(log), "crash_at": crash_at}
        self.process.stdin.write(json.dumps(job) + "\n")
        self.process.stdin.flush()
        pid = int(self.process.stdout.readline())
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_serving(url, lambda: alive(pid), log)
        except BaseException:
            kill(pid)
            raise
        return pid, url

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture
def zygote(tmp_path: Path) -> Iterator[Zygote]:
    z = Zygote(tmp_path)
    try:
        yield z
    finally:
        z.close()


def agreement(db: Path, when: str = "") -> dict[tuple[str, str], str]:
    """Checks that the upload store and the index agree; returns ``{(doc_id, version):
    marker}`` of the uploaded documents.

    Every uploaded document version's stored file exists, is the only entry of its folder,
    and holds the marker its indexed text holds; every folder and file under the store belongs
    to an indexed document; nothing else (no hidden or temporary entry) is left.
    """
    uploads = Path(str(db) + ".uploads")
    con = sqlite3.connect(db)
    try:
        rows = con.execute(
            "SELECT d.doc_id, d.version, d.source, group_concat(p.text, ' ') FROM documents d"
            " JOIN passages p ON p.document = d.id GROUP BY d.id"
        ).fetchall()
    finally:
        con.close()
    markers: dict[tuple[str, str], str] = {}
    sources = set()
    for doc_id, version, source, text in rows:
        if not source.startswith(str(uploads) + os.sep):
            continue
        path = Path(source)
        assert path.parent == uploads / doc_id / f"v{version}", source
        assert path.is_file(), f"{doc_id} v{version}: the index names {path.name}, not stored"
        stored = [w for w in path.read_text().split() if w.startswith("marker")]
        indexed = [w for w in text.split() if w.startswith("marker")]
        assert stored == indexed, f"{doc_id} v{version}: file {stored}, index {indexed}"
        markers[(doc_id, version)] = indexed[0]
        sources.add(path)
    if not uploads.exists():
        assert not sources
        return markers
    left = sorted(
        str(p.relative_to(uploads))
        for p in uploads.rglob("*")
        if p not in sources and not (p.is_dir() and any(s.is_relative_to(p) for s in sources))
    )
    assert left == [], f"left over in the upload store {when}: {left}"
    return markers


def put(url: str, doc_id: str, name: str, content: bytes) -> httpx.Response:
    return httpx.put(
        f"{url}/documents/{doc_id}",
        files={"file": (name, content)},
        data={"access": "public"},
        headers=auth(STAFF_WRITE),
        timeout=60,
    )


def writes(url: str, life: int) -> Iterator[httpx.Response]:
    """One life's writes: a replacement under the same file name, a first upload, the
    deletion of that first upload (the renamed replacement: the cold test below)."""
    yield put(url, "memo", "memo.md", memo(f"same{life}"))
    yield put(url, f"new{life}", "new.md", memo(f"new{life}"))
    yield httpx.delete(f"{url}/documents/new{life}", headers=auth(STAFF_WRITE), timeout=60)


def test_a_kill_at_every_step_of_a_write_is_finished_or_undone_on_restart(
    index: tuple[Path, Path], zygote: Zygote
) -> None:
    db, keys = index
    pid, url = zygote.serve(db, keys, 0)
    assert put(url, "memo", "memo.md", memo("first")).status_code == 201
    os.kill(pid, signal.SIGKILL)
    wait_dead(pid)
    killed_at: list[tuple[int, int]] = []  # (crash point, write)
    crash_at = 1
    while True:
        assert crash_at < 80, "a write sequence that never ends"
        pid, url = zygote.serve(db, keys, crash_at)
        done = 0
        try:
            agreement(db, f"after the kill at point {crash_at - 1}")  # recovered at start-up
            for response in writes(url, crash_at):
                assert response.status_code in (200, 201), response.text
                done += 1
        except httpx.TransportError:
            wait_dead(pid)
            killed_at.append((crash_at, done))
        else:
            break
        finally:
            kill(pid)
        if crash_at % 3 == 0:
            # a writer opening the index (here, indexing another file) recovers too
            extra = db.parent / f"extra{crash_at}.md"
            extra.write_text(f"# Extra\n\n## Part\n\nextra{crash_at} text.\n")
            with kbsearch.open_kb(db) as kb:
                assert kb.index([extra]).ok
            agreement(db)
        crash_at += 1
    # every write of the sequence was killed somewhere
    assert {done for _, done in killed_at} == {0, 1, 2}, killed_at
    pid, url = zygote.serve(db, keys, 0)
    try:
        markers = agreement(db)
        assert markers.pop(("memo", "1")) == f"marker{'same'}{crash_at}"
        # a first upload or its deletion killed: either whole, or not at all (as checked)
        cut_short = {(f"new{k}", "1") for k, done in killed_at if done >= 1}
        assert set(markers) <= cut_short, sorted(set(markers) - cut_short)
        hits = httpx.get(
            f"{url}/search",
            params={"q": f"marker{'same'}{crash_at}"},
            headers=auth(STAFF_WRITE),
            timeout=30,
        ).json()["hits"]
        assert [h["doc_id"] for h in hits] == ["memo"]
    finally:
        kill(pid)


def server_alive(server: subprocess.Popen[bytes]) -> Callable[[], bool]:
    return lambda: server.poll() is None


DELAYS = (0.01, 0.1)  # seconds from sending the last upload to kill -9
FILLER = " ".join(f"word{i}" for i in range(20_000))  # a last upload that takes a while


def _put_quietly(url: str, content: bytes) -> None:
    with contextlib.suppress(httpx.TransportError):  # killed before it answered
        put(url, "memo", "last.md", content)


def test_kill_9_of_a_cold_kbsearch_serve_during_uploads(
    index: tuple[Path, Path], tmp_path: Path
) -> None:
    """``kill -9`` from outside at a few moments of a stream of uploads, then a restart."""
    db, keys = index
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "kbsearch", "serve", "--db", str(db), "--keys", str(keys)]
    for life, delay in enumerate(DELAYS):
        port = free_port()
        log = tmp_path / f"cold-{life}.log"
        with log.open("wb") as out:
            server = subprocess.Popen(
                [*command, "--port", str(port)], stdout=out, stderr=out, env=env
            )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_serving(url, server_alive(server), log)
            agreement(db)
            for n in range(3):  # uploads answered in full
                tag = f"{life}x{n}"
                assert put(url, "memo", f"m{n}.md", memo(tag)).status_code in (200, 201)
                assert put(url, f"doc{tag}", "d.md", memo(tag)).status_code == 201
            # then one cut short by kill -9, a moment after it was sent
            last = memo(f"{life}last") + f"\n## More\n\n{FILLER}\n".encode()
            cut = threading.Thread(target=_put_quietly, args=(url, last))
            cut.start()
            time.sleep(delay)
            server.send_signal(signal.SIGKILL)
            cut.join(timeout=60)
        finally:
            server.kill()
            server.wait(timeout=30)
    port = free_port()
    log = tmp_path / "cold-last.log"
    with log.open("wb") as out:
        server = subprocess.Popen([*command, "--port", str(port)], stdout=out, stderr=out, env=env)
    try:
        wait_until_serving(f"http://127.0.0.1:{port}", server_alive(server), log)
        markers = agreement(db)
        assert ("memo", "1") in markers and len(markers) == 1 + 3 * len(DELAYS)
    finally:
        server.kill()
        server.wait(timeout=30)
