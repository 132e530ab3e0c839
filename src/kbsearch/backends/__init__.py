"""Where the passages live: the :class:`~kbsearch.backends.base.Backend` protocol the search
pipeline talks to, and its implementations (``sqlite``: the embedded default)."""

from .base import Backend, LexicalStatistics

__all__ = ["Backend", "LexicalStatistics"]
