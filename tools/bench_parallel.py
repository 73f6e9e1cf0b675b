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

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MULTICORE = Path(os.environ.get("LIBLINEAR_MULTICORE", REPO.parent / "peers" / "liblinear-multicore"))


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
    from blocksvm.train import train

    def one(**extra):
        return train(store, verbose=0, progress=False, **{**options, **extra})

    one(max_outer=1, **({"tol": 0.0} if "tol" in options else {}))  # numba's caches loaded before the clock
    if scheduler_workers:
        from distributed import Client, LocalCluster

        with (
            LocalCluster(
                n_workers=scheduler_workers, threads_per_worker=1, processes=True, dashboard_address=":0"
            ) as cluster,
            Client(cluster) as client,
        ):
            one(client=client, max_outer=1)  # the workers' caches
            result = one(client=client)
    else:
        result = one()
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


def primal_of(X, y, w, C: float) -> float:
    import numpy as np

    return float(0.5 * w @ w + C * np.maximum(0.0, 1.0 - y * (X @ w)).sum())


def job_liblinear(text: str, threads: int, fstar: float, tol: float, C: float) -> dict:
    """liblinear-multicore ``-s 3 -m threads``: load, then ``-e`` down a ladder until the primal is within tol."""
    sys.path.insert(0, str(MULTICORE))
    import numpy as np
    from liblinear import liblinearutil

    assert str(MULTICORE) in liblinearutil.__file__, liblinearutil.__file__
    start = time.perf_counter()
    y, X = liblinearutil.svm_read_problem(text, return_scipy=True)
    load = time.perf_counter() - start
    problem = liblinearutil.problem(y, X)
    tried = []
    for eps in (1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001):
        start = time.perf_counter()
        model = liblinearutil.train(problem, f"-s 3 -c {C} -B -1 -e {eps} -m {threads} -q")
        seconds = time.perf_counter() - start
        w, _ = model.get_decfun()
        sign = 1.0 if model.get_labels()[0] == 1 else -1.0
        rel = (primal_of(X, y, sign * np.array(w), C) - fstar) / fstar
        tried.append({"eps": eps, "seconds": seconds, "rel": rel})
        if rel <= tol:
            break
    return {"load_seconds": load, "tried": tried}


def job_snapml(text: str, threads: int, fstar: float, tol: float, C: float) -> dict:
    """Snap ML's SupportVectorMachine (regularizer 1/C, tight tol): max_iter up a ladder until within tol."""
    from sklearn.datasets import load_svmlight_file
    from snapml import SupportVectorMachine

    start = time.perf_counter()
    X, y = load_svmlight_file(text)
    load = time.perf_counter() - start
    tried = []
    for iterations in (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144):
        model = SupportVectorMachine(
            regularizer=1.0 / C, max_iter=iterations, tol=1e-12, n_jobs=threads, fit_intercept=False
        )
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
        rel = (primal_of(X, y, model.coef_.ravel(), C) - fstar) / fstar
        tried.append({"max_iter": iterations, "seconds": seconds, "rel": rel})
        if rel <= tol:
            break
    return {"load_seconds": load, "tried": tried}


JOBS = {
    "kernel": job_kernel,
    "kernel_classes": job_kernel_classes,
    "blocksvm": job_blocksvm,
    "liblinear": job_liblinear,
    "snapml": job_snapml,
}


def run_job(kind: str, **kwargs) -> dict:
    """``kind`` in a child process; its JSON result (or the error)."""
    done = subprocess.run(
        [sys.executable, __file__, "--job", kind, "--job-args", json.dumps(kwargs)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"rc {done.returncode}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---- the run ------------------------------------------------------------------------------------------


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=400_000)
    p.add_argument("--features", type=int, default=100_000)
    p.add_argument("--nnz", type=int, default=60)
    p.add_argument("--block-rows", type=int, default=50_000)
    p.add_argument("--tol", type=float, default=1e-3)
    p.add_argument("--sweeps", type=int, default=10, help="passes of the kernel measurement")
    p.add_argument("--ks", default="1,2,4,8", help="shard counts whose rounds to count")
    p.add_argument("--skip", default="", help="comma-separated parts to leave out: kernel, e2e, peers, rounds")
    p.add_argument("--out", type=Path, default=REPO / "bench-out" / "parallel")
    p.add_argument("--quick", action="store_true", help="a small data set, to test the script")
    p.add_argument("--job", help=argparse.SUPPRESS)
    p.add_argument("--job-args", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.job:
        print(json.dumps(JOBS[args.job](**json.loads(args.job_args))))
        return
    if args.quick:
        args.rows, args.features, args.nnz, args.block_rows = 40_000, 20_000, 40, 5_000
    skip = set(filter(None, args.skip.split(",")))

    from blocksvm.datasets import SyntheticSpec, write_libsvm
    from blocksvm.io import convert
    from blocksvm.store import BlockStore

    args.out.mkdir(parents=True, exist_ok=True)
    stem = f"gen-{args.rows}x{args.features}x{args.nnz}"
    text, store = args.out / f"{stem}.svm", args.out / f"{stem}-b{args.block_rows}.bsvm"
    if not text.exists():
        write_libsvm(text, SyntheticSpec(rows=args.rows, features=args.features, nnz=args.nnz, seed=11), progress=False)
    if not store.exists():
        convert(text, store, block_rows=args.block_rows, progress=False)
    s = BlockStore(store)
    print(
        f"{s.n_rows:,} rows x {s.n_features:,} features, {s.nnz:,} nnz, {s.n_blocks} blocks; {os.cpu_count()} "
        f"cores; hinge loss, C = 1, no bias; target {args.tol:g}",
        flush=True,
    )
    base = {"loss": "hinge", "C": 1.0, "bias": -1.0}
    results: dict = {"machine": {"cores": os.cpu_count(), "python": platform.python_version()}, "store": str(store)}

    if "kernel" not in skip:
        k = run_job("kernel", store=str(store), sweeps=args.sweeps, threads=[2, 4, 8])
        results["kernel"] = k
        if "error" in k:
            print(f"kernel: {k['error']}")
        else:
            one = k["seconds"]["1"]
            print(f"\n### In-memory kernel: one block of {k['rows']:,} rows ({k['nnz']:,} nnz), {k['sweeps']} sweeps\n")
            print("| threads | seconds | speed-up | dual reached |\n|---:|---:|---:|---:|")
            for t, seconds in k["seconds"].items():
                print(f"| {t} | {seconds:.3f} | {one / seconds:.2f}x | {k['dual'][t]:.6e} |")
        m = run_job("kernel_classes", store=str(store), sweeps=args.sweeps, classes=4, threads=[2])
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
            r = run_job(
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
        fstar = run_job("blocksvm", store=str(store), options={**base, "tol": 1e-7, "max_outer": 2000})
        results["fstar"] = fstar
        print(
            f"\n### Peers, to a primal within {args.tol:g} of f* = {fstar.get('primal', float('nan')):.6e} "
            f"(blocksvm at a gap of {fstar.get('gap', float('nan')):.1e})\n",
            flush=True,
        )
        print("| peer | load seconds | setting reached | train seconds | vs its 1 thread |\n|---|---:|---|---:|---:|")
        peers = []
        for label, kind, threads in (
            ("liblinear-multicore -s 3 -m 1", "liblinear", 1),
            ("liblinear-multicore -s 3 -m 2", "liblinear", 2),
            ("Snap ML SupportVectorMachine n_jobs=1", "snapml", 1),
            ("Snap ML SupportVectorMachine n_jobs=2", "snapml", 2),
        ):
            r = run_job(kind, text=str(text), threads=threads, fstar=fstar["primal"], tol=args.tol, C=1.0)
            r["run"] = label
            peers.append(r)
            if "error" in r:
                print(f"| {label} | failed: {r['error']} | | | |", flush=True)
                continue
            last = r["tried"][-1]
            setting = f"-e {last['eps']}" if "eps" in last else f"max_iter {last['max_iter']}"
            reached = "" if last["rel"] <= args.tol else f" (not reached: {last['rel']:.1e})"
            first = peers[-2] if threads == 2 and "error" not in peers[-2] else None
            speed = f"{first['tried'][-1]['seconds'] / last['seconds']:.2f}x" if first else ""
            print(
                f"| {label} | {r['load_seconds']:.1f} | {setting}{reached} | {last['seconds']:.2f} | {speed} |",
                flush=True,
            )
        results["peers"] = peers

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
                r = run_job(
                    "blocksvm",
                    store=str(store),
                    options={**base, "tol": args.tol, "max_outer": 400, "workers": k, **options},
                )
                row[label] = r.get("passes", r.get("error"))
            rounds.append(row)
            print(f"| {k} | " + " | ".join(str(row[label]) for label, _ in steps) + " |", flush=True)
        results["rounds"] = rounds

    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    print(f"\nresults in {args.out / 'results.json'}")


if __name__ == "__main__":
    main()
