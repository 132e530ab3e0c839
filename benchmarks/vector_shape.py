"""How hard a set of vectors is for nearest-neighbour search: real E5 vectors beside the
synthetic ones of ``benchmarks/qdrant_scale.py``.

    OPENBLAS_NUM_THREADS=1 python benchmarks/vector_shape.py [--db X.db ...] \
        [--synthetic 6015,100000]

For each set (an index's stored passage vectors, read-only, and each synthetic distribution),
500 vectors (a quarter of a smaller set) held out as queries against the rest:

- mean cosine of the nearest and the 10th nearest neighbour, and of a random pair;
- relative contrast: mean distance to a random vector over mean distance to the 10th
  neighbour (He, Kumar & Chang, "On the difficulty of nearest neighbor search", ICML 2012;
  the closer to 1, the harder);
- local intrinsic dimension by TwoNN, 1 / mean ln(r2 / r1) over the queries (Facco et al.,
  "Estimating the intrinsic dimension of datasets by a minimal neighborhood information",
  Scientific Reports 2017; HNSW's recall falls as it grows);
- principal components holding 90 % of the variance (global spread).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from qdrant_scale import synthetic_vectors  # noqa: E402


def describe(name: str, vectors: np.ndarray, rng: np.random.Generator) -> str:
    x = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    held = rng.choice(len(x), min(500, len(x) // 4), replace=False)
    rest = np.ones(len(x), dtype=bool)
    rest[held] = False
    sims = x[held] @ x[rest].T
    top = -np.sort(-sims, axis=1)[:, :10]
    dist = np.sqrt(np.maximum(2 - 2 * top, 1e-12))
    twonn = 1 / np.mean(np.log(dist[:, 1] / dist[:, 0]))
    contrast = np.sqrt(2 - 2 * sims.mean()) / dist[:, 9].mean()
    centred = x[rest] - x[rest].mean(axis=0)
    variance = np.linalg.svd(centred, compute_uv=False) ** 2
    pcs = int(np.searchsorted(np.cumsum(variance) / variance.sum(), 0.9)) + 1
    return (
        f"| {name} | {len(x):,} | {top[:, 0].mean():.3f} | {top[:, 9].mean():.3f} | "
        f"{sims.mean():.3f} | {contrast:.2f} | {twonn:.1f} | {pcs} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, action="append", default=[])
    parser.add_argument(
        "--synthetic", default="6015,100000", help="sizes drawn of each synthetic distribution"
    )
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(
        "| vectors | n | cos 1st | cos 10th | cos random | contrast | TwoNN dim | PCs 90 % |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    for db in args.db:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            rows = con.execute("SELECT vector FROM vectors").fetchall()
        vectors = np.stack([np.frombuffer(r[0], dtype=np.float32) for r in rows])
        print(describe(f"E5 {db.stem}", vectors, rng), flush=True)
    for size in [int(x) for x in args.synthetic.split(",") if x]:
        for distribution in ("latent", "clustered", "uniform"):
            vectors = synthetic_vectors(size, distribution, np.random.default_rng(1))
            print(describe(f"synthetic {distribution}", vectors, rng), flush=True)


if __name__ == "__main__":
    main()
