"""Where the passages live: the :class:`~kbsearch.search.backend.Backend` protocol the search
pipeline talks to, and its implementations (``sqlite``: the embedded default)."""

from kbsearch.search.backend import Backend, LexicalStatistics

__all__ = ["Backend", "LexicalStatistics"]
