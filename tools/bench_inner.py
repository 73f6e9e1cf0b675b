#!/usr/bin/env python
"""Inner/outer balance: how many dual-CD passes over the working set per block visit pay off.

For each data set (a9a and w8a from ``../shared/data`` when present; a generated 200k x 100k x 80
set) the store is cut into 8 blocks or more, f* comes from LIBLINEAR ``-s 2 -e 1e-6`` (primal
objective computed here in float64), and blocksvm trains with an exact evaluation after every pass
(``eval_every=1``; evaluation time is not counted: times are ``train_time``) for each setting:

- ``--inner-passes`` 1, 2, 3, 5, 10: a fixed number of passes per visit;
- adaptive: up to 10 passes, a visit ending after the first pass whose projected-gradient
  violation over the working set is at most ``--inner-eps`` (0.1, LIBLINEAR's default ``-e``, or 1).

Printed: seconds and block loads (visits) to relative primal objective ``(P - f*) / f*`` of 1e-2,
1e-3 and 1e-4, per working set (``cache``, the default, and ``pair``)::

    python tools/bench_inner.py                       # a9a, w8a, gen-200k: about 5 minutes
    python tools/bench_inner.py --sets a9a --working-sets cache
    python tools/bench_inner.py --quick               # test the script: a9a, the cache working set
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from harness import OUT, SHARED_DATA, data, peers, report, run

from blocksvm.train import train

TARGETS = (1e-2, 1e-3, 1e-4)
SETTINGS = {
    "1": (1, 0.0),
    "2": (2, 0.0),
    "3": (3, 0.0),
    "5": (5, 0.0),
    "10": (10, 0.0),
    "≤10, eps 0.1": (10, 0.1),
    "≤10, eps 1": (10, 1.0),
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = run.parser(__doc__, full=True)
    p.add_argument("--sets", default="a9a,w8a,gen-200k")
    p.add_argument("--data-dir", type=Path, default=SHARED_DATA)
    p.add_argument("--working-sets", default="cache,pair")
    p.add_argument("-C", type=float, default=1.0)
    p.add_argument("--loss", default="squared-hinge", choices=("squared-hinge", "hinge"))
    p.add_argument("--max-outer", type=int, default=200)
    p.add_argument("--work", type=Path, default=OUT / "inner", help="stores (default bench-out/inner)")
    run.add_quick(p)
    return run.quick(p, p.parse_args(argv), sets="a9a", working_sets="cache")


def load(name: str, args: argparse.Namespace, work: Path):
    """(store, X float64 CSR, y in {-1, +1}) of one set, or None when its file is missing."""
    if name == "gen-200k":
        store = data.generated_store(work / f"{name}.bsvm", data.spec(200_000, 100_000, 80, seed=4), 25_000)
        X, y = data.arrays(store)  # (in store order: the rows are the same)
        return store, X, y
    found = data.real(name, args.data_dir)
    if found is None:
        print(f"({name} not in {args.data_dir}: skipped)", file=sys.stderr)
        return None
    X, labels = data.arrays(found[0])
    store = data.store(found[0], work / f"{name}.bsvm", block_rows=math.ceil(X.shape[0] / 8))
    return store, X, np.where(labels > 0, 1.0, -1.0)


def optimum(X, y, args: argparse.Namespace) -> float:
    ll = peers.liblinear()
    model = ll.train(ll.problem(y, X), f"-s {3 if args.loss == 'hinge' else 2} -c {args.C} -B 1 -e 1e-6 -q")
    w, b = peers.weights(model)
    return peers.objective(w, b, X, y, args.C, args.loss)


def measure(store: Path, fstar: float, working_set: str, passes: int, inner_eps: float, args) -> dict:
    result = train(
        store,
        C=args.C,
        loss=args.loss,
        working_set=working_set,
        inner_passes=passes,
        inner_eps=inner_eps,
        eval_every=1,
        tol=1e-5,
        max_outer=args.max_outer,
        verbose=0,
        progress=False,
    )
    found = {}
    for record in result.history:
        if record["primal_exact"]:
            for target in TARGETS:
                if target not in found and (record["primal"] - fstar) / fstar <= target:
                    found[target] = (record["train_time"], record["blocks_visited"])
    return found


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(report.machine())
    print(f"C = {args.C:g}, {args.loss}, bias 1; seconds of training (evaluation excluded) / block loads\n")
    rows = []
    for name in args.sets.split(","):
        loaded = load(name, args, args.work)
        if loaded is None:
            continue
        store, X, y = loaded
        fstar = optimum(X, y, args)
        train(store, max_outer=1, verbose=0, progress=False)  # compile before any clock
        for working_set in args.working_sets.split(","):
            for label, (passes, inner_eps) in SETTINGS.items():
                found = measure(store, fstar, working_set, passes, inner_eps, args)
                cells = [f"{found[t][0]:.2f} / {found[t][1]}" if t in found else "—" for t in TARGETS]
                rows.append([name, working_set, label, *cells])
                print(f"  {name}, {working_set}, {label}: done", file=sys.stderr, flush=True)
    header = ["set", "working set", "inner passes", *(f"s / loads to {t:.0e}" for t in TARGETS)]
    print(report.table(header, rows, "lll" + "r" * len(TARGETS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
