#!/usr/bin/env python
"""Conversion throughput: blocksvm vs scikit-learn's and LIBLINEAR's LIBSVM readers, in one run.

Generates a webspam-like LIBSVM file with :mod:`blocksvm.datasets` (or takes ``--input``), then
times, each in a fresh process and on the same page-cached file:

- ``blocksvm.convert``: parse + shuffle + compress + write the block store;
- ``sklearn.datasets.load_svmlight_file``: parse into memory;
- ``liblinear.liblinearutil.svm_read_problem(return_scipy=True)``, if installed.

It prints a markdown table of seconds, MB/s (10**6 bytes of text per second; imports and numba's
one-time loading of its cached kernels are excluded), peak RSS and the speed-up over
scikit-learn::

    python tools/bench_convert.py                      # about 300 MB, a minute or two
    python tools/bench_convert.py --mb 2500 --repeat 2 --compression lzf
    python tools/bench_convert.py --input data/webspam_wc_normalized_trigram.svm
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
READERS = ("blocksvm", "sklearn", "liblinear")
LABELS = {
    "blocksvm": "blocksvm convert (parse+shuffle+compress+write)",
    "sklearn": "sklearn load_svmlight_file",
    "liblinear": "liblinear svm_read_problem (return_scipy=True)",
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", type=Path, help="an existing, uncompressed LIBSVM file (default: generate one)")
    p.add_argument("--mb", type=float, default=300.0, help="size of the generated file (MB)")
    p.add_argument(
        "--features", type=int, default=16_609_143, help="features of the generated data (webspam trigrams: 16,609,143)"
    )
    p.add_argument("--nnz", type=int, default=100, help="mean entries per generated row")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compression", default=None, help="blocksvm store compression")
    p.add_argument(
        "--out-dir",
        type=Path,
        default=REPO / "bench-out",
        help="where the data and the store go (default: bench-out/, git-ignored)",
    )
    p.add_argument("--repeat", type=int, default=1, help="runs per reader; the best is shown")
    p.add_argument("--readers", default=",".join(READERS), help="comma-separated subset")
    p.add_argument("--keep-store", action="store_true", help="keep the converted store")
    p.add_argument("--run-one", choices=READERS, help=argparse.SUPPRESS)  # child mode
    return p.parse_args(argv)


def generated_input(args: argparse.Namespace) -> Path:
    """A webspam-like file of about ``args.mb`` MB, reused when it already exists."""
    from blocksvm.datasets import SyntheticSpec, write_libsvm

    name = f"webspam-like-{args.mb:g}MB-f{args.features}-nnz{args.nnz}-s{args.seed}.txt"
    path = args.out_dir / name
    if path.exists():
        return path
    sample = args.out_dir / (name + ".sample")
    spec = SyntheticSpec(rows=2000, features=args.features, nnz=args.nnz, seed=args.seed)
    bytes_per_row = write_libsvm(sample, spec, progress=False) / spec.rows
    sample.unlink()
    rows = max(1, round(args.mb * 1e6 / bytes_per_row))
    spec = SyntheticSpec(rows=rows, features=args.features, nnz=args.nnz, seed=args.seed)
    print(f"generating {path} ({rows:,} rows) ...", file=sys.stderr)
    write_libsvm(path, spec, progress=None)
    return path


def run_one(reader: str, path: Path, args: argparse.Namespace) -> dict:
    """Time one reader in this process (imports done before the clock starts)."""
    if reader == "blocksvm":
        from blocksvm import convert
        from blocksvm.store.format import DEFAULT_COMPRESSION

        out = args.out_dir / "bench.bsvm"
        shutil.rmtree(out, ignore_errors=True)
        warm_up_blocksvm(args.out_dir)
        start = time.perf_counter()
        summary = convert(path, out, compression=args.compression or DEFAULT_COMPRESSION, progress=False)
        seconds = time.perf_counter() - start
        result = {
            "rows": summary.rows,
            "nnz": summary.nnz,
            "blocks": summary.blocks,
            "store_mb": sum(f.stat().st_size for f in out.iterdir()) / 1e6,
        }
        if not args.keep_store:
            shutil.rmtree(out)
    elif reader == "sklearn":
        from sklearn.datasets import load_svmlight_file

        start = time.perf_counter()
        X, y = load_svmlight_file(str(path))
        seconds = time.perf_counter() - start
        result = {"rows": X.shape[0], "nnz": X.nnz}
    else:
        from liblinear.liblinearutil import svm_read_problem

        start = time.perf_counter()
        y, X = svm_read_problem(str(path), return_scipy=True)
        seconds = time.perf_counter() - start
        result = {"rows": X.shape[0], "nnz": X.nnz}
    return {**result, "seconds": seconds, "peak_rss_mb": peak_rss_mb()}


def peak_rss_mb() -> float:
    """This process's peak RSS. Not ru_maxrss: on Linux it keeps the parent's peak across exec."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def warm_up_blocksvm(out_dir: Path) -> None:
    """Load numba's cached kernels once (a fixed ~0.5 s that would blur small files' rates)."""
    from blocksvm import convert

    tiny = out_dir / "warm-up.txt"
    tiny.write_text("1 1:0.5 3:1\n-1 2:0.25\n")
    convert(tiny, out_dir / "warm-up.bsvm", overwrite=True, progress=False)
    shutil.rmtree(out_dir / "warm-up.bsvm")
    tiny.unlink()


def available(reader: str) -> bool:
    if reader != "liblinear":
        return True
    try:
        import liblinear.liblinearutil  # noqa: F401
    except ImportError:
        return False
    return True


def measure(reader: str, path: Path, args: argparse.Namespace) -> dict | None:
    """Best of ``args.repeat`` runs of ``reader``, each in a fresh interpreter."""
    command = [sys.executable, __file__, "--run-one", reader, "--input", str(path), "--out-dir", str(args.out_dir)]
    if args.compression:
        command += ["--compression", args.compression]
    if args.keep_store:
        command.append("--keep-store")
    runs = []
    for _ in range(args.repeat):
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{reader} failed:\n{done.stderr}", file=sys.stderr)
            return None
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return min(runs, key=lambda r: r["seconds"])


def warm_page_cache(path: Path) -> None:
    with open(path, "rb") as f:
        while f.read(64 << 20):
            pass


def table(results: dict, text_mb: float) -> str:
    base = results.get("sklearn")
    lines = ["| reader | seconds | MB/s | peak RSS (MB) | vs scikit-learn |", "|---|---:|---:|---:|---:|"]
    for reader, r in results.items():
        rate = text_mb / r["seconds"]
        ratio = f"{base['seconds'] / r['seconds']:.2f}x" if base else "n/a"
        lines.append(f"| {LABELS[reader]} | {r['seconds']:.1f} | {rate:.1f} | {r['peak_rss_mb']:,.0f} | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.run_one:
        print(json.dumps(run_one(args.run_one, args.input, args)))
        return 0
    path = args.input or generated_input(args)
    text_mb = path.stat().st_size / 1e6
    warm_page_cache(path)
    results = {}
    for reader in args.readers.split(","):
        if not available(reader):
            print(f"({reader} is not installed: skipped)", file=sys.stderr)
            continue
        print(f"timing {reader} ...", file=sys.stderr)
        result = measure(reader, path, args)
        if result:
            results[reader] = result
    if not results:
        return 1
    rows = {r["rows"] for r in results.values()}
    if len(rows) > 1:
        print(f"warning: the readers disagree on the number of rows: {rows}", file=sys.stderr)
    from blocksvm.store.format import DEFAULT_COMPRESSION

    print(
        f"\n{path.name}: {text_mb:,.0f} MB of text, {next(iter(rows)):,} rows; "
        f"{os.cpu_count()} cores; store compression "
        f"{args.compression or DEFAULT_COMPRESSION}\n"
    )
    print(table(results, text_mb))
    if "blocksvm" in results:
        print(f"\nstore: {results['blocksvm']['blocks']} blocks, {results['blocksvm']['store_mb']:,.0f} MB on disk")
    return 0


if __name__ == "__main__":
    sys.exit(main())
