#!/usr/bin/env python
"""Conversion throughput: blocksvm vs scikit-learn's and LIBLINEAR's LIBSVM readers, in one run.

Generates a webspam-like LIBSVM file with :mod:`blocksvm.datasets` (or takes ``--input``), then
times, each in a fresh process (a job of tools/harness: its own peak RSS) and on the same page-cached file:

- ``blocksvm.convert``: parse + shuffle + compress + write the block store;
- ``sklearn.datasets.load_svmlight_file``: parse into memory;
- ``liblinear.liblinearutil.svm_read_problem(return_scipy=True)``, if installed.

It prints docs/BENCHMARKS.md's markdown table of seconds, MB/s (10**6 bytes of text per second; imports and numba's
one-time loading of its cached kernels are excluded), peak RSS and the speed-up over scikit-learn; with
``--repeat``, the readers run in turns and the best run of each is shown::

    python tools/bench_convert.py                      # about 300 MB, a minute or two
    python tools/bench_convert.py --mb 2500 --repeat 2 --compression lzf
    python tools/bench_convert.py --input data/webspam_wc_normalized_trigram.svm
    python tools/bench_convert.py --quick              # test the script: 10 MB
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from harness import OUT, data, report, run

READERS = ("blocksvm", "sklearn", "liblinear")
LABELS = {
    "blocksvm": "blocksvm convert (parse + shuffle + compress + write)",
    "sklearn": "scikit-learn `load_svmlight_file`",
    "liblinear": "LIBLINEAR `svm_read_problem`",
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = run.parser(__doc__)
    p.add_argument("--input", type=Path, help="an existing, uncompressed LIBSVM file (default: generate one)")
    p.add_argument("--mb", type=float, default=300.0, help="size of the generated file (MB)")
    p.add_argument(
        "--features", type=int, default=16_609_143, help="features of the generated data (webspam trigrams: 16,609,143)"
    )
    p.add_argument("--nnz", type=int, default=100, help="mean entries per generated row")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compression", default=None, help="blocksvm store compression")
    p.add_argument(
        "--out-dir", type=Path, default=OUT, help="where the data and the store go (default: bench-out/, git-ignored)"
    )
    p.add_argument("--repeat", type=int, default=1, help="runs per reader, in turns; the best is shown")
    p.add_argument("--readers", default=",".join(READERS), help="comma-separated subset")
    p.add_argument("--keep-store", action="store_true", help="keep the converted store")
    run.add_quick(p)
    return run.quick(p, p.parse_args(argv), mb=10.0)


def job_read(reader: str, path: str, out_dir: str, compression: str | None, keep_store: bool) -> dict:
    """Time one reader in this process (imports, and numba's loading of its kernels, done before the clock starts)."""
    if reader == "blocksvm":
        from blocksvm import convert
        from blocksvm.store.format import DEFAULT_COMPRESSION

        out = Path(out_dir) / "bench.bsvm"
        shutil.rmtree(out, ignore_errors=True)
        data.warm_up(Path(out_dir))
        start = time.perf_counter()
        summary = convert(path, out, compression=compression or DEFAULT_COMPRESSION, progress=False)
        seconds = time.perf_counter() - start
        result = {"rows": summary.rows, "nnz": summary.nnz, "blocks": summary.blocks,
                  "store_mb": sum(f.stat().st_size for f in out.iterdir()) / 1e6}  # fmt: skip
        if not keep_store:
            shutil.rmtree(out)
    elif reader == "sklearn":
        from sklearn.datasets import load_svmlight_file

        start = time.perf_counter()
        X, y = load_svmlight_file(path)
        seconds = time.perf_counter() - start
        result = {"rows": X.shape[0], "nnz": X.nnz}
    else:
        from liblinear.liblinearutil import svm_read_problem

        start = time.perf_counter()
        y, X = svm_read_problem(path, return_scipy=True)
        seconds = time.perf_counter() - start
        result = {"rows": X.shape[0], "nnz": X.nnz}
    return {**result, "read_seconds": seconds}


def available(reader: str) -> bool:
    if reader != "liblinear":
        return True
    try:
        import liblinear.liblinearutil  # noqa: F401
    except ImportError:
        return False
    return True


def table(results: dict, text_mb: float) -> str:
    base = results.get("sklearn")
    rows = []
    for reader, r in results.items():
        ratio = f"{base['read_seconds'] / r['read_seconds']:.2f}×" if base else "n/a"
        rows.append([LABELS[reader], f"{r['read_seconds']:.1f}", f"{text_mb / r['read_seconds']:.1f}",
                     f"{r['peak_rss_mb']:,.0f}", ratio])  # fmt: skip
    return report.table(["reader", "seconds", "MB/s", "peak RSS (MB)", "vs scikit-learn"], rows)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    spec = data.spec(rows=1, features=args.features, nnz=args.nnz, seed=args.seed)
    path = args.input or data.sized_text(args.out_dir, args.mb, spec)
    text_mb = data.warm_page_cache(path).stat().st_size / 1e6
    readers = [r for r in args.readers.split(",") if available(r)]
    for reader in set(args.readers.split(",")) - set(readers):
        print(f"({reader} is not installed: skipped)", file=sys.stderr)

    def once(reader: str) -> dict:
        print(f"timing {reader} ...", file=sys.stderr)
        return run.job("read", args.out_dir / f"read-{reader}.log", reader=reader, path=path, out_dir=args.out_dir,
                       compression=args.compression, keep_store=args.keep_store)  # fmt: skip

    runs = run.in_turns(readers, args.repeat, once)
    results = {r: min(done, key=lambda d: d["read_seconds"]) for r, done in runs.items() if "error" not in done[0]}
    if not results:
        return 1
    rows = {r["rows"] for r in results.values()}
    if len(rows) > 1:
        print(f"warning: the readers disagree on the number of rows: {rows}", file=sys.stderr)
    from blocksvm.store.format import DEFAULT_COMPRESSION

    print(report.machine())
    print(f"\n{path.name}: {text_mb:,.0f} MB of text, {next(iter(rows)):,} rows; store compression "
          f"{args.compression or DEFAULT_COMPRESSION}\n")  # fmt: skip
    print(table(results, text_mb))
    if "blocksvm" in results:
        print(f"\nstore: {results['blocksvm']['blocks']} blocks, {results['blocksvm']['store_mb']:,.0f} MB on disk")
    return 0


if __name__ == "__main__":
    run.serve({"read": job_read})
    sys.exit(main())
