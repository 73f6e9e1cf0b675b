#!/usr/bin/env python
"""The column layout's cost: ``convert`` with and without ``--columns`` side by side, and the transpose's memory
against the rows.

1. **convert with and without columns.** Generates LIBSVM text with :mod:`blocksvm.datasets` (default 300,000
   rows x 50,000 features x 20 nonzeros), then times ``blocksvm.convert(text, store)`` and ``convert(text, store,
   columns=True)`` in turn, each in a fresh interpreter (imports and numba's loading of its cached kernels before
   the clock starts), ``--repeat`` times each, and prints the medians, their ratio (the target: at most 1.6) and
   each run's peak RSS.
2. **memory flat in rows.** Converts the same features at ``--rows`` and four times as many rows, with row blocks
   of ``--block-mb``, and times ``write_columns`` alone on each with column blocks of the same size; prints the
   peak RSS the transpose added to its process (its peak minus the RSS before it began), which stays flat when
   it does not grow with the rows.

::

    python tools/bench_columns.py                       # about 2 minutes on 2 busy cores
    python tools/bench_columns.py --repeat 5 --jobs 2
    python tools/bench_columns.py --skip-memory --rows 1000000 --features 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=300_000)
    p.add_argument("--features", type=int, default=50_000)
    p.add_argument("--nnz", type=int, default=20, help="mean entries per row")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=3, help="runs of each conversion (medians are shown)")
    p.add_argument("--jobs", type=int, default=None, help="convert's --jobs (default: one a core)")
    p.add_argument("--block-mb", type=float, default=8.0, help="block size of the memory part (MB)")
    p.add_argument(
        "--convert-block-mb", type=float, default=None, help="convert's --block-mb in the timed part (default: its 64)"
    )
    p.add_argument("--skip-memory", action="store_true", help="only time the conversions")
    p.add_argument(
        "--out-dir", type=Path, default=REPO / "bench-out", help="where the data and stores go (default: bench-out/)"
    )
    p.add_argument("--run-one", choices=["convert", "convert-columns", "columns"], help=argparse.SUPPRESS)
    p.add_argument("--input", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--store", type=Path, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def generated(args: argparse.Namespace, rows: int) -> Path:
    """Generated LIBSVM text of ``rows`` rows (reused when it exists)."""
    from blocksvm.datasets import SyntheticSpec, write_libsvm

    path = args.out_dir / f"columns-r{rows}-f{args.features}-nnz{args.nnz}-s{args.seed}.txt"
    if not path.exists():
        print(f"generating {path.name} ...", file=sys.stderr)
        spec = SyntheticSpec(rows=rows, features=args.features, nnz=args.nnz, seed=args.seed)
        write_libsvm(path, spec, progress=False)
    with open(path, "rb") as f:  # the page cache warm for every run
        while f.read(64 << 20):
            pass
    return path


def rss_mb(field: str) -> float:
    """This process's ``VmRSS`` (now) or ``VmHWM`` (its peak), in MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def warm_up(out_dir: Path) -> None:
    """Load numba's cached kernels of convert and of the transpose before the clock starts."""
    from blocksvm import convert

    tiny = out_dir / "warm-up.txt"
    tiny.write_text("1 1:0.5 3:1\n-1 2:0.25\n")
    convert(tiny, out_dir / "warm-up.bsvm", overwrite=True, progress=False, columns=True)
    shutil.rmtree(out_dir / "warm-up.bsvm")
    tiny.unlink()


def run_one(args: argparse.Namespace) -> dict:
    """One timed run in this process: wall and CPU seconds (every thread's) of the work alone, and memory."""
    from blocksvm import convert, write_columns
    from blocksvm.store import BlockStore

    warm_up(args.out_dir)
    before = rss_mb("VmRSS")
    cpu = os.times()
    start = time.perf_counter()
    if args.run_one == "columns":
        summary = write_columns(args.store, block_mb=args.block_mb, jobs=args.jobs)
    else:
        out = args.out_dir / f"bench-{args.run_one}.bsvm"
        shutil.rmtree(out, ignore_errors=True)
        cpu, start = os.times(), time.perf_counter()
        columns = args.run_one == "convert-columns"
        block_mb = args.convert_block_mb
        summary = convert(args.input, out, progress=False, jobs=args.jobs, columns=columns, block_mb=block_mb)
    seconds, now, peak = time.perf_counter() - start, os.times(), rss_mb("VmHWM")
    if args.run_one == "columns":
        result = {"blocks": summary.blocks, "nnz": summary.nnz}
    else:
        layout = BlockStore(out).columns
        result = {"rows": summary.rows, "nnz": summary.nnz, "column_blocks": layout.n_blocks if layout else 0}
        shutil.rmtree(out)
    cpu_seconds = (now.user - cpu.user) + (now.system - cpu.system)
    return {
        **result,
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "peak_rss_mb": peak,
        "added_rss_mb": peak - before,
    }


def child(args: argparse.Namespace, kind: str, **paths) -> dict:
    command = [sys.executable, __file__, "--run-one", kind, "--out-dir", str(args.out_dir)]
    command += ["--block-mb", str(args.block_mb)] + (["--jobs", str(args.jobs)] if args.jobs else [])
    if args.convert_block_mb:
        command += ["--convert-block-mb", str(args.convert_block_mb)]
    for name, path in paths.items():
        command += [f"--{name}", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    if done.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def convert_part(args: argparse.Namespace) -> None:
    text = generated(args, args.rows)
    runs = {"convert": [], "convert-columns": []}
    for _ in range(args.repeat):  # in turn: a load that comes and goes hits both alike
        for kind in runs:
            runs[kind].append(child(args, kind, input=text))
    median = {kind: statistics.median(r["seconds"] for r in found) for kind, found in runs.items()}
    cpu = {kind: statistics.median(r["cpu_seconds"] for r in found) for kind, found in runs.items()}
    print(
        f"\n{args.rows:,} rows x {args.features:,} features x {args.nnz} nnz ({text.stat().st_size / 1e6:,.0f} MB "
        f"of text), {args.repeat} runs each, jobs {args.jobs or os.cpu_count()}, {os.cpu_count()} cores, "
        f"blocks of {args.convert_block_mb or 64:g} MB\n"
    )
    print("| conversion | median s | runs (s) | median CPU s | peak RSS (MB) | column blocks |")
    print("|---|---:|---|---:|---:|---:|")
    for kind, found in runs.items():
        seconds = ", ".join(f"{r['seconds']:.2f}" for r in found)
        peak = max(r["peak_rss_mb"] for r in found)
        name, blocks = kind.replace("-", " --"), found[0]["column_blocks"]
        print(f"| {name} | {median[kind]:.2f} | {seconds} | {cpu[kind]:.2f} | {peak:,.0f} | {blocks} |")
    ratio = median["convert-columns"] / median["convert"]
    cpu_ratio = cpu["convert-columns"] / cpu["convert"]
    print(f"\nconvert --columns / convert: {ratio:.2f}x in time (target: at most 1.6x), {cpu_ratio:.2f}x in CPU time")


def memory_part(args: argparse.Namespace) -> None:
    from blocksvm import convert

    print(f"\nthe transpose alone, row and column blocks of {args.block_mb:g} MB:\n")
    print("| rows | nnz | column blocks | seconds | RSS added by the transpose (MB) |")
    print("|---:|---:|---:|---:|---:|")
    for rows in (args.rows, 4 * args.rows):
        text = generated(args, rows)
        store = args.out_dir / f"columns-memory-r{rows}.bsvm"
        convert(text, store, block_mb=args.block_mb, overwrite=True, progress=False, jobs=args.jobs)
        result = child(args, "columns", store=store)
        print(
            f"| {rows:,} | {result['nnz']:,} | {result['blocks']} | {result['seconds']:.2f} | "
            f"{result['added_rss_mb']:,.0f} |"
        )
        shutil.rmtree(store)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.run_one:
        print(json.dumps(run_one(args)))
        return 0
    convert_part(args)
    if not args.skip_memory:
        memory_part(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
