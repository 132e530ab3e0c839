"""The rerankers a search can name, ``NAME`` or ``NAME:ARGUMENT`` (``--rerank`` on the command
line, ``rerank=`` in :meth:`kbsearch.KnowledgeBase.search`), each loaded once per process.

A registry, like the embedders' and the routes': ``name -> (factory(argument) -> PairScorer,
help)``, so the command line's help and the errors list the same names. Built in:

- ``cross-encoder:PATH``: a sentence-transformers ``CrossEncoder`` read from the local folder
  ``PATH`` (never downloaded; ``pip install 'kbsearch[rerank]'``). Pairs longer than the
  model's ``max_length`` tokens are cut by its tokenizer (a reranker reads the passage's
  start). Torch's thread pool is set to ``$KBSEARCH_THREADS`` (default 2) when it loads; on
  the CPU the pairs are scored one at a time (no padding to a batch's longest pair).
  Reference: Nogueira & Cho, "Passage Re-ranking with BERT" (2019), the cross-encoder
  reranking this runs; sentence-transformers' ``CrossEncoder`` is the implementation.

Other rerankers (a plug-in, a test's fake one) are added with :func:`register_reranker`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidArgumentError, RerankerUnavailableError, install_hint, shown_value
from ..threads import scan_threads
from .stage import DEFAULT_BUDGET_MS, DEFAULT_TOP_N, PairScorer, check_settings

INSTALL_HINT = install_hint("rerank")

RerankerFactory = Callable[[str], PairScorer]  # the argument after "NAME:" ("" when none)


@dataclass(frozen=True)
class RerankerKind:
    """A registered reranker: its factory, a one-line help, and whether its spec needs an
    argument (``cross-encoder:PATH``)."""

    factory: RerankerFactory
    help: str
    needs_argument: bool = False


RERANKERS: dict[str, RerankerKind] = {}
_loaded: dict[str, PairScorer] = {}
_lock = threading.Lock()


def register_reranker(
    name: str, factory: RerankerFactory, help: str, *, needs_argument: bool = False
) -> None:
    """Add (or replace) the reranker ``name``; a loaded one of that name is forgotten.

    Raises:
        InvalidArgumentError: a name that is empty or holds ``:`` or a comma.
    """
    if not name or any(c in name for c in ":,") or name != name.strip():
        raise InvalidArgumentError(
            f"a reranker name is a word without ':' or ',', got {shown_value(name)}"
        )
    with _lock:
        RERANKERS[name] = RerankerKind(factory, help, needs_argument)
        for spec in [s for s in _loaded if s.partition(":")[0] == name]:
            del _loaded[spec]


def reranker_names() -> tuple[str, ...]:
    """The registered names, sorted."""
    return tuple(sorted(RERANKERS))


def parse_reranker(spec: object) -> str:
    """``spec`` checked against the registry (stripped); nothing is loaded.

    Raises:
        InvalidArgumentError: not text, an unknown name, or an argument missing.
    """
    text = spec.strip() if isinstance(spec, str) else ""
    name, colon, argument = text.partition(":")
    kind = RERANKERS.get(name)
    if kind is None:
        known = ", ".join(f"{n}:PATH" if RERANKERS[n].needs_argument else n for n in RERANKERS)
        raise InvalidArgumentError(f"unknown reranker {shown_value(spec)}; choose one of: {known}")
    if kind.needs_argument and not argument.strip():
        raise InvalidArgumentError(missing_argument(name, kind.help))
    return f"{name}:{argument.strip()}" if colon else name


def missing_argument(name: str, help: str) -> str:
    """One sentence for a spec without its argument, from a help ``NAME:ARG: what ARG is``
    (e.g. "reranker 'cross-encoder' needs an argument, cross-encoder:PATH, where PATH is a
    sentence-transformers CrossEncoder folder ...")."""
    usage, _, about = help.partition(": ")
    if not usage.startswith(f"{name}:") or not about:
        return f"reranker {shown_value(name)} needs an argument, {name}:ARGUMENT ({help})"
    argument = usage.removeprefix(f"{name}:")
    return f"reranker {shown_value(name)} needs an argument, {usage}, where {argument} is {about}"


def load_reranker(spec: str) -> PairScorer:
    """The scorer ``spec`` names, built on first use and kept for the process (one load per
    spec, whatever the threads).

    Raises:
        InvalidArgumentError: see :func:`parse_reranker`.
        RerankerUnavailableError: its package is missing or its model cannot be read.
    """
    spec = parse_reranker(spec)
    with _lock:
        scorer = _loaded.get(spec)
        if scorer is None:
            name, _, argument = spec.partition(":")
            scorer = RERANKERS[name].factory(argument)
            _loaded[spec] = scorer
        return scorer


def forget_rerankers() -> None:
    """Drop every loaded reranker (the next search loads it again)."""
    with _lock:
        _loaded.clear()


@dataclass(frozen=True)
class RerankSettings:
    """A search's reranking: the reranker's spec, the ``top_n`` passages it rescores and its
    time budget in milliseconds (:mod:`kbsearch.rerank.stage`).

    Raises:
        InvalidArgumentError: see :func:`parse_reranker` and
            :func:`kbsearch.rerank.stage.check_settings`.
    """

    reranker: str
    top_n: int = DEFAULT_TOP_N
    budget_ms: float = DEFAULT_BUDGET_MS

    def __post_init__(self) -> None:
        object.__setattr__(self, "reranker", parse_reranker(self.reranker))
        check_settings(self.top_n, self.budget_ms)
        object.__setattr__(self, "budget_ms", float(self.budget_ms))

    @classmethod
    def of(cls, value: str | RerankSettings | None) -> RerankSettings | None:
        """``None``, settings as given, or a spec with the default ``top_n`` and budget.

        Raises:
            InvalidArgumentError: anything else, or as the class.
        """
        if value is None or isinstance(value, RerankSettings):
            return value
        if isinstance(value, str):
            return cls(value)
        raise InvalidArgumentError(
            f"rerank is a reranker spec or RerankSettings, got {type(value).__name__}"
        )


def _cross_encoder(argument: str) -> PairScorer:
    """A sentence-transformers ``CrossEncoder`` from the local folder ``argument``."""
    folder = Path(argument).expanduser()
    if folder.exists() and not folder.is_dir():
        raise RerankerUnavailableError(
            f"{folder} is a file, not a folder: give the folder of a sentence-transformers"
            " CrossEncoder model (the one holding its config.json)"
        )
    if not folder.is_dir():
        raise RerankerUnavailableError(f"no cross-encoder model folder at {folder}")
    if not (folder / "config.json").is_file():
        raise RerankerUnavailableError(
            f"{folder} holds no model (no config.json): give the folder of a"
            " sentence-transformers CrossEncoder"
        )
    try:
        from sentence_transformers import CrossEncoder
    except ImportError:
        raise RerankerUnavailableError(
            f"the cross-encoder reranker needs sentence-transformers: {INSTALL_HINT}"
        ) from None
    import torch  # both installed with sentence-transformers
    from transformers.utils import logging as transformers_logging

    torch.set_num_threads(scan_threads())
    bars = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()  # no "Loading weights" bar on a search's stderr
    try:
        model = CrossEncoder(str(folder), local_files_only=True)
    except Exception as error:  # transformers raises OSError, ValueError, KeyError... here
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise RerankerUnavailableError(
            f"cannot load a cross-encoder from {folder}: {first}"
        ) from error
    finally:
        if bars:
            transformers_logging.enable_progress_bar()
    labels = getattr(model.config, "num_labels", 1)
    if labels != 1:
        raise RerankerUnavailableError(
            f"{folder} is a classifier with {labels} labels, not a relevance cross-encoder"
            " (one score per pair)"
        )

    # on the CPU one pair at a time: a batch is padded to its longest pair, which cost twice
    # the time per pair on covid_faq_en (docs/benchmarks.md); a GPU takes the whole call
    on_cpu = str(getattr(model, "device", "cpu")).startswith("cpu")

    def score(pairs: Sequence[tuple[str, str]]) -> Sequence[float]:
        size = 1 if on_cpu else max(1, len(pairs))
        values = model.predict([list(p) for p in pairs], batch_size=size, show_progress_bar=False)
        return [float(x) for x in values]

    score([("warm-up", "warm-up")])  # the first call is slow: paid at load, not in a budget
    return score


register_reranker(
    "cross-encoder",
    _cross_encoder,
    f"cross-encoder:PATH: a sentence-transformers CrossEncoder folder ({INSTALL_HINT})",
    needs_argument=True,
)
