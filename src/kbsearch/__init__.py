"""kbsearch: find the passage that answers a question, and prove it with numbers.

import kbsearch
with kbsearch.open_kb("kb.db", create=True) as kb:
    kb.index(["docs/"], inventory="docs/inventory.csv")
    hits = kb.search("which kit fits the PW-2200", k=5)
"""

from . import errors
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
