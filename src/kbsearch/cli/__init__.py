"""The command line: thin click commands over the library (:mod:`kbsearch.tasks`,
:mod:`kbsearch.knowledge_base`, :mod:`kbsearch.evaluation`), one error adapter for all."""

from .main import cli, main

__all__ = ["cli", "main"]
