#!/usr/bin/env python
"""Exact passes that scale: Newton (a pass learner) on threads and shards, against dual CD and LIBLINEAR -s 2,
side by side in one run on this machine (issue 30).

On one generated data set (LIBSVM text and its store, cached in ``--out``; the same as tools/bench_parallel.py's),
squared hinge, C = 1, bias 1:

1. **pass kernel** — one pass of Newton's sums over the store's blocks in memory (a Hessian-vector product, and
   the line search's values with the gradient), with 1, 2, 4, 8 and 16 threads (beyond the cores: correctness,
   not speed): seconds, millions of nonzeros a second, speed-up over 1 thread; and whether every thread count
   gave the same bits.
2. **end to end from the store** — passes and train seconds to a primal objective within ``--target`` (relative)
   of f* (Newton at eps 1e-8): dual CD serial and on 2 threads (an exact evaluation after every pass, not
   counted), ``--solver newton`` reading the store at every pass (``--memory-mb 1``) and keeping it in memory
   (``--memory-mb``, default 1024) with 1 and 2 threads, ``--workers 2`` (shards on threads) and a 2-worker dask
   LocalCluster; each run's first record at the target.
3. **LIBLINEAR -s 2** (liblinear-official, one thread) on the same text: load apart, then ``-e`` down a ladder
   until the primal is within the target; the train seconds of the first that is.

Every timed job runs in its own process. ::

    python tools/bench_passes.py            # about 10 minutes on 2 cores
    python tools/bench_passes.py --quick    # test the script: a minute
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from harness import OUT, data, peers, report, run

BASE = {"loss": "squared-hinge", "C": 1.0, "bias": 1.0}


# ---- jobs, each in a child process ------------------------------------------------------------------------


def job_kernel(store: str, threads: list[int]) -> dict:
    """Seconds of one pass of Newton's sums over the store in memory, per thread count and kind of pass."""
    import numpy as np

    from blocksvm.solvers import Problem
    from blocksvm.solvers.newton import CG, NewtonSolver
    from blocksvm.store import BlockStore
    from blocksvm.sums import PieceLayout, TreeSum
    from blocksvm.train.engines import PieceVisits
    from blocksvm.train.executors import ThreadEngine
    from blocksvm.train.params import settle

    s = BlockStore(store)
    blocks = [s.read_block(b) for b in range(s.n_blocks)]
    params, _ = settle("train", None, {**BASE, "solver": "newton"})
    solver = NewtonSolver(Problem.from_store(s, params), params, s)
    layout = PieceLayout.of(s.block_rows, s.nnz, solver.problem.n_weights)
    rng = np.random.default_rng(0)
    solver.w[...] = rng.normal(scale=0.01, size=solver.w.shape)
    requests = {"value (line search)": solver.request()}
    solver.stage[:], solver.d[...] = CG, rng.normal(size=solver.w.shape)
    requests["H d (a CG step)"] = solver.request()
    out = {"nnz": s.nnz, "pieces": layout.n_pieces, "piece_rows": layout.piece_rows, "passes": {}}
    for kind, request in requests.items():
        seconds, totals = {}, {}
        for t in threads:
            engine = ThreadEngine(t)
            best = np.inf
            for _ in range(3):  # the first loads the compiled kernels and starts the threads
                tree = TreeSum()
                visits = PieceVisits(solver.mapper(), layout, engine, tree, request)
                start = time.perf_counter()
                for block in blocks:
                    visits.visit(block, None)
                total = tree.total()
                best = min(best, time.perf_counter() - start)
            seconds[t], totals[t] = best, total
        same = all(all(np.array_equal(totals[t][k], totals[threads[0]][k]) for k in total) for t in threads)
        out["passes"][kind] = {"seconds": seconds, "same_bits": same}
    return out


def job_train(store: str, options: dict, fstar: float, target: float, cluster: int = 0) -> dict:
    """One run from the store; its passes and train seconds to the target (the first record within it)."""
    result = run.train(store, options, cluster)
    passes = 0
    for record in result.history:
        passes += record.get("newton_passes", 1)
        if fstar is not None and (record["primal"] - fstar) / fstar <= target:
            return {"passes": passes, "iterations": record["outer"], "train_seconds": record["train_time"], "ok": True}
    last = result.history[-1]
    return {"passes": passes, "iterations": last["outer"], "train_seconds": last["train_time"], "ok": False,
            "primal": last["primal"], "stop": result.stop_reason}  # fmt: skip


def job_fstar(store: str) -> dict:
    from blocksvm.train import train

    result = train(store, verbose=0, progress=False, solver="newton", eps=1e-8, max_outer=200, **BASE)
    return {"primal": result.model.summary["primal"], "stop": result.stop_reason}


def job_liblinear(text: str, fstar: float, target: float) -> dict:
    """LIBLINEAR -s 2: load, then -e down a ladder until the primal is within the target."""
    start = time.perf_counter()
    X, y = data.arrays(Path(text))
    load = time.perf_counter() - start
    liblinear = peers.liblinear()
    problem = liblinear.problem(y, X)

    def fit(eps):
        start = time.perf_counter()
        model = liblinear.train(problem, f"-s 2 -c {BASE['C']} -B 1 -e {eps} -q")
        seconds = time.perf_counter() - start
        return seconds, peers.objective(*peers.weights(model), X, y, BASE["C"], BASE["loss"])

    eps = (0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0005, 0.0002, 0.0001)
    return {"load_seconds": load, "tried": peers.ladder(eps, fit, fstar, target, "eps")}


JOBS = {"kernel": job_kernel, "train": job_train, "fstar": job_fstar, "liblinear": job_liblinear}


# ---- the run ------------------------------------------------------------------------------------------------


def main() -> None:
    run.serve(JOBS)
    p = run.parser(__doc__)
    data.generated_args(p, rows=400_000, features=100_000, nnz=60, block_rows=50_000)
    p.add_argument("--target", type=float, default=1e-3, help="relative objective to reach")
    p.add_argument("--memory-mb", type=float, default=1024.0, help="newton's --memory-mb where the store is kept")
    p.add_argument("--threads", default="1,2,4,8,16", help="thread counts of the pass kernel")
    p.add_argument("--skip", default="", help="comma-separated parts to leave out: kernel, e2e, liblinear")
    p.add_argument("--out", type=Path, default=OUT / "parallel")
    run.add_quick(p, "a small data set, to test the script")
    args = run.quick(p, p.parse_args(), rows=40_000, features=20_000, nnz=40, block_rows=5_000)
    skip = set(filter(None, args.skip.split(",")))
    text, store = data.generated(args, args.out)
    from blocksvm.store import BlockStore

    s = BlockStore(store)
    print(
        f"{s.n_rows:,} rows x {s.n_features:,} features, {s.nnz:,} nnz, {s.n_blocks} blocks; {os.cpu_count()} "
        f"cores; squared hinge, C = 1, bias 1; target {args.target:g} relative objective",
        flush=True,
    )
    results: dict = {"machine": report.machine(), "store": str(store)}

    if "kernel" not in skip:
        k = run.job("kernel", store=str(store), threads=[int(t) for t in args.threads.split(",")])
        results["kernel"] = k
        if "error" not in k:
            print(
                f"\n### Pass kernel: one pass over the store in memory ({k['pieces']} pieces of {k['piece_rows']} rows)"
            )
            for kind, r in k["passes"].items():
                one = r["seconds"]["1"]
                print(f"\n{kind}; every thread count the same bits: {r['same_bits']}\n")
                print(report.table(["threads", "seconds", "M nnz/s", "speed-up"], [
                    [t, f"{seconds:.3f}", f"{k['nnz'] / seconds / 1e6:.0f}", f"{one / seconds:.2f}x"]
                    for t, seconds in r["seconds"].items()], "rrrr"))  # fmt: skip

    fstar = run.job("fstar", store=str(store))
    results["fstar"] = fstar
    print(f"\nf* = {fstar.get('primal')} ({fstar.get('stop', fstar.get('error'))})", flush=True)
    kept = {"solver": "newton", "eps": 1e-6, "memory_mb": args.memory_mb}
    runs = [
        ("dual CD, serial", {"eval_every": 1, "tol": 1e-6, "max_outer": 100}, 0),
        ("dual CD, --threads 2", {"eval_every": 1, "tol": 1e-6, "max_outer": 100, "threads": 2}, 0),
        ("newton, 1 thread, every pass reads the store", {"solver": "newton", "eps": 1e-6, "memory_mb": 1.0}, 0),
        ("newton, 1 thread", kept, 0),
        ("newton, --threads 2", {**kept, "threads": 2}, 0),
        ("newton, --workers 2 (shards on threads)", {**kept, "workers": 2}, 0),
        ("newton, dask LocalCluster, 2 workers", kept, 2),
    ]
    if "e2e" not in skip and "primal" in fstar:
        print(f"\n### End to end from the store, to {args.target:g} of f*\n", flush=True)
        print("| run | iterations | passes | train seconds | vs newton 1 thread |\n|---|---:|---:|---:|---:|")
        rows = []
        for label, options, cluster in runs:
            r = run.job("train", store=str(store), options={**BASE, **options}, fstar=fstar["primal"],
                        target=args.target, cluster=cluster)  # fmt: skip
            r["run"] = label
            rows.append(r)
            if "error" in r:
                print(f"| {label} | failed: {r['error']} | | | |", flush=True)
                continue
            base = next((x for x in rows if x["run"] == "newton, 1 thread" and "error" not in x), None)
            speed = f"{base['train_seconds'] / r['train_seconds']:.2f}x" if base else ""
            reached = "" if r["ok"] else " (not reached)"
            print(f"| {label} | {r['iterations']} | {r['passes']} | {r['train_seconds']:.2f}{reached} | {speed} |",
                  flush=True)  # fmt: skip
        results["end_to_end"] = rows

    if "liblinear" not in skip and "primal" in fstar:
        r = run.job("liblinear", text=str(text), fstar=fstar["primal"], target=args.target)
        results["liblinear"] = r
        if "error" not in r:
            last = r["tried"][-1]
            print(f"\nLIBLINEAR -s 2 (1 thread): load {r['load_seconds']:.1f} s; -e {last['eps']} reaches "
                  f"{last['rel']:.1e} in {last['seconds']:.2f} s of training", flush=True)  # fmt: skip
    print(f"\nresults in {report.write_json(args.out / 'passes.json', results)}")


if __name__ == "__main__":
    main()
