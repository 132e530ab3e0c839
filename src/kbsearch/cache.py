"""Where kbsearch keeps what it derives once per machine: the converted models
(:mod:`kbsearch.embedders.convert.export`) and the unpacked language model
(:mod:`kbsearch.text.langid_model`)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$KBSEARCH_CACHE``, else ``$XDG_CACHE_HOME/kbsearch``, else ``~/.cache/kbsearch``."""
    env = os.environ.get("KBSEARCH_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "kbsearch"
