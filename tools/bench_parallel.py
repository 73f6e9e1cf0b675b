#!/usr/bin/env python
"""Cores that pay: blocksvm's threads and CoCoA+ rounds against the serial trainer and the multi-core peers,
side by side in one run on this machine (issue 21).

On one generated data set (LIBSVM text and its store, cached in ``--out``), hinge loss, C = 1, no bias:

1. **kernel** — dual CD on one block in memory, ``--sweeps`` passes from alpha = 0, with 1, 2, 4 and 8
   threads (beyond the cores: correctness, not speed); seconds and speed-up over 1 thread.
2. **end to end from the store** — time to a relative duality gap of ``--tol`` (1e-3): the serial
   trainer, ``--threads 2``, ``--workers 2`` with CoCoA+'s old step (sigma' = K, added) and the new one
   (line search), a 2-worker dask LocalCluster; ``train_time`` (exact evaluation passes excluded).
3. **peers** on the same text — liblinear-multicore ``-s 3 -m 1`` and ``-m 2`` (installed with ``pip install
   --target DIR liblinear-multicore``, imported in its own process: it shadows liblinear-official) and Snap ML's
   ``SupportVectorMachine(n_jobs=1|2)`` (``regularizer = 1/C``, its ``tol`` a coefficient change, so it is set
   tight and ``max_iter`` grows): time to a primal objective within ``--tol`` of f*, the first setting that
   reaches it; their load time apart. f* comes from blocksvm at a duality gap of 1e-7.
4. **rounds** to the gap for K = 1, 2, 4, 8 shards (simulated on threads: the rounds do not depend on where
   the shards run), with the old step and the new.

Every timed job runs in its own process. ::

    python tools/bench_parallel.py                  # about 20 minutes on 2 cores
    python tools/bench_parallel.py --quick          # test the script: a few minutes
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from harness import OUT, data, peers, report, run

# ---- jobs, each in a child process ------------------------------------------------------------------------


def job_kernel(store: str, sweeps: int, threads: list[int]) -> dict:
    """Seconds of dual CD on the store's largest block, ``sweeps`` passes from alpha = 0 (one visit of a
    DualCDSolver, working set "block", hinge loss, no bias), per thread count; and the dual each reached."""
    import numpy as np

    from blocksvm.solvers import Problem
    from blocksvm.solvers.dual_cd import DualCDSolver
    from blocksvm.store import BlockStore
    from blocksvm.train.params import settle

    s = BlockStore(store)
    block = s.read_block(int(np.argmax(s.block_rows)))
    out = {"rows": block.n_rows, "nnz": block.nnz, "sweeps": sweeps, "seconds": {}, "dual": {}}
    for t in [1, *threads]:
        params, _ = settle(
            "train", None, {"loss": "hinge", "bias": -1.0, "working_set": "block", "threads": t, "inner_passes": sweeps}
        )
        best = np.inf
        for _ in range(3):  # the first loads the compiled kernels
            solver = DualCDSolver(Problem.from_store(s, params), params, s)
            start = time.perf_counter()
            solver.visit(block, np.array([1], np.int64))
            best = min(best, time.perf_counter() - start)
        out["seconds"][t] = best
        out["dual"][t] = float(solver.block_sums[0, block.index, 0] - 0.5 * solver.w[0] @ solver.w[0])
    return out


def job_kernel_classes(store: str, sweeps: int, classes: int, threads: list[int]) -> dict:
    """Seconds of one visit of the largest block as a one-vs-rest problem of ``classes`` classes (the rows
    relabelled by source line: line % classes), per thread count: the problems a thread each."""
    import dataclasses

    import numpy as np

    from blocksvm.solvers import Problem
    from blocksvm.solvers.dual_cd import DualCDSolver
    from blocksvm.store import BlockStore
    from blocksvm.train.params import settle

    s = BlockStore(store)
    block = s.read_block(int(np.argmax(s.block_rows)))
    block = dataclasses.replace(block, labels=(block.lines % classes).astype(np.float64))
    out = {"classes": classes, "seconds": {}}
    for t in [1, *threads]:
        options = {"loss": "hinge", "bias": -1.0, "working_set": "block", "threads": t, "inner_passes": sweeps}
        params, _ = settle("train", None, options)
        problem = Problem.build(
            np.arange(classes, dtype=float), params, Problem.from_store(s, params).loss,
            n_rows=s.n_rows, n_features=s.n_features, n_blocks=s.n_blocks, row_offsets=s.row_offsets, dtype=s.dtype,
        )  # fmt: skip
        best = np.inf
        for _ in range(3):
            solver = DualCDSolver(problem, params, s)
            start = time.perf_counter()
            solver.visit(block, np.arange(1, classes + 1, dtype=np.int64))
            best = min(best, time.perf_counter() - start)
        out["seconds"][t] = best
    return out


def job_blocksvm(store: str, options: dict, scheduler_workers: int = 0) -> dict:
    """One training run from the store to the gap; its record (train seconds, rounds, gap)."""
    result = run.train(store, options, scheduler_workers)
    history = result.history
    return {
        "passes": len(history),
        "stop": result.stop_reason,
        "gap": history[-1]["gap"],
        "primal": history[-1]["primal"],
        "train_seconds": history[-1]["train_time"],
        "compute_seconds": sum(h["compute_seconds"] for h in history),
        "read_seconds": sum(h["read_seconds"] for h in history),
    }


def job_liblinear(text: str, threads: int, fstar: float, tol: float, C: float) -> dict:
    """liblinear-multicore ``-s 3 -m threads``: load, then ``-e`` down a ladder until the primal is within tol."""
    liblinear = peers.liblinear(multicore=True)
    start = time.perf_counter()
    y, X = liblinear.svm_read_problem(text, return_scipy=True)
    load = time.perf_counter() - start
    problem = liblinear.problem(y, X)

    def fit(eps):
        start = time.perf_counter()
        model = liblinear.train(problem, f"-s 3 -c {C} -B -1 -e {eps} -m {threads} -q")
        return time.perf_counter() - start, peers.objective(peers.weights(model)[0], 0.0, X, y, C, "hinge", bias=-1)

    eps = (1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001)
    return {"load_seconds": load, "tried": peers.ladder(eps, fit, fstar, tol, "eps")}


def job_snapml(text: str, threads: int, fstar: float, tol: float, C: float) -> dict:
    """Snap ML's SupportVectorMachine (regularizer 1/C, tight tol): max_iter up a ladder until within tol."""
    from snapml import SupportVectorMachine

    start = time.perf_counter()
    X, y = data.arrays(Path(text))
    load = time.perf_counter() - start

    def fit(iterations):
        model = SupportVectorMachine(regularizer=1.0 / C, max_iter=iterations, tol=1e-12, n_jobs=threads,
                                     fit_intercept=False)  # fmt: skip
        start = time.perf_counter()
        model.fit(X, y)
        return time.perf_counter() - start, peers.objective(model.coef_.ravel(), 0.0, X, y, C, "hinge", bias=-1)

    iterations = (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144)
    return {"load_seconds": load, "tried": peers.ladder(iterations, fit, fstar, tol, "max_iter")}


JOBS = {
    "kernel": job_kernel,
    "kernel_classes": job_kernel_classes,
    "blocksvm": job_blocksvm,
    "liblinear": job_liblinear,
    "snapml": job_snapml,
}


# ---- the run ------------------------------------------------------------------------------------------


def main() -> None:
    run.serve(JOBS)
    p = run.parser(__doc__)
    data.generated_args(p, rows=400_000, features=100_000, nnz=60, block_rows=50_000)
    p.add_argument("--tol", type=float, default=1e-3)
    p.add_argument("--sweeps", type=int, default=10, help="passes of the kernel measurement")
    p.add_argument("--ks", default="1,2,4,8", help="shard counts whose rounds to count")
    p.add_argument("--skip", default="", help="comma-separated parts to leave out: kernel, e2e, peers, rounds")
    p.add_argument("--out", type=Path, default=OUT / "parallel")
    run.add_quick(p, "a small data set, to test the script")
    args = run.quick(p, p.parse_args(), rows=40_000, features=20_000, nnz=40, block_rows=5_000)
    skip = set(filter(None, args.skip.split(",")))
    text, store = data.generated(args, args.out)
    from blocksvm.store import BlockStore

    s = BlockStore(store)
    print(
        f"{s.n_rows:,} rows x {s.n_features:,} features, {s.nnz:,} nnz, {s.n_blocks} blocks; {os.cpu_count()} "
        f"cores; hinge loss, C = 1, no bias; target {args.tol:g}",
        flush=True,
    )
    base = {"loss": "hinge", "C": 1.0, "bias": -1.0}
    results: dict = {"machine": report.machine(), "store": str(store)}

    if "kernel" not in skip:
        k = run.job("kernel", store=str(store), sweeps=args.sweeps, threads=[2, 4, 8])
        results["kernel"] = k
        if "error" in k:
            print(f"kernel: {k['error']}")
        else:
            one = k["seconds"]["1"]
            print(f"\n### In-memory kernel: one block of {k['rows']:,} rows ({k['nnz']:,} nnz), {k['sweeps']} sweeps\n")
            print("| threads | seconds | speed-up | dual reached |\n|---:|---:|---:|---:|")
            for t, seconds in k["seconds"].items():
                print(f"| {t} | {seconds:.3f} | {one / seconds:.2f}x | {k['dual'][t]:.6e} |")
        m = run.job("kernel_classes", store=str(store), sweeps=args.sweeps, classes=4, threads=[2])
        results["kernel_classes"] = m
        if "error" not in m:
            one = m["seconds"]["1"]
            print(f"\nThe same block as a one-vs-rest problem of {m['classes']} classes (a problem a thread):\n")
            print("| threads | seconds | speed-up |\n|---:|---:|---:|")
            for t, seconds in m["seconds"].items():
                print(f"| {t} | {seconds:.3f} | {one / seconds:.2f}x |")

    e2e = [
        ("serial", {}, 0),
        ("--threads 2", {"threads": 2}, 0),
        ("--workers 2, old step (sigma' = K, added)", {"workers": 2, "line_search": False}, 0),
        ("--workers 2, line search, sigma' = K", {"workers": 2}, 0),
        ("--workers 2, line search, sigma' = 1", {"workers": 2, "cocoa_sigma": 1.0}, 0),
        ("dask LocalCluster, 2 workers, line search", {}, 2),
    ]
    if "e2e" not in skip:
        print(f"\n### End to end from the store, to a relative duality gap of {args.tol:g}\n", flush=True)
        print("| run | passes / rounds | train seconds | vs serial | stop |\n|---|---:|---:|---:|---|")
        rows = []
        for label, options, cluster in e2e:
            r = run.job(
                "blocksvm",
                store=str(store),
                options={**base, "tol": args.tol, "max_outer": 300, **options},
                scheduler_workers=cluster,
            )
            r["run"] = label
            rows.append(r)
            if "error" in r:
                print(f"| {label} | failed: {r['error']} | | | |", flush=True)
                continue
            speed = rows[0]["train_seconds"] / r["train_seconds"]
            print(
                f"| {label} | {r['passes']} | {r['train_seconds']:.2f} | {speed:.2f}x | {r['stop'][:40]} |", flush=True
            )
        results["end_to_end"] = rows

    if "peers" not in skip:
        fstar = run.job("blocksvm", store=str(store), options={**base, "tol": 1e-7, "max_outer": 2000})
        results["fstar"] = fstar
        print(
            f"\n### Peers, to a primal within {args.tol:g} of f* = {fstar.get('primal', float('nan')):.6e} "
            f"(blocksvm at a gap of {fstar.get('gap', float('nan')):.1e})\n",
            flush=True,
        )
        print("| peer | load seconds | setting reached | train seconds | vs its 1 thread |\n|---|---:|---|---:|---:|")
        found = []
        for label, kind, threads in (
            ("liblinear-multicore -s 3 -m 1", "liblinear", 1),
            ("liblinear-multicore -s 3 -m 2", "liblinear", 2),
            ("Snap ML SupportVectorMachine n_jobs=1", "snapml", 1),
            ("Snap ML SupportVectorMachine n_jobs=2", "snapml", 2),
        ):
            r = run.job(kind, text=str(text), threads=threads, fstar=fstar["primal"], tol=args.tol, C=1.0)
            r["run"] = label
            found.append(r)
            if "error" in r:
                print(f"| {label} | failed: {r['error']} | | | |", flush=True)
                continue
            last = r["tried"][-1]
            setting = f"-e {last['eps']}" if "eps" in last else f"max_iter {last['max_iter']}"
            reached = "" if last["rel"] <= args.tol else f" (not reached: {last['rel']:.1e})"
            first = found[-2] if threads == 2 and "error" not in found[-2] else None
            speed = f"{first['tried'][-1]['seconds'] / last['seconds']:.2f}x" if first else ""
            print(
                f"| {label} | {r['load_seconds']:.1f} | {setting}{reached} | {last['seconds']:.2f} | {speed} |",
                flush=True,
            )
        results["peers"] = found

    if "rounds" not in skip:
        print(f"\n### Rounds to a gap of {args.tol:g} by shard count (simulated on threads)\n", flush=True)
        steps = [
            ("old step: sigma' = K, added", {"line_search": False}),
            ("line search, sigma' = K", {}),
            ("line search, sigma' = 1", {"cocoa_sigma": 1.0}),
        ]
        print("| K | " + " | ".join(label for label, _ in steps) + " |\n|---:|" + "---:|" * len(steps))
        rounds = []
        for k in map(int, args.ks.split(",")):
            row = {"K": k}
            for label, options in steps:
                r = run.job(
                    "blocksvm",
                    store=str(store),
                    options={**base, "tol": args.tol, "max_outer": 400, "workers": k, **options},
                )
                row[label] = r.get("passes", r.get("error"))
            rounds.append(row)
            print(f"| {k} | " + " | ".join(str(row[label]) for label, _ in steps) + " |", flush=True)
        results["rounds"] = rounds

    print(f"\nresults in {report.write_json(args.out / 'results.json', results)}")


if __name__ == "__main__":
    main()
