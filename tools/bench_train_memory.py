#!/usr/bin/env python
"""Training memory: peak RSS on a generated store S and on a store 4x its size, same block size.

Generates both stores directly as blocks (``blocksvm.datasets.make_store``; reused when they
exist), then trains each for a fixed number of outer iterations in its own process (a job of
tools/harness: the peak RSS of the training alone) and prints the peak RSS of each, their ratio,
and the check of issue 3's target::

    peak RSS(4S) <= 1.2 * peak RSS(S) + (the O(rows) difference)

where the O(rows) term is the documented per-row state: ``alpha``, 8 bytes per row per
problem (plus ``w``, 8 bytes per feature, which the two stores share). Everything else the
trainer holds is bounded by the block size: the block being solved, its companion and the
block read ahead::

    python tools/bench_train_memory.py                      # 16 MB blocks, 8 and 32 blocks
    python tools/bench_train_memory.py --blocks 4 --outer 1 # quicker
    python tools/bench_train_memory.py --quick              # test the script: 2 MB blocks

``--largest`` measures the other direction of issue 24: the same data (``--sweep-rows`` rows of
``--nnz`` entries over ``--sweep-features`` distinct features) written with its features spread up
to a largest index of 2^20, 2^24, 2^28 and 2^31 - 1, then ``convert``, ``train`` (dual CD and
Pegasos), ``predict`` (the text file) and ``stream`` (OGD, one pass over the text) each in its own
process (its peak RSS). Memory must stay flat: a sparse space is stored and trained compactly
(docs/FORMAT.md)::

    python tools/bench_train_memory.py --largest
    python tools/bench_train_memory.py --largest --quick    # test the script: 2,000 rows
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from harness import OUT, data, report, run


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = run.parser(__doc__)
    p.add_argument("--block-mb", type=float, default=16.0, help="block size in memory (CSR arrays)")
    p.add_argument("--blocks", type=int, default=8, help="blocks of the store S")
    p.add_argument("--factor", type=int, default=4, help="the larger store has this many times the blocks")
    p.add_argument("--features", type=int, default=1_000_000)
    p.add_argument("--nnz", type=int, default=40, help="mean entries per row")
    p.add_argument("--outer", type=int, default=2, help="outer iterations of each training run")
    p.add_argument("--loss", default="hinge", choices=["hinge", "squared-hinge"])
    p.add_argument(
        "--out-dir",
        type=Path,
        default=OUT / "train-memory",
        help="where the stores go (default: bench-out/, git-ignored)",
    )
    p.add_argument("--remove", action="store_true", help="delete the stores afterwards")
    p.add_argument("--largest", action="store_true", help="peak RSS as the largest feature index grows (issue 24)")
    p.add_argument("--sweep-rows", type=int, default=20_000, help="--largest: rows of the data")
    p.add_argument("--sweep-features", type=int, default=5_000, help="--largest: distinct features the rows use")
    p.add_argument(
        "--sweep-largest",
        type=lambda text: [int(x) for x in text.split(",")],
        default=[2**20, 2**24, 2**28, 2**31 - 1],
        help="--largest: the largest indices, comma-separated",
    )
    run.add_quick(p)
    return run.quick(p, p.parse_args(argv), block_mb=2.0, blocks=2, features=100_000, sweep_rows=2_000,
                     sweep_features=1_000, sweep_largest=[2**20, 2**31 - 1])  # fmt: skip


def block_rows(args: argparse.Namespace) -> int:
    """Rows per block for ``--block-mb``: a row holds nnz (int32 index + float32 value) + 24 bytes."""
    return max(1, round(args.block_mb * 1e6 / (8 * args.nnz + 24)))


def make(args: argparse.Namespace, n_blocks: int) -> Path:
    rows = n_blocks * block_rows(args)
    path = args.out_dir / f"gen-{rows}x{args.features}x{args.nnz}.bsvm"
    print(f"{path.name} ({rows:,} rows, {n_blocks} blocks) ...", file=sys.stderr, flush=True)
    return data.generated_store(path, data.spec(rows, args.features, args.nnz, seed=1), block_rows(args))


def job_train(store: str, outer: int, loss: str) -> dict:
    """Train ``store`` for ``outer`` outer iterations; facts as a dict."""
    from blocksvm.store import BlockStore
    from blocksvm.train import train

    s = BlockStore(store)
    start = time.perf_counter()
    result = train(s, loss=loss, max_outer=outer, tol=0, verbose=0, progress=False)
    return {
        "rows": s.n_rows,
        "blocks": s.n_blocks,
        "features": s.n_features,
        "nnz": s.nnz,
        "block_mb": max(b["rows"] * 24 + b["nnz"] * (4 + s.dtype.itemsize) for b in s.blocks) / 1e6,
        "problems": len(result.model.coef),
        "outer": len(result.history),
        "train_seconds": time.perf_counter() - start,
    }


def measure(store: Path, args: argparse.Namespace) -> dict:
    """Train ``store`` in a job: its facts and peak RSS in MiB."""
    done = run.job("train", args.out_dir / "child.err", store=store, outer=args.outer, loss=args.loss)
    if "error" in done:
        raise RuntimeError(f"training {store} failed: {done['error']}")
    return {**done, "peak_mb": done["peak_rss_mb"]}  # (ru_maxrss / 1024: MiB)


def summary(small: dict, large: dict, args: argparse.Namespace) -> tuple[str, bool]:
    alpha_mb = [8 * r["rows"] * r["problems"] / 2**20 for r in (small, large)]
    w_mb = 8 * (small["features"] + 1) * small["problems"] / 2**20
    bound = 1.2 * small["peak_mb"] + alpha_mb[1] - alpha_mb[0]
    rows = [
        [name, f"{r['rows']:,}", r["blocks"], f"{r['block_mb']:.1f} MB", f"{r['nnz']:,}"]
        + [f"{r['train_seconds']:.1f}", f"{a:.1f} MiB", f"{r['peak_mb']:.1f} MiB"]
        for name, r, a in (("S", small, alpha_mb[0]), (f"{args.factor}S", large, alpha_mb[1]))
    ]
    ok = large["peak_mb"] <= bound
    lines = [
        f"peak RSS of training ({args.loss}, {args.outer} outer iterations, default parameters), each run in a "
        "process of its own (tools/harness: its own peak)",
        "",
        report.table(
            ["store", "rows", "blocks", "largest block in memory", "nnz", "train s", "alpha (8 B/row)", "peak RSS"],
            rows,
        ),  # fmt: skip
        "",
        f"ratio peak RSS({args.factor}S) / peak RSS(S) = {large['peak_mb'] / small['peak_mb']:.3f}",
        f"O(rows) difference (alpha) = {alpha_mb[1] - alpha_mb[0]:.1f} MiB; w (both) = {w_mb:.1f} MiB",
        f"target: {large['peak_mb']:.1f} <= 1.2 x {small['peak_mb']:.1f} + {alpha_mb[1] - alpha_mb[0]:.1f} "
        f"= {bound:.1f} MiB: {'met' if ok else 'NOT met'}",
    ]
    return "\n".join(lines), ok


def write_spread(path: Path, largest: int, args: argparse.Namespace) -> None:
    """The sweep's data: the same rows for every ``largest``, feature ``j`` written as index ``spread[j]``."""
    import numpy as np

    rng = np.random.default_rng(7)
    k = args.sweep_features
    spread = np.unique(np.concatenate([rng.choice(largest - 1, k - 1, replace=False) + 1, [largest]]))
    w_true = rng.standard_normal(k)
    with open(path, "w") as f:
        for _ in range(args.sweep_rows):
            used = np.sort(rng.choice(k, args.nnz, replace=False))
            values = rng.standard_normal(args.nnz)
            label = 1 if values @ w_true[used] > 0 else -1
            f.write(f"{label} " + " ".join(f"{i}:{v:.4f}" for i, v in zip(spread[used], values)) + "\n")


def peak_of(argv: list, where: Path) -> tuple[float, float]:
    """``blocksvm ARGV`` in a process of its own: its peak RSS in MiB and seconds."""
    done = run.command(run.cli(*argv, "-q"), where / "child.err")
    if "error" in done:
        raise RuntimeError(f"blocksvm {' '.join(map(str, argv))} failed: {done['error']}")
    return done["peak_rss_mb"], done["seconds"]


def sweep_largest(args: argparse.Namespace) -> str:
    """Peak RSS of convert, train (dual CD, Pegasos) and predict as the largest index grows, at fixed data."""
    from blocksvm.model import LinearModel

    folder = args.out_dir / "largest"
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for largest in args.sweep_largest:
        text, store = folder / f"spread-{largest}.txt", folder / f"spread-{largest}.bsvm"
        print(f"largest index {largest:,} ...", file=sys.stderr, flush=True)
        write_spread(text, largest, args)
        cells = [peak_of(["convert", text, store, "--overwrite"], folder)]
        for solver in ("dual-cd", "pegasos"):
            model = folder / f"{solver}.h5"
            model.unlink(missing_ok=True)
            cells.append(peak_of(["train", store, model, "--solver", solver, "--max-outer", "10"], folder))
        cells.append(peak_of(["predict", folder / "dual-cd.h5", text], folder))
        (folder / "stream.h5").unlink(missing_ok=True)
        cells.append(peak_of(["stream", text, folder / "stream.h5", "--solver", "ogd"], folder))
        columns = LinearModel.load(folder / "dual-cd.h5").n_features
        rows.append([f"{largest:,}", *(f"{mb:.0f} MiB, {s:.1f} s" for mb, s in cells), f"{columns:,}"])
        if args.remove:
            shutil.rmtree(store)
            text.unlink()
    header = ["largest index", "convert", "train (dual CD)", "train (Pegasos)", "predict (text)", "stream (OGD)",
              "model columns"]  # fmt: skip
    what = f"{args.sweep_rows:,} rows x {args.nnz} nnz over {args.sweep_features:,} distinct features"
    return f"{what}; peak RSS (MiB) and seconds of each command in its own process\n\n" + report.table(header, rows)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    print(report.machine())
    if args.largest:
        print(sweep_largest(args))
        return 0
    stores = [make(args, args.blocks), make(args, args.blocks * args.factor)]
    results = []
    for store in stores:
        print(f"training {store.name} ...", file=sys.stderr, flush=True)
        results.append(measure(store, args))
    text, ok = summary(*results, args)
    print(text)
    if args.remove:
        for store in stores:
            shutil.rmtree(store)
    return 0 if ok else 1


if __name__ == "__main__":
    run.serve({"train": job_train})
    sys.exit(main())
