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
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from blocksvm.datasets import SyntheticSpec, generate_rows, make_store
from blocksvm.io import convert
from blocksvm.train import train

REPO = Path(__file__).resolve().parents[1]
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
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", default="a9a,w8a,gen-200k")
    p.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    p.add_argument("--working-sets", default="cache,pair")
    p.add_argument("-C", type=float, default=1.0)
    p.add_argument("--loss", default="squared-hinge", choices=("squared-hinge", "hinge"))
    p.add_argument("--max-outer", type=int, default=200)
    return p.parse_args(argv)


def load(name: str, args: argparse.Namespace, work: Path):
    """(store, X float64 CSR, y in {-1, +1}) of one set, or None when its file is missing."""
    if name == "gen-200k":
        spec = SyntheticSpec(rows=200_000, features=100_000, nnz=80, seed=4)
        block = generate_rows(spec, 0, spec.rows, "float64")
        X = sp.csr_matrix((block.data, block.indices, block.indptr), shape=(spec.rows, spec.features))
        store = make_store(work / f"{name}.bsvm", spec, block_rows=25_000, progress=False)
        return store, X, block.labels
    from sklearn.datasets import load_svmlight_file

    path = args.data_dir / name
    if not path.exists():
        print(f"({path} not found: {name} skipped)", file=sys.stderr)
        return None
    X, labels = load_svmlight_file(str(path))
    store = work / f"{name}.bsvm"
    convert(path, store, block_rows=math.ceil(X.shape[0] / 8), progress=False)
    return store, X, np.where(labels > 0, 1.0, -1.0)


def optimum(X, y, args: argparse.Namespace) -> float:
    from liblinear import liblinearutil as ll

    model = ll.train(ll.problem(y, X), f"-s {3 if args.loss == 'hinge' else 2} -c {args.C} -B 1 -e 1e-6 -q")
    w, b = model.get_decfun()
    sign = 1.0 if model.get_labels()[0] == 1 else -1.0
    w, b = sign * np.asarray(w), sign * b
    slack = np.maximum(0.0, 1.0 - y * (X @ w + b))
    losses = slack if args.loss == "hinge" else slack**2
    return 0.5 * (w @ w + b * b) + args.C * losses.sum()


def run(store: Path, fstar: float, working_set: str, passes: int, inner_eps: float, args) -> dict:
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
    work = Path(tempfile.mkdtemp(prefix="bench-inner-"))
    try:
        head = " | ".join(f"s / loads to {t:.0e}" for t in TARGETS)
        print(f"C = {args.C:g}, {args.loss}, bias 1; seconds of training (evaluation excluded) / block loads\n")
        print(f"| set | working set | inner passes | {head} |")
        print("|---|---|---|" + "---:|" * len(TARGETS))
        for name in args.sets.split(","):
            loaded = load(name, args, work)
            if loaded is None:
                continue
            store, X, y = loaded
            fstar = optimum(X, y, args)
            train(store, max_outer=1, verbose=0, progress=False)  # compile before any clock
            for working_set in args.working_sets.split(","):
                for label, (passes, inner_eps) in SETTINGS.items():
                    found = run(store, fstar, working_set, passes, inner_eps, args)
                    cells = [f"{found[t][0]:.2f} / {found[t][1]}" if t in found else "—" for t in TARGETS]
                    print(f"| {name} | {working_set} | {label} | " + " | ".join(cells) + " |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
