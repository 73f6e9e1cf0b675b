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
- **readers**: the text readers as a user meets them, every command a whole process (start-up included) on the
  same generated LIBSVM text (``--reader-mb``, 250 MB: 1M features, 80 nonzeros a row), warm (in the page cache)
  and cold (evicted before each run): ``blocksvm convert`` and ``blocksvm stream --solver pa1`` of this checkout
  and of ``--baseline`` (another checkout, e.g. ``git worktree add ../wt-cccebfb cccebfb``), scikit-learn's
  ``load_svmlight_file`` and Vowpal Wabbit's one pass (``--loss_function hinge``, no cache) on the same rows in its
  own text (written once before), and that conversion from LIBSVM text (``harness.peers.to_vw``, a process of its
  own in each turn: VW's one pass "with its conversion" is the two, as ``bench_online.py`` counts it). The ratios
  are medians of the ratios within each turn.

Each configuration runs ``--repeat`` times, in turns, so that the load of a shared machine hits all of them; the
table gives the median and the best::

    python tools/bench_io.py --skip readers      # about 3 minutes on 2 cores
    python tools/bench_io.py --threads 1,2,4 --skip train,convert,readers
    python tools/bench_io.py --only readers --baseline ../wt-cccebfb    # about 15 minutes
    python tools/bench_io.py --quick             # test the script: a small store
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from pathlib import Path
from unittest import mock

from harness import OUT, data, peers, report, run


@contextmanager
def before(read: bool):
    """Blocks read (``read``) or written as before: h5py decodes every array itself (the chunks are never planned
    here), or compresses every chunk, under its lock."""
    from blocksvm.store import chunks

    if read:
        with mock.patch.object(chunks, "plan", lambda f, names: None):
            yield
    else:
        with mock.patch.object(chunks, "encode", lambda array, filters, length: None):
            yield


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


def busy(runs: list[tuple[float, float]]) -> float:
    return statistics.median(cpu / wall for wall, cpu in runs)


def bench_read(store_path, threads: list[int], repeat: int) -> None:
    from blocksvm.store import BlockStore

    configs = [("h5py (before)", 1, 1, True)]
    configs += [(f"chunks, read_threads {t}", t, prefetch, False) for prefetch in (1, 2) for t in threads]
    stores = {t: BlockStore(store_path, read_threads=t) for t in {c[1] for c in configs}}
    block = stores[1].read_block(0)
    per_row = sum(a.nbytes for a in (block.indptr, block.indices, block.data, block.labels, block.lines)) / block.n_rows
    mb = per_row * stores[1].n_rows / 1e6
    for store in stores.values():
        for _ in store.iter_blocks(prefetch=1):  # the page cache, numba's kernels, the decoding threads
            pass

    def read_all(config):
        _, t, prefetch, old = config
        with before(read=True) if old else nullcontext():
            return run.timed(lambda: [None for _ in stores[t].iter_blocks(prefetch=prefetch)])

    runs = run.in_turns(configs, repeat, read_all)
    print(f"\n### Read: {stores[1].n_blocks} blocks, {mb:,.0f} MB decoded, {repeat} runs each\n")
    walls = {c: [w for w, _ in runs[c]] for c in configs}
    print(report.table(["read", "prefetch", "MB/s, median", "MB/s, best", "cores busy"], [
        [c[0], c[2], f"{mb / statistics.median(walls[c]):,.0f}", f"{mb / min(walls[c]):,.0f}", f"{busy(runs[c]):.2f}"]
        for c in configs]), flush=True)  # fmt: skip


def bench_train(store, threads: list[int], passes: int, repeat: int) -> None:
    from blocksvm.train import train

    def one(t: int):
        options = {"loss": "hinge", "C": 1.0, "bias": -1.0, "tol": 0.0, "max_outer": passes, "read_threads": t}
        return train(str(store), **options, verbose=0, progress=False).history

    one(1)  # numba's caches
    records = run.in_turns(threads, repeat, one)
    print(f"\n### Train: dual CD, {passes} passes, {repeat} runs each (seconds a pass, median over passes and runs)\n")
    rows = []
    for t in threads:
        history = [r for h in records[t] for r in h]
        rows.append([t] + [f"{statistics.median(r[f'{k}_seconds'] for r in history):.3f}"
                           for k in ("read", "wait", "compute")])  # fmt: skip
    print(report.table(["read_threads", "read s", "wait s", "compute s"], rows, "rrrr"), flush=True)


def bench_convert(text, out, block_rows: int, repeat: int) -> None:
    from blocksvm.io import convert

    configs = [("--jobs 1", 1, False), ("--jobs 2", 2, False), ("--jobs 2, h5py compresses (before)", 2, True)]
    target = out / "bench-io-convert.bsvm"

    def once(config) -> tuple[float, float]:
        _, jobs, old = config
        with before(read=False) if old else nullcontext():
            return run.timed(lambda: convert(text, target, block_rows=block_rows, jobs=jobs, overwrite=True,
                                             progress=False))  # fmt: skip

    once(configs[1])  # numba's caches, the page cache
    runs = run.in_turns(configs, repeat, once)
    shutil.rmtree(target, ignore_errors=True)
    mb = text.stat().st_size / 1e6
    print(f"\n### Convert: {text.name} ({mb:,.0f} MB), {repeat} runs each\n")
    rows = []
    for config in configs:
        walls = [w for w, _ in runs[config]]
        median = statistics.median(walls)
        rows.append(
            [config[0], f"{median:.2f}", f"{min(walls):.2f}", f"{mb / median:,.0f}", f"{busy(runs[config]):.2f}"]
        )
    print(report.table(["convert", "seconds, median", "seconds, best", "MB/s, median", "cores busy"], rows), flush=True)


def evict(path: Path) -> None:
    """Drop ``path``'s pages from the page cache (``posix_fadvise``'s DONTNEED: no root needed), so that the next
    reader reads it from the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def reader_jobs(text: Path, vw_text: Path, features: int, out: Path, baseline: Path | None) -> dict:
    """The whole processes the readers' table times: name -> (argv, checkout or None, the file it reads)."""
    py = sys.executable
    jobs = {}
    for label, checkout in [("", None)] + ([(" (baseline)", baseline)] if baseline else []):
        tag = "baseline" if checkout else "this"
        jobs[f"convert{label}"] = (run.cli("convert", text, out / f"readers-{tag}.bsvm", "--overwrite"), checkout, text)
        jobs[f"stream --solver pa1{label}"] = (
            run.cli("stream", text, out / f"readers-{tag}.h5", "--solver", "pa1", "-q"),
            checkout,
            text,
        )
    jobs["scikit-learn load_svmlight_file"] = (
        [py, "-c", f"from sklearn.datasets import load_svmlight_file; load_svmlight_file({str(text)!r})"],
        None,
        text,
    )
    bits = max(18, (features + 1).bit_length())  # (as harness.peers.vw: feature i is weight i)
    vw_args = ["-d", str(vw_text), "--loss_function", "hinge", "--noconstant", "--holdout_off", "--quiet", "-b"]
    convert_to_vw = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); from pathlib import Path; "
        f"from harness import peers; peers.to_vw(Path({str(text)!r}), Path({str(out / 'readers-converted.vw')!r}))"
    )
    jobs["LIBSVM to VW text (harness.peers.to_vw)"] = ([py, "-c", convert_to_vw], None, text)
    jobs["Vowpal Wabbit, one pass on its own text"] = (
        [py, "-c", f"from vowpalwabbit import Workspace; Workspace(arg_list={vw_args + [str(bits)]!r}).finish()"],
        None,
        vw_text,
    )
    return jobs


def job_reader_text(out: str, mb: float, features: int, nnz: int) -> dict:
    """The readers' LIBSVM text and its VW copy, written once (in a child: this process stays light, and its
    children's peak RSS starts from its own)."""
    text = data.sized_text(Path(out), mb, data.spec(1, features, nnz, seed=0))
    vw_text = text.with_suffix(".vw")
    if not vw_text.exists():
        peers.to_vw(text, vw_text)
    return {"text": str(text), "vw_text": str(vw_text)}


def warm(path: Path) -> None:
    """Read ``path`` into the page cache, 1 MB at a time (a light parent)."""
    buffer = bytearray(1 << 20)
    with open(path, "rb", buffering=0) as f:
        while f.readinto(buffer):
            pass


def bench_readers(args) -> None:
    """The readers against an older commit and the peers: every command a whole process (start-up included) on the
    same generated text, in turns, warm (the file in the page cache) and cold (evicted before each run)."""
    made = run.job("reader_text", out=args.out, mb=args.reader_mb, features=args.reader_features, nnz=args.reader_nnz)
    if "error" in made:
        raise SystemExit(f"the readers' text: {made['error']}")
    text, vw_text = Path(made["text"]), Path(made["vw_text"])
    baseline = args.baseline.resolve() if args.baseline else None
    jobs = reader_jobs(text, vw_text, args.reader_features, args.out, baseline)
    # bytecode written and read as an installed package's is (an environment that sets PYTHONDONTWRITEBYTECODE
    # compiles every module of blocksvm at every start: 0.3-0.5 s of CPU)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for name, (argv, checkout, _) in jobs.items():  # bytecode, numba's caches
        result = run.command(argv, timeout=1800, checkout=checkout)
        if "error" in result:
            raise SystemExit(f"{name}: {result['error']}")
    mb = text.stat().st_size / 1e6
    for cache in args.cache.split(","):

        def once(name: str, cache: str = cache) -> dict:
            argv, checkout, source = jobs[name]
            if cache == "cold":
                evict(source)
            else:
                warm(source)
            return run.command(argv, timeout=1800, checkout=checkout)

        runs = run.in_turns(list(jobs), args.repeat, once)
        print(f"\n### Readers: {text.name} ({mb:,.0f} MB), {cache} file, {args.repeat} runs each, in turns\n")
        print(reader_table(runs, baseline is not None), flush=True)


def reader_table(runs: dict, paired: bool) -> str:
    """One row a command: wall and CPU seconds (median, best), MB/s, peak RSS, and the ratios the issue asks for,
    each the median of the per-turn ratios (a turn's runs share the machine's load)."""

    def ratio(a: str, b: str) -> str:
        return f"{statistics.median(x['seconds'] / y['seconds'] for x, y in zip(runs[a], runs[b])):.2f}x"

    sklearn, vw = "scikit-learn load_svmlight_file", "Vowpal Wabbit, one pass on its own text"
    to_vw = "LIBSVM to VW text (harness.peers.to_vw)"
    rows = []
    for name, results in runs.items():
        walls = [r["seconds"] for r in results]
        notes = []
        if paired and not name.endswith("(baseline)") and name + " (baseline)" in runs:
            notes.append(f"{ratio(name, name + ' (baseline)')} the baseline's wall")
        if name.startswith("convert"):
            notes.append(f"{ratio(sklearn, name)} scikit-learn's speed")
        if name.startswith("stream"):
            with_conversion = [
                x["seconds"] / (y["seconds"] + z["seconds"]) for x, y, z in zip(runs[name], runs[vw], runs[to_vw])
            ]
            notes.append(f"{ratio(name, vw)} VW's time, {statistics.median(with_conversion):.2f}x with its conversion")
        rows.append([
            name, f"{statistics.median(walls):.2f}", f"{min(walls):.2f}",
            f"{statistics.median(r['cpu_seconds'] for r in results):.2f}",
            f"{statistics.median(r['peak_rss_mb'] for r in results):,.0f}", "; ".join(notes),
        ])  # fmt: skip
    header = ["whole process", "wall s, median", "wall s, best", "CPU s, median", "peak RSS MB", "ratios (medians)"]
    return report.table(header, rows)


def main() -> None:
    run.serve({"reader_text": job_reader_text})
    p = run.parser(__doc__)
    data.generated_args(p, rows=400_000, features=100_000, nnz=60, block_rows=50_000)
    p.add_argument("--threads", default="1,2", help="read_threads to compare")
    p.add_argument("--passes", type=int, default=3, help="training passes a run")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--skip", default="", help="comma-separated parts to leave out: read, train, convert, readers")
    p.add_argument("--only", default="", help="comma-separated parts to run, the others left out")
    p.add_argument("--out", type=Path, default=OUT / "parallel")
    p.add_argument("--reader-mb", type=float, default=250.0, help="readers: megabytes of generated LIBSVM text")
    p.add_argument("--reader-features", type=int, default=1_000_000, help="readers: features of the generated text")
    p.add_argument("--reader-nnz", type=int, default=80, help="readers: mean nonzeros a row of the generated text")
    p.add_argument("--cache", default="warm,cold", help="readers: the text in the page cache (warm), evicted (cold)")
    p.add_argument(
        "--baseline", type=Path, help="readers: another checkout (a git worktree of an older commit), run in turns"
    )
    run.add_quick(p)
    args = run.quick(p, p.parse_args(), rows=40_000, features=20_000, nnz=40, block_rows=5_000, repeat=2, passes=2)
    args = run.quick(p, args, reader_mb=5.0)
    parts = {"read", "train", "convert", "readers"}
    skip = set(filter(None, args.skip.split(","))) | (parts - set(args.only.split(",")) if args.only else set())
    threads = [int(t) for t in args.threads.split(",")]
    print(report.machine())
    if "readers" not in skip:
        bench_readers(args)
    if not {"read", "train", "convert"} - skip:
        return
    text, store = data.generated(args, args.out)
    from blocksvm.params import cores

    most = max(threads)
    print(
        f"{store.name}: {cores()} cores, load average {os.getloadavg()[0]:.2f} at the start; numpy sorts ran "
        f"{parallel_capacity(most):.2f}x faster on {most} threads than on 1 (what the machine gave a second thread)"
    )
    if "read" not in skip:
        bench_read(store, threads, args.repeat)
    if "train" not in skip:
        bench_train(store, threads, args.passes, max(1, args.repeat // 2))
    if "convert" not in skip:
        bench_convert(text, args.out, args.block_rows, max(1, args.repeat // 2))
    print(
        f"\nload average {os.getloadavg()[0]:.2f} at the end; numpy sorts {parallel_capacity(most):.2f}x faster on "
        f"{most} threads"
    )


if __name__ == "__main__":
    main()
