"""The bundled demo: a fictional home-and-garden retailer's help centre (``examples/helpcentre``),
indexed into a user data directory, searched, and evaluated against its question set."""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError
from ..records import Filters

DEMO_K = 5  # the cutoff of the demo's evaluation (hit@5...): its question set is small


def examples_dir() -> Path:
    """The installed demo collection (inventory.csv, documents, questions.jsonl)."""
    return Path(str(resources.files("kbsearch") / "examples" / "helpcentre"))


def default_demo_dir() -> Path:
    """``$KBSEARCH_HOME/demo``, else ``$XDG_DATA_HOME/kbsearch/demo``, else
    ``~/.local/share/kbsearch/demo``."""
    if os.environ.get("KBSEARCH_HOME"):
        return Path(os.environ["KBSEARCH_HOME"]) / "demo"
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "kbsearch" / "demo"


def built_elsewhere(db: Path, examples: Path) -> Path | None:
    """The folder a document of the demo index ``db`` was indexed from when it is not
    ``examples`` (the demo run by another checkout or install of kbsearch, which shares the
    data directory), else ``None`` (also when ``db`` does not exist yet).

    Raises:
        InvalidArgumentError: ``db`` holds a document that is no demo file (a file of the
            same name as one of ``examples``' documents): someone's own index, never rebuilt.
    """
    if not db.exists():
        return None
    from ..knowledge_base import open_kb

    here = examples.resolve()
    names = {path.name for path in demo_files(examples)}
    elsewhere = None
    with open_kb(db) as kb:
        for stored in kb.documents():
            source = Path(stored.document.source)
            if source.name not in names:
                raise InvalidArgumentError(
                    f"{db} is not a demo index (it holds {stored.document.doc_id}, from"
                    f" {source}): the demo would replace it; give another --dir"
                )
            if elsewhere is None and not source.resolve().is_relative_to(here):
                elsewhere = source.parent
    return elsewhere


def demo_files(folder: Path | None = None) -> list[Path]:
    """The documents the inventory lists (so the question set is not indexed)."""
    folder = folder or examples_dir()
    with (folder / "inventory.csv").open(encoding="utf-8", newline="") as f:
        return [folder / row["file"] for row in csv.DictReader(f)]


@dataclass(frozen=True)
class ExampleSearch:
    """One example search of the demo, run under one or more labelled filters."""

    title: str
    query: str
    variants: tuple[tuple[str, Filters], ...]


def example_searches(folder: Path | None = None) -> list[ExampleSearch]:
    """Read ``demo_searches.json``: ``[{title, query, variants: [{label, audience, as_of}]}]``."""
    folder = folder or examples_dir()
    raw: list[dict[str, Any]] = json.loads((folder / "demo_searches.json").read_text("utf-8"))
    out = []
    for item in raw:
        variants = tuple(
            (
                str(v["label"]),
                Filters(
                    audience=str(v.get("audience", "public")),
                    as_of=date.fromisoformat(v["as_of"]) if v.get("as_of") else None,
                ),
            )
            for v in item["variants"]
        )
        out.append(ExampleSearch(str(item["title"]), str(item["query"]), variants))
    return out
