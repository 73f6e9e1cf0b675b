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
    python tools/bench_columns.py --quick              # test the script: 20,000 rows
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

from harness import OUT, data, report, run


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = run.parser(__doc__)
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
    p.add_argument("--out-dir", type=Path, default=OUT, help="where the data and stores go (default: bench-out/)")
    run.add_quick(p)
    return run.quick(p, p.parse_args(argv), rows=20_000, features=10_000, repeat=2, block_mb=1.0)


def generated(args: argparse.Namespace, rows: int) -> Path:
    """Generated LIBSVM text of ``rows`` rows (reused when it exists), in the page cache."""
    path = args.out_dir / f"columns-r{rows}-f{args.features}-nnz{args.nnz}-s{args.seed}.txt"
    return data.warm_page_cache(data.text(path, data.spec(rows, args.features, args.nnz, args.seed)))


def job_one(what: str, out_dir: str, block_mb: float, jobs: int | None, convert_block_mb: float | None,
            source: str | None = None, store: str | None = None) -> dict:  # fmt: skip
    """One timed run in this process: wall and CPU seconds (every thread's) of the work alone, and memory."""
    from blocksvm import convert, write_columns
    from blocksvm.store import BlockStore

    data.warm_up(Path(out_dir), columns=True)
    before = run.peak_rss_mb("VmRSS")
    if what == "columns":
        cpu, start = os.times(), time.perf_counter()
        summary = write_columns(store, block_mb=block_mb, jobs=jobs)
    else:
        out = Path(out_dir) / f"bench-{what}.bsvm"
        shutil.rmtree(out, ignore_errors=True)
        cpu, start = os.times(), time.perf_counter()
        columns = what == "convert-columns"
        summary = convert(source, out, progress=False, jobs=jobs, columns=columns, block_mb=convert_block_mb)
    seconds, now, peak = time.perf_counter() - start, os.times(), run.peak_rss_mb()
    if what == "columns":
        result = {"blocks": summary.blocks, "nnz": summary.nnz}
    else:
        layout = BlockStore(out).columns
        result = {"rows": summary.rows, "nnz": summary.nnz, "column_blocks": layout.n_blocks if layout else 0}
        shutil.rmtree(out)
    cpu_seconds = (now.user - cpu.user) + (now.system - cpu.system)
    return {**result, "work_seconds": seconds, "cpu_seconds": cpu_seconds, "peak": peak, "added_rss_mb": peak - before}


def child(args: argparse.Namespace, kind: str, **paths) -> dict:
    done = run.job("one", args.out_dir / f"columns-{kind}.log", what=kind, out_dir=args.out_dir,
                   block_mb=args.block_mb, jobs=args.jobs, convert_block_mb=args.convert_block_mb, **paths)  # fmt: skip
    if "error" in done:
        raise SystemExit(f"{kind} failed: {done['error']}")
    return done


def convert_part(args: argparse.Namespace) -> None:
    text = generated(args, args.rows)
    runs = run.in_turns(["convert", "convert-columns"], args.repeat, lambda kind: child(args, kind, source=text))
    median = {kind: statistics.median(r["work_seconds"] for r in found) for kind, found in runs.items()}
    cpu = {kind: statistics.median(r["cpu_seconds"] for r in found) for kind, found in runs.items()}
    print(
        f"\n{args.rows:,} rows x {args.features:,} features x {args.nnz} nnz ({text.stat().st_size / 1e6:,.0f} MB "
        f"of text), {args.repeat} runs each, jobs {args.jobs or os.cpu_count()}, {os.cpu_count()} cores, "
        f"blocks of {args.convert_block_mb or 64:g} MB\n"
    )
    rows = []
    for kind, found in runs.items():
        seconds = ", ".join(f"{r['work_seconds']:.2f}" for r in found)
        peak = max(r["peak"] for r in found)
        rows.append([kind.replace("-", " --"), f"{median[kind]:.2f}", seconds, f"{cpu[kind]:.2f}", f"{peak:,.0f}",
                     found[0]["column_blocks"]])  # fmt: skip
    header = ["conversion", "median s", "runs (s)", "median CPU s", "peak RSS (MB)", "column blocks"]
    print(report.table(header, rows, "lrlrrr"))
    ratio = median["convert-columns"] / median["convert"]
    cpu_ratio = cpu["convert-columns"] / cpu["convert"]
    print(f"\nconvert --columns / convert: {ratio:.2f}x in time (target: at most 1.6x), {cpu_ratio:.2f}x in CPU time")


def memory_part(args: argparse.Namespace) -> None:
    from blocksvm import convert

    print(f"\nthe transpose alone, row and column blocks of {args.block_mb:g} MB:\n")
    rows = []
    for n in (args.rows, 4 * args.rows):
        text = generated(args, n)
        store = args.out_dir / f"columns-memory-r{n}.bsvm"
        convert(text, store, block_mb=args.block_mb, overwrite=True, progress=False, jobs=args.jobs)
        result = child(args, "columns", store=store)
        rows.append([f"{n:,}", f"{result['nnz']:,}", result["blocks"], f"{result['work_seconds']:.2f}",
                     f"{result['added_rss_mb']:,.0f}"])  # fmt: skip
        shutil.rmtree(store)
    print(report.table(["rows", "nnz", "column blocks", "seconds", "RSS added by the transpose (MB)"], rows, "rrrrr"))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    print(report.machine(), file=sys.stderr)
    convert_part(args)
    if not args.skip_memory:
        memory_part(args)
    return 0


if __name__ == "__main__":
    run.serve({"one": job_one})
    sys.exit(main())
