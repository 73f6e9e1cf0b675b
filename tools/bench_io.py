#!/usr/bin/env python
"""Reading and converting on several cores (issue 31, items 1 and 3), side by side in one run.

On tools/bench_parallel.py's store (400,000 generated rows x 100,000 features x 60 nonzeros, power-law feature
popularity, 8 blocks of 50,000 rows, blosc-lz4; made here from its text when missing, page cache warm):

- **read**: every block read once, in store order, by ``iter_blocks`` as training reads them: ``h5py``, the read
  before this change (h5py reads and decodes every array under its lock, one block at a time in a reader thread),
  against the chunks decoded outside HDF5 on 1, 2, ... ``read_threads``, with ``prefetch`` 1 and 2 blocks in flight.
  MB/s are megabytes (10**6 bytes) of decoded arrays a second; "cores busy" is the process's CPU seconds over the
  wall seconds (2 where two threads ran side by side all along);
- **train**: dual CD (hinge, C = 1, no bias), ``--passes`` passes, with ``read_threads`` 1 and 2: the history's
  read and wait seconds per pass (the solver waits when the reading falls behind);
- **convert**: the store's LIBSVM text (350 MB) converted with ``--jobs 1`` and ``--jobs 2`` (parser threads and
  block writers), and ``--jobs 2`` with h5py compressing every chunk under its lock (the writers before this change).

Each configuration runs ``--repeat`` times, in turns, so that the load of a shared machine hits all of them; the
table gives the median and the best::

    python tools/bench_io.py                     # about 3 minutes on 2 cores
    python tools/bench_io.py --threads 1,2,4 --skip train,convert
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[1]


@contextmanager
def h5py_reads():
    """Blocks read as before: h5py reads and decodes every array (the chunks are never planned here)."""
    from blocksvm.store import chunks

    with mock.patch.object(chunks, "plan", lambda f, names: None):
        yield


@contextmanager
def h5py_writes():
    """Blocks written as before: h5py compresses every chunk, under its lock."""
    from blocksvm.store import chunks

    with mock.patch.object(chunks, "encode", lambda array, filters, length: None):
        yield


def timed(work) -> tuple[float, float]:
    """Wall seconds and CPU seconds (all threads of the process) of ``work()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def parallel_capacity(threads: int) -> float:
    """What this machine gives a second thread now: the speed-up of ``threads`` threads over one sorting numpy
    arrays (which releases the GIL), best of 3. Near 1 on a shared machine whose other load takes the cores."""
    import numpy as np

    arrays = [np.random.default_rng(i).standard_normal(500_000) for i in range(4 * threads)]

    def sort_all(n: int) -> float:
        with ThreadPoolExecutor(n) as pool:
            start = time.perf_counter()
            list(pool.map(np.sort, arrays))
            return time.perf_counter() - start

    return min(sort_all(1) for _ in range(3)) / min(sort_all(threads) for _ in range(3))


def decoded_bytes(store) -> int:
    block = store.read_block(0)
    arrays = (block.indptr, block.indices, block.data, block.labels, block.lines)
    per_row = sum(a.nbytes for a in arrays) / block.n_rows
    return round(per_row * store.n_rows)


def summary(runs: list[tuple[float, float]], scale: float) -> str:
    walls = [w for w, _ in runs]
    busy = statistics.median(c / w for w, c in runs)
    return f"{scale / statistics.median(walls):,.0f} | {scale / min(walls):,.0f} | {busy:.2f}"


def bench_read(store_path: Path, threads: list[int], repeat: int) -> None:
    from blocksvm.store import BlockStore

    configs = [("h5py (before)", 1, 1, True)]
    for prefetch in (1, 2):
        configs += [(f"chunks, read_threads {t}", t, prefetch, False) for t in threads]
    stores = {t: BlockStore(store_path, read_threads=t) for t in {c[1] for c in configs}}
    mb = decoded_bytes(stores[1]) / 1e6
    for store in stores.values():
        for _ in store.iter_blocks(prefetch=1):  # the page cache, numba's kernels, the decoding threads
            pass
    runs = {c: [] for c in configs}
    for _ in range(repeat):
        for config in configs:
            _, t, prefetch, before = config

            def read_all(store=stores[t], prefetch=prefetch):
                for _ in store.iter_blocks(prefetch=prefetch):
                    pass

            if before:
                with h5py_reads():
                    runs[config].append(timed(read_all))
            else:
                runs[config].append(timed(read_all))
    print(f"\n### Read: {stores[1].n_blocks} blocks, {mb:,.0f} MB decoded, {repeat} runs each\n")
    print("| read | prefetch | MB/s, median | MB/s, best | cores busy |\n|---|---:|---:|---:|---:|")
    for config in configs:
        name, _, prefetch, _ = config
        print(f"| {name} | {prefetch} | {summary(runs[config], mb)} |", flush=True)


def bench_train(store_path: Path, threads: list[int], passes: int, repeat: int) -> None:
    from blocksvm.train import train

    def one(t: int):
        return train(
            str(store_path),
            loss="hinge",
            C=1.0,
            bias=-1.0,
            tol=0.0,
            max_outer=passes,
            read_threads=t,
            verbose=0,
            progress=False,
        )

    one(1)  # numba's caches
    records = {t: [] for t in threads}
    for _ in range(repeat):
        for t in threads:
            records[t].append(one(t).history)
    print(f"\n### Train: dual CD, {passes} passes, {repeat} runs each (seconds a pass, median over passes and runs)\n")
    print("| read_threads | read s | wait s | compute s |\n|---:|---:|---:|---:|")
    for t in threads:
        rows = [r for history in records[t] for r in history]
        read, wait, compute = (statistics.median(r[f"{k}_seconds"] for r in rows) for k in ("read", "wait", "compute"))
        print(f"| {t} | {read:.3f} | {wait:.3f} | {compute:.3f} |", flush=True)


def bench_convert(text: Path, out: Path, block_rows: int, repeat: int) -> None:
    from blocksvm.io import convert

    configs = [("--jobs 1", 1, False), ("--jobs 2", 2, False), ("--jobs 2, h5py compresses (before)", 2, True)]
    runs = {c: [] for c in configs}
    target = out / "bench-io-convert.bsvm"

    def once(jobs: int) -> None:
        convert(text, target, block_rows=block_rows, jobs=jobs, overwrite=True, progress=False)

    once(2)  # numba's caches, the page cache
    for _ in range(repeat):
        for config in configs:
            _, jobs, before = config
            if before:
                with h5py_writes():
                    runs[config].append(timed(lambda jobs=jobs: once(jobs)))
            else:
                runs[config].append(timed(lambda jobs=jobs: once(jobs)))
    shutil.rmtree(target, ignore_errors=True)
    mb = text.stat().st_size / 1e6
    print(f"\n### Convert: {text.name} ({mb:,.0f} MB), {repeat} runs each\n")
    print("| convert | seconds, median | seconds, best | MB/s, median | cores busy |\n|---|---:|---:|---:|---:|")
    for config in configs:
        walls = [w for w, _ in runs[config]]
        busy = statistics.median(c / w for w, c in runs[config])
        median = statistics.median(walls)
        print(f"| {config[0]} | {median:.2f} | {min(walls):.2f} | {mb / median:,.0f} | {busy:.2f} |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=400_000)
    p.add_argument("--features", type=int, default=100_000)
    p.add_argument("--nnz", type=int, default=60)
    p.add_argument("--block-rows", type=int, default=50_000)
    p.add_argument("--threads", default="1,2", help="read_threads to compare")
    p.add_argument("--passes", type=int, default=3, help="training passes a run")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--skip", default="", help="comma-separated parts to leave out: read, train, convert")
    p.add_argument("--out", type=Path, default=REPO / "bench-out" / "parallel")
    args = p.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    threads = [int(t) for t in args.threads.split(",")]

    from blocksvm.datasets import SyntheticSpec, write_libsvm
    from blocksvm.io import convert
    from blocksvm.params import cores

    args.out.mkdir(parents=True, exist_ok=True)
    stem = f"gen-{args.rows}x{args.features}x{args.nnz}"  # tools/bench_parallel.py's names
    text, store = args.out / f"{stem}.svm", args.out / f"{stem}-b{args.block_rows}.bsvm"
    if not text.exists():
        write_libsvm(text, SyntheticSpec(rows=args.rows, features=args.features, nnz=args.nnz, seed=11), progress=False)
    if not store.exists():
        convert(text, store, block_rows=args.block_rows, progress=False)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    most = max(threads)
    print(
        f"{store.name}: {cores()} cores, load average {load:.2f} at the start; numpy sorts ran "
        f"{parallel_capacity(most):.2f}x faster on {most} threads than on 1 (what the machine gave a second thread)"
    )
    if "read" not in skip:
        bench_read(store, threads, args.repeat)
    if "train" not in skip:
        bench_train(store, threads, args.passes, max(1, args.repeat // 2))
    if "convert" not in skip:
        bench_convert(text, args.out, args.block_rows, max(1, args.repeat // 2))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nload average {load:.2f} at the end; numpy sorts {parallel_capacity(most):.2f}x faster on {most} threads")


if __name__ == "__main__":
    main()
