"""Heading text to the slug that ends a passage id (``doc_id@vVERSION#slug``); the splitter
(:mod:`kbsearch.index.chunking`) and the judging of hits against relevant sections
(:mod:`kbsearch.evaluation.judging`) both read it."""

from __future__ import annotations

import re
import unicodedata

_NON_ALNUM = re.compile(r"[\W_]+")


def slugify(text: str) -> str:
    """Heading text to an id slug: NFKD, combining marks dropped, lowercase, every run of
    non-alphanumeric characters replaced by ``-``, ``-`` stripped at both ends.
    ``"Retours & remboursements"`` -> ``"retours-remboursements"``. May return ``""``."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _NON_ALNUM.sub("-", bare.lower()).strip("-")
