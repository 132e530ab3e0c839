"""The command line: thin click commands over the library (:mod:`kbsearch.tasks`,
:mod:`kbsearch.knowledge_base`, :mod:`kbsearch.evaluation`), one error adapter for all.

Importing this package is light (not even click): the commands (and click, numpy, the
embedders, the store they import) load in :func:`main`, inside its Ctrl-C handler, or on the
first ``kbsearch.cli.cli``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .commands import cli

__all__ = ["INTERRUPTED", "cli", "interrupted", "main"]

INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell reports it


def interrupted() -> None:
    """Print ``interrupted`` on stderr: what Ctrl-C says (then exit :data:`INTERRUPTED`).
    Plain ``sys.stderr`` (click's ``echo`` writes there too), so that it needs no import
    a Ctrl-C may have cut short."""
    sys.stderr.write("interrupted\n")
    sys.stderr.flush()


def main() -> None:
    """The console script ``kbsearch`` (and ``python -m kbsearch``): Ctrl-C at any point,
    while the commands import or while one runs, prints ``interrupted`` and exits 130
    (:data:`~kbsearch.cli.errors.INTERRUPTED`), never a traceback.

    An interrupted process ends at once (:func:`os._exit`, its output flushed), once the
    command's own clean-up has run: the interpreter's shutdown would join the embedder's
    worker threads (:mod:`concurrent.futures`), one of which may be inside an ONNX Runtime
    call, and a second Ctrl-C during that join aborted the process (SIGABRT, 2 of 4 tries)."""
    try:
        from .commands import cli

        cli()
    except KeyboardInterrupt:  # while importing; a command's own is handled by its group
        interrupted()
        _leave(INTERRUPTED)
    except SystemExit as done:
        if done.code == INTERRUPTED:
            _leave(INTERRUPTED)
        raise


def _leave(status: int) -> None:
    """Exit with ``status`` now, stdout and stderr flushed, without the interpreter's
    shutdown (see :func:`main`)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(status)


def __getattr__(name: str) -> Any:
    if name == "cli":
        from .commands import cli

        return cli
    raise AttributeError(f"module 'kbsearch.cli' has no attribute {name!r}")
