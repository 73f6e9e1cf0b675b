#!/usr/bin/env python
"""Choosing C by 5-fold cross-validation over 8 values of C: ``blocksvm tune`` against LIBLINEAR and
``GridSearchCV(BlockSVC)``, in one run on one generated set (issue 23).

- **blocksvm tune**: the store, every fold's problems side by side (one read a pass for all folds), warm starts
  along C; again with ``--working-set block`` (no support-vector cache solved with every block); and with
  ``--cold`` the default search with ``warm=False`` (each C from zero).
- **blocksvm train** at the largest C of the grid, once: the yardstick of issue 23's "at most 4x one training".
- **LIBLINEAR** (liblinear-official): the rows loaded once (``problem()``, timed apart), then ``train(prob,
  '-s 1 -v 5 -c C -B 1')`` for each C: the same 40 trainings (its own random split), dual CD as ours.
- **GridSearchCV(BlockSVC)** (``--gridsearch``; off by default above 200,000 rows): 5-fold ``cv`` over the same
  grid on the arrays, each fit writing its own temporary store.

Every run stops as its tool does by default (blocksvm: relative duality gap ``--tol``, 1e-3; LIBLINEAR: its
``-e 0.1`` PG rule) unless ``--tol`` / ``--liblinear-eps`` say otherwise. Printed: docs/BENCHMARKS.md's table
(seconds, best C, its CV accuracy, the ratios to LIBLINEAR and to one training) and the ratios of issue 23's targets;
``--json`` writes the figures::

    python tools/bench_tune.py --rows 100000            # a few minutes
    python tools/bench_tune.py                          # 1M rows: the issue's size
    python tools/bench_tune.py --quick                  # test the script: 20,000 rows
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from harness import OUT, data, peers, report, run


def parse_args(argv=None) -> argparse.Namespace:
    p = run.parser(__doc__)
    p.add_argument("--rows", type=int, default=1_000_000, help="generated rows (default 1,000,000)")
    p.add_argument("--features", type=int, default=20_000)
    p.add_argument("--nnz", type=int, default=30, help="mean nonzeros a row (default 30)")
    p.add_argument("--noise", type=float, default=0.1)
    p.add_argument("--block-rows", type=int, default=100_000)
    p.add_argument("--grid", default="2^-9..2^-2", help="the 8 values of C (blocksvm --C-grid syntax)")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--tol", type=float, default=1e-3, help="blocksvm's relative duality gap (default 1e-3)")
    p.add_argument("--liblinear-eps", type=float, default=0.1, help="LIBLINEAR -e (default 0.1, its default)")
    p.add_argument("--cold", action="store_true", help="also run the search without warm starts")
    p.add_argument("--gridsearch", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--work", type=Path, default=OUT / "tune")
    p.add_argument("--json", type=Path, help="write the figures here")
    run.add_quick(p)
    return run.quick(p, p.parse_args(argv), rows=20_000, block_rows=5_000)


def make_data(args) -> Path:
    path = args.work / f"gen-{args.rows}-{args.features}-{args.nnz}.bsvm"
    return data.generated_store(path, data.spec(args.rows, args.features, args.nnz, seed=7, noise=args.noise),
                                args.block_rows)  # fmt: skip


def timed(run):
    start = time.perf_counter()
    value = run()
    return time.perf_counter() - start, value


def bench_blocksvm(store: Path, grid: tuple, args) -> dict:
    from blocksvm.train import train, tune

    tune(store, folds=args.folds, C_grid=grid[:2], tol=args.tol, verbose=0, progress=False)  # compile, page cache
    figures = {}
    runs = {"tune": {}, "tune_block": {"working_set": "block"}}
    runs |= {"tune_cold": {"warm": False}} if args.cold else {}
    for name, more in runs.items():
        seconds, result = timed(
            lambda m=more: tune(store, folds=args.folds, C_grid=grid, tol=args.tol, verbose=0, progress=False, **m)
        )
        figures[name] = {"seconds": seconds, "best_C": result.best_C, "best_score": result.best_score}
        figures[name]["points"] = [
            {"C": p.C, "accuracy": p.score, "spread": p.spread, "passes": p.passes, "seconds": p.seconds}
            for p in result.points
        ]
        print(result.table(), flush=True)
    seconds, result = timed(lambda: train(store, C=max(grid), tol=args.tol, verbose=0, progress=False))
    figures["train_largest_C"] = {"seconds": seconds, "passes": result.model.summary["outer_iterations"]}
    return figures


def bench_liblinear(X, y, grid: tuple, args) -> dict:
    liblinear = peers.liblinear()
    load, prob = timed(lambda: liblinear.problem(y, X))
    points = []
    for C in grid:
        options = f"-s 1 -v {args.folds} -c {C} -B 1 -e {args.liblinear_eps} -q"
        seconds, accuracy = timed(lambda o=options: liblinear.train(prob, o))
        points.append({"C": C, "accuracy": accuracy / 100, "seconds": seconds})
        print(f"LIBLINEAR -v {args.folds} -c {C:g}: {accuracy:.2f}% in {seconds:.2f} s", flush=True)
    best = max(points, key=lambda p: p["accuracy"])  # the first (smallest C) of ties
    train_seconds = sum(p["seconds"] for p in points)
    return {"load_seconds": load, "seconds": train_seconds, "best_C": best["C"], "best_score": best["accuracy"]} | {
        "points": points
    }


def bench_gridsearch(X, y, grid: tuple, args) -> dict:
    from sklearn.model_selection import GridSearchCV

    from blocksvm import BlockSVC

    search = GridSearchCV(BlockSVC(tol=args.tol, verbose=0), {"C": list(grid)}, cv=args.folds, n_jobs=1)
    seconds, _ = timed(lambda: search.fit(X, y))
    return {"seconds": seconds, "best_C": search.best_params_["C"], "best_score": float(search.best_score_)}


def summary(figures: dict, grid: tuple, args) -> None:
    """docs/BENCHMARKS.md's table, then issue 23's ratios."""
    lib, one = figures["liblinear"], figures["train_largest_C"]
    named = [
        ("`blocksvm tune` (defaults: warm starts, `--working-set cache`)", figures["tune"]),
        ("`blocksvm tune --working-set block`", figures.get("tune_block")),
        ("`blocksvm tune --no-warm`", figures.get("tune_cold")),
        (f"LIBLINEAR `-s 1 -v {args.folds} -B 1`, once per C (rows loaded once: {lib['load_seconds']:.1f} s, not "
         "counted)", lib),
        ("`GridSearchCV(BlockSVC)`", figures.get("gridsearch")),
    ]  # fmt: skip
    rows = [[name, f"{f['seconds']:.1f}", f"{f['best_C']:.4g}", f"{100 * f['best_score']:.2f}%",
             f"{f['seconds'] / lib['seconds']:.2f}", f"{f['seconds'] / one['seconds']:.1f}"]
            for name, f in named if f]  # fmt: skip
    rows.append([f"`blocksvm train -C {max(grid):g}` (one training at the largest C: {one['passes']} passes)",
                 f"{one['seconds']:.1f}", "", "", "", "1"])  # fmt: skip
    what = f"{args.folds}-fold CV over C = {args.grid} ({len(grid)} values), {args.rows:,} rows"
    print("\n" + report.table([what, "seconds", "best C", "CV accuracy", "vs LIBLINEAR", "vs one training"], rows))
    tune = figures["tune"]["seconds"]
    steps = abs(math.log2(figures["tune"]["best_C"]) - math.log2(lib["best_C"]))
    print(f"\ntune / LIBLINEAR's {args.folds * len(grid)} trainings: {tune / lib['seconds']:.3f} (target <= 0.25)")
    print(f"tune / one training at the largest C: {tune / one['seconds']:.2f} (target <= 4)")
    print(f"best C: blocksvm {figures['tune']['best_C']:g}, LIBLINEAR {lib['best_C']:g}: {steps:g} grid steps apart")
    if "tune_cold" in figures:
        print(f"warm / cold search: {tune / figures['tune_cold']['seconds']:.2f}")


def main(argv=None) -> int:
    from blocksvm.run_options import _c_grid

    args = parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    print(report.machine(), flush=True)
    grid = tuple(sorted(_c_grid(args.grid)))
    store = make_data(args)
    figures = {"rows": args.rows, "features": args.features, "nnz": args.nnz, "grid": grid, "folds": args.folds}
    figures |= bench_blocksvm(store, grid, args)
    X, y = data.arrays(store)
    figures["liblinear"] = bench_liblinear(X, y, grid, args)
    if args.gridsearch or (args.gridsearch is None and args.rows <= 200_000):
        figures["gridsearch"] = bench_gridsearch(X, y, grid, args)
    summary(figures, grid, args)
    if args.json:
        report.write_json(args.json, figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
