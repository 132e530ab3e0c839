"""Ctrl-C during any `kbsearch` command, while it runs or while its modules import: the one
line `interrupted` on stderr and exit 130, never a traceback (`index` says what it wrote on
that line: tests/cli/index_robustness_test.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import FILES, write_files

import kbsearch

ENV = dict(os.environ, PYTHONPATH=str(Path(kbsearch.__file__).parents[1]))


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("interrupt")
    docs = write_files(root / "docs", FILES)
    with kbsearch.open_kb(root / "kb.db", create=True, embedder="none") as kb:
        assert kb.index([docs], inventory=docs / "inventory.csv").ok
    return str(root / "kb.db")


def open_for_writing(fifo: Path, child: subprocess.Popen[str], timeout: float = 60) -> int:
    """The write end of ``fifo``, once ``child`` has opened it for reading (opening a FIFO
    for writing without blocking fails until a reader has it open): from then on the child
    waits in ``read`` for as long as the write end stays open and nothing is written."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            if child.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def test_ctrl_c_while_a_command_runs_is_one_line_and_130(db: str, tmp_path: Path) -> None:
    fifo = tmp_path / "questions.jsonl"
    os.mkfifo(fifo)
    command = [sys.executable, "-m", "kbsearch", "eval", str(fifo), "--db", db]
    child = subprocess.Popen(
        [*command, "--format", "policy"],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    writer = open_for_writing(fifo, child)  # the command runs: it reads the question set
    try:
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        os.close(writer)
    assert (child.returncode, err, out) == (130, "interrupted\n", "")


# raises KeyboardInterrupt when a module is first imported, as Ctrl-C while it loads would
INTERRUPTED_IMPORT = """
import sys

MODULE = sys.argv[2]

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == MODULE:
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, CtrlC())
sys.argv = ["kbsearch", "stats", "--db", sys.argv[1]]
from kbsearch.cli import main
main()
"""


@pytest.mark.parametrize("module", ["click", "numpy"])  # the first a command needs; the heavy one
def test_ctrl_c_while_the_modules_import_is_one_line_and_130(db: str, module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_IMPORT, db, module],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr, done.stdout) == (130, "interrupted\n", "")


def test_the_command_line_imports_nothing_heavy_before_its_handler() -> None:
    """``import kbsearch`` and ``import kbsearch.cli`` (what the console script runs first)
    load neither click, numpy nor the knowledge base: Ctrl-C then meets
    :func:`kbsearch.cli.main`."""
    check = "import sys, kbsearch, kbsearch.cli; print(sorted(m for m in ('click', 'numpy', "
    check += "'kbsearch.knowledge_base', 'kbsearch.cli.commands') if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", check], env=ENV, capture_output=True, text=True, check=True
    )
    assert done.stdout == "[]\n"


# a worker thread busy for a minute (as the embedder's pool in an ONNX Runtime call), then
# Ctrl-C in the command
BUSY_POOL = """
import sys, time
from concurrent.futures import ThreadPoolExecutor
import kbsearch.cli
entry = kbsearch.cli.main  # the console script's function
import kbsearch.cli.commands as commands
pool = ThreadPoolExecutor(1)
def command():
    pool.submit(time.sleep, 60)
    raise KeyboardInterrupt
commands.cli = command
entry()
"""


def test_an_interrupted_process_does_not_wait_for_busy_worker_threads() -> None:
    """After Ctrl-C the process ends at once with 130: the interpreter's shutdown would join
    the embedder's worker threads, and a second Ctrl-C during that join aborted it."""
    done = subprocess.run(
        [sys.executable, "-c", BUSY_POOL], env=ENV, capture_output=True, text=True, timeout=30
    )
    assert (done.returncode, done.stderr) == (130, "interrupted\n")
