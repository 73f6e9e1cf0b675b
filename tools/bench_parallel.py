#!/usr/bin/env python
"""CoCoA+ rounds against the serial trainer, in one run: time and rounds to a duality gap, bytes per round.

On one generated store (cached in ``bench-out/parallel``) whose blocks take >= 0.2 s of dual CD each:

- time to a relative duality gap of ``--tol`` (1e-3) for the serial trainer, ``--workers 2`` (joblib
  threads) and a 2-worker ``dask.distributed.LocalCluster`` (worker processes, one thread each);
  times are ``train_time`` (exact evaluation passes excluded, as in bench_peers.py);
- rounds to the same gap for K = 1, 2, 4, 8 shards (on threads of this machine: the rounds do not
  depend on where the shards run, so K = 8 on 2 cores is a simulation of 8 workers);
- bytes moved per round: ``w`` to every worker and each worker's ``w_k``, dual sums and pass figures
  back, measured as the pickled size of those objects (what dask sends);
- per-round seconds of every run, for docs/PARALLEL.md's scale on paper.

::

    python tools/bench_parallel.py                 # about 15 minutes on 2 cores
    python tools/bench_parallel.py --quick         # test the script: a minute
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import statistics
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(label: str, store, **options) -> dict:
    from blocksvm.train import train

    start = time.perf_counter()
    result = train(store, verbose=0, **options)
    wall = time.perf_counter() - start
    history = result.history
    row = {
        "run": label,
        "workers": result.model.params["workers"],
        "rounds": len(history),
        "stop": result.stop_reason,
        "gap": history[-1]["gap"],
        "train_seconds": history[-1]["train_time"],
        "wall_seconds": round(wall, 2),
        "round_seconds": [
            round(b["train_time"] - a, 3) for a, b in zip([0.0] + [h["train_time"] for h in history[:-1]], history)
        ],
        "compute_seconds": round(sum(h["compute_seconds"] for h in history), 2),
        "blocks_visited": history[-1]["blocks_visited"],
    }
    print(
        f"{label:<28} K={row['workers']:<2} rounds {row['rounds']:>3}  train {row['train_seconds']:8.2f} s  "
        f"gap {row['gap']:.2e}  ({row['stop'][:60]})",
        flush=True,
    )
    return row


def bytes_per_round(store, workers: int, params) -> dict:
    """Pickled sizes of what one round moves: w out to each worker, each worker's results back."""
    import numpy as np

    from blocksvm.solvers import Problem
    from blocksvm.solvers.dual_cd import DualCDSolver
    from blocksvm.store import ReadStats
    from blocksvm.train.parallel import ShardRound, shard_blocks
    from blocksvm.train.records import PassSums

    problem = Problem.from_store(store, params, DualCDSolver.loss_of(params))
    W = np.zeros((problem.n_problems, problem.n_weights))
    out = len(pickle.dumps(W, protocol=5))
    back = 0
    for blocks in shard_blocks(store.n_blocks, workers):
        figures = {"pg_max": [0.0] * problem.n_problems, "pg_min": [0.0] * problem.n_problems}
        sums = PassSums([0.0] * problem.n_problems, figures=figures)
        result = ShardRound(W, sums, np.zeros((problem.n_problems, len(blocks), 2)), 0, ReadStats())
        back += len(pickle.dumps(result, protocol=5))
    return {
        "workers": workers,
        "w_bytes": out,
        "to_workers": out * workers,
        "from_workers": back,
        "total": out * workers + back,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=640_000)
    parser.add_argument("--features", type=int, default=200_000)
    parser.add_argument("--nnz", type=int, default=80)
    parser.add_argument("--block-rows", type=int, default=40_000)
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--ks", default="1,2,4,8", help="shard counts whose rounds to count")
    parser.add_argument("--out", default=str(REPO / "bench-out" / "parallel"))
    parser.add_argument("--quick", action="store_true", help="a small store, to test the script")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.features, args.nnz, args.block_rows = 40_000, 20_000, 40, 5_000

    from distributed import Client, LocalCluster

    from blocksvm.datasets import SyntheticSpec, make_store
    from blocksvm.store import BlockStore
    from blocksvm.train import TrainParams

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = f"gen-{args.rows}x{args.features}x{args.nnz}-b{args.block_rows}.bsvm"
    path = out / name
    if not path.exists():
        make_store(
            path,
            SyntheticSpec(rows=args.rows, features=args.features, nnz=args.nnz, seed=11),
            block_rows=args.block_rows,
            progress=False,
        )
    store = BlockStore(path)
    common = {"tol": args.tol, "max_outer": 300}
    print(
        f"{store.n_rows} rows x {store.n_features} features, {store.nnz} nnz, {store.n_blocks} blocks; "
        f"{os.cpu_count()} cores; target gap {args.tol:g}",
        flush=True,
    )

    rows = [run("serial", store, **common)]
    serial = rows[0]
    per_block = serial["compute_seconds"] / serial["blocks_visited"]
    print(f"serial: {per_block:.3f} s of dual CD per block visit", flush=True)
    rows.append(run("joblib threads, --workers 2", store, workers=2, **common))
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        run("dask LocalCluster (warm-up)", store, client=client, **{**common, "max_outer": 1})
        rows.append(run("dask LocalCluster, 2 workers", store, client=client, **common))
    simulated = [run(f"threads, K = {k} (rounds)", store, workers=k, **common) for k in map(int, args.ks.split(","))]
    traffic = [bytes_per_round(store, k, TrainParams(**common)) for k in map(int, args.ks.split(","))]

    print("\n| run | K | rounds to gap | train seconds | vs serial | median round s |")
    print("|---|---|---|---|---|---|")
    for r in rows + simulated:
        speed = serial["train_seconds"] / r["train_seconds"]
        print(
            f"| {r['run']} | {r['workers']} | {r['rounds']} | {r['train_seconds']:.2f} | {speed:.2f}x | "
            f"{statistics.median(r['round_seconds']):.3f} |"
        )
    print("\n| K | w (bytes) | to workers per round | back per round | total per round |")
    print("|---|---|---|---|---|")
    for t in traffic:
        print(f"| {t['workers']} | {t['w_bytes']:,} | {t['to_workers']:,} | {t['from_workers']:,} | {t['total']:,} |")
    result = {
        "store": {
            "path": str(path),
            "rows": store.n_rows,
            "features": store.n_features,
            "nnz": store.nnz,
            "blocks": store.n_blocks,
            "bytes": sum(b["bytes"] for b in store.blocks),
        },
        "seconds_per_block_visit": per_block,
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "runs": rows,
        "simulated": simulated,
        "bytes_per_round": traffic,
    }
    (out / "results.json").write_text(json.dumps(result, indent=1))
    print(f"\nresults in {out / 'results.json'}")


if __name__ == "__main__":
    main()
