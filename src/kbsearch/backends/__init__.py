"""Where the passages live: the :class:`~kbsearch.retrieve.backend.Backend` protocol the search
pipeline talks to, and its implementations (``sqlite``: the embedded default)."""

from kbsearch.retrieve.backend import Backend, LexicalStatistics

__all__ = ["Backend", "LexicalStatistics"]
