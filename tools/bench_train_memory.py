#!/usr/bin/env python
"""Training memory: peak RSS on a generated store S and on a store 4x its size, same block size.

Generates both stores directly as blocks (``blocksvm.datasets.make_store``; reused when they
exist), then trains each for a fixed number of outer iterations in its own process under
``/usr/bin/time -v`` (``os.wait4``'s rusage where that program is missing) and prints the
peak RSS of each, their ratio, and the check of issue 3's target::

    peak RSS(4S) <= 1.2 * peak RSS(S) + (the O(rows) difference)

where the O(rows) term is the documented per-row state: ``alpha``, 8 bytes per row per
problem (plus ``w``, 8 bytes per feature, which the two stores share). Everything else the
trainer holds is bounded by the block size: the block being solved, its companion and the
block read ahead::

    python tools/bench_train_memory.py                      # 16 MB blocks, 8 and 32 blocks
    python tools/bench_train_memory.py --blocks 4 --outer 1 # quicker

``--largest`` measures the other direction of issue 24: the same data (``--sweep-rows`` rows of
``--nnz`` entries over ``--sweep-features`` distinct features) written with its features spread up
to a largest index of 2^20, 2^24, 2^28 and 2^31 - 1, then ``convert``, ``train`` (dual CD and
Pegasos), ``predict`` (the text file) and ``stream`` (OGD, one pass over the text) each in its own
process, peak RSS from ``os.wait4``'s rusage. Memory must stay flat: a sparse space is stored and
trained compactly (docs/FORMAT.md)::

    python tools/bench_train_memory.py --largest
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TIME = "/usr/bin/time"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
        default=REPO / "bench-out" / "train-memory",
        help="where the stores go (default: bench-out/, git-ignored)",
    )
    p.add_argument("--remove", action="store_true", help="delete the stores afterwards")
    p.add_argument("--train-one", type=Path, help=argparse.SUPPRESS)  # child mode
    p.add_argument("--largest", action="store_true", help="peak RSS as the largest feature index grows (issue 24)")
    p.add_argument("--sweep-rows", type=int, default=20_000, help="--largest: rows of the data")
    p.add_argument("--sweep-features", type=int, default=5_000, help="--largest: distinct features the rows use")
    p.add_argument(
        "--sweep-largest",
        type=lambda text: [int(x) for x in text.split(",")],
        default=[2**20, 2**24, 2**28, 2**31 - 1],
        help="--largest: the largest indices, comma-separated",
    )
    return p.parse_args(argv)


def block_rows(args: argparse.Namespace) -> int:
    """Rows per block for ``--block-mb``: a row holds nnz (int32 index + float32 value) + 24 bytes."""
    return max(1, round(args.block_mb * 1e6 / (8 * args.nnz + 24)))


def make(args: argparse.Namespace, n_blocks: int) -> Path:
    from blocksvm.datasets import SyntheticSpec, make_store

    rows = n_blocks * block_rows(args)
    path = args.out_dir / f"gen-{rows}x{args.features}x{args.nnz}.bsvm"
    if (path / "manifest.json").exists():
        return path
    print(f"generating {path.name} ({rows:,} rows, {n_blocks} blocks) ...", file=sys.stderr, flush=True)
    spec = SyntheticSpec(rows=rows, features=args.features, nnz=args.nnz, seed=1)
    make_store(path, spec, block_rows=block_rows(args), overwrite=True, progress=False)
    return path


def train_one(store: Path, args: argparse.Namespace) -> dict:
    """Child: train ``store`` for ``args.outer`` outer iterations; facts as a dict."""
    from blocksvm.store import BlockStore
    from blocksvm.train import train

    s = BlockStore(store)
    start = time.perf_counter()
    result = train(s, loss=args.loss, max_outer=args.outer, tol=0, verbose=0, progress=False)
    return {
        "rows": s.n_rows,
        "blocks": s.n_blocks,
        "features": s.n_features,
        "nnz": s.nnz,
        "block_mb": max(b["rows"] * 24 + b["nnz"] * (4 + s.dtype.itemsize) for b in s.blocks) / 1e6,
        "problems": len(result.model.coef),
        "outer": len(result.history),
        "seconds": time.perf_counter() - start,
    }


def measure(store: Path, args: argparse.Namespace) -> dict:
    """Run a child on ``store``; its facts and peak RSS in MiB."""
    command = [sys.executable, __file__, "--train-one", str(store), "--outer", str(args.outer), "--loss", args.loss]
    out, err = args.out_dir / "child.out", args.out_dir / "child.err"
    if os.path.exists(TIME):
        timing = args.out_dir / "time.txt"
        command, how = [TIME, "-v", "-o", str(timing), *command], "/usr/bin/time -v"
    else:
        how = "os.wait4 rusage"
    with open(out, "w") as stdout, open(err, "w") as stderr:
        child = subprocess.Popen(command, stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"training {store} failed:\n{err.read_text()}")
    peak_kb = usage.ru_maxrss
    if how.startswith("/usr/bin/time"):
        peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", timing.read_text()).group(1))
    facts = json.loads(out.read_text().strip().splitlines()[-1])
    return {**facts, "peak_mb": peak_kb / 1024, "how": how}


def report(small: dict, large: dict, args: argparse.Namespace) -> tuple[str, bool]:
    alpha_mb = [8 * r["rows"] * r["problems"] / 2**20 for r in (small, large)]
    w_mb = 8 * (small["features"] + 1) * small["problems"] / 2**20
    bound = 1.2 * small["peak_mb"] + alpha_mb[1] - alpha_mb[0]
    lines = [
        f"peak RSS of training ({args.loss}, {args.outer} outer iterations, default parameters), "
        f"measured with {small['how']}",
        "",
        "| store | rows | blocks | largest block in memory | nnz | train s | alpha (8 B/row) | peak RSS |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r, a in (("S", small, alpha_mb[0]), (f"{args.factor}S", large, alpha_mb[1])):
        lines.append(
            f"| {name} | {r['rows']:,} | {r['blocks']} | {r['block_mb']:.1f} MB | {r['nnz']:,} "
            f"| {r['seconds']:.1f} | {a:.1f} MiB | {r['peak_mb']:.1f} MiB |"
        )
    ok = large["peak_mb"] <= bound
    lines += [
        "",
        f"ratio peak RSS({args.factor}S) / peak RSS(S) = {large['peak_mb'] / small['peak_mb']:.3f}",
        f"O(rows) difference (alpha) = {alpha_mb[1] - alpha_mb[0]:.1f} MiB; w (both) = {w_mb:.1f} MiB",
        f"target: {large['peak_mb']:.1f} <= 1.2 x {small['peak_mb']:.1f} + {alpha_mb[1] - alpha_mb[0]:.1f} "
        f"= {bound:.1f} MiB: {'met' if ok else 'NOT met'}",
    ]
    return "\n".join(lines), ok


CLI = "import sys; from blocksvm.cli import main; sys.exit(main(sys.argv[1:]))"


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


def peak_of(argv: list[str], where: Path) -> tuple[float, float]:
    """Run the CLI with ``argv`` in a child process: its peak RSS in MiB (``os.wait4``) and seconds."""
    start = time.perf_counter()
    with open(where / "child.err", "w") as stderr:
        child = subprocess.Popen([sys.executable, "-c", CLI, *argv, "-q"], stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"blocksvm {' '.join(argv)} failed:\n{(where / 'child.err').read_text()}")
    return usage.ru_maxrss / 1024, time.perf_counter() - start


def sweep_largest(args: argparse.Namespace) -> str:
    """Peak RSS of convert, train (dual CD, Pegasos) and predict as the largest index grows, at fixed data."""
    folder = args.out_dir / "largest"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        f"{args.sweep_rows:,} rows x {args.nnz} nnz over {args.sweep_features:,} distinct features; peak RSS "
        "(MiB) and seconds of each command in its own process (os.wait4)",
        "",
        "| largest index | convert | train (dual CD) | train (Pegasos) | predict (text) | stream (OGD) "
        "| model columns |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for largest in args.sweep_largest:
        text, store = folder / f"spread-{largest}.txt", folder / f"spread-{largest}.bsvm"
        print(f"largest index {largest:,} ...", file=sys.stderr, flush=True)
        write_spread(text, largest, args)
        cells = [peak_of(["convert", str(text), str(store), "--overwrite"], folder)]
        for solver in ("dual-cd", "pegasos"):
            model = folder / f"{solver}.h5"
            model.unlink(missing_ok=True)
            cells.append(peak_of(["train", str(store), str(model), "--solver", solver, "--max-outer", "10"], folder))
        cells.append(peak_of(["predict", str(folder / "dual-cd.h5"), str(text)], folder))
        (folder / "stream.h5").unlink(missing_ok=True)
        cells.append(peak_of(["stream", str(text), str(folder / "stream.h5"), "--solver", "ogd"], folder))
        from blocksvm.model import LinearModel

        columns = LinearModel.load(folder / "dual-cd.h5").n_features
        row = " | ".join(f"{mb:.0f} MiB, {s:.1f} s" for mb, s in cells)
        lines.append(f"| {largest:,} | {row} | {columns:,} |")
        if args.remove:
            shutil.rmtree(store)
            text.unlink()
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.train_one:
        print(json.dumps(train_one(args.train_one, args)))
        return 0
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.largest:
        print(sweep_largest(args))
        return 0
    stores = [make(args, args.blocks), make(args, args.blocks * args.factor)]
    results = []
    for store in stores:
        print(f"training {store.name} ...", file=sys.stderr, flush=True)
        results.append(measure(store, args))
    text, ok = report(*results, args)
    print(text)
    if args.remove:
        for store in stores:
            shutil.rmtree(store)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
