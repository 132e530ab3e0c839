"""kbsearch: find the passage that answers a question, and prove it with numbers.

import kbsearch
with kbsearch.open_kb("kb.db", create=True) as kb:
    kb.index(["docs/"], inventory="docs/inventory.csv")
    hits = kb.search("which kit fits the PW-2200", k=5)

The names below are imported on first use (PEP 562), so that ``import kbsearch`` (and the
``kbsearch`` command, which must handle Ctrl-C before numpy and the models load) stays light.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from . import errors

if TYPE_CHECKING:
    from .knowledge_base import KnowledgeBase, open_kb
    from .records import Document, Filters, Hit, Passage
    from .rerank.rerankers import RerankSettings

__version__ = "0.1.0"
__all__ = [
    "Document",
    "Filters",
    "Hit",
    "KnowledgeBase",
    "Passage",
    "RerankSettings",
    "errors",
    "open_kb",
]

# where each public name lives, imported by the first ``kbsearch.NAME``
_LAZY = {
    "KnowledgeBase": ".knowledge_base",
    "open_kb": ".knowledge_base",
    "Document": ".records",
    "Filters": ".records",
    "Hit": ".records",
    "Passage": ".records",
    "RerankSettings": ".rerank.rerankers",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kbsearch' has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
