#!/usr/bin/env python
"""At both programs' defaults, how far from the optimum do -s 5 and -s 6 end? blocksvm's coordinate descent over
columns against LIBLINEAR's (liblinear-official), side by side in one run.

Both programs' coordinate descent visits the features in a random order, so one run of either is one draw: the
objective at the default ``-e`` 0.01 moves by up to 1e-3 from draw to draw on a9a. LIBLINEAR has no seed (its
``rand()``), so its draws here are its runs on the same rows with the columns relabeled by a random permutation
(draw 0: as stored); blocksvm's are its ``--seed``. For each data set, code, C and bias, ``--draws`` draws of each;
the optimum is the least objective of every run and of LIBLINEAR's and blocksvm's at ``-e 1e-6``. Printed: the
median distance to the optimum ``(F - F*) / F*`` and the median nonzero count of each program's draws::

    python tools/bench_l1_defaults.py --data a9a w8a generated --C 0.1 1 10 --draws 5   # docs/BENCHMARKS.md
    python tools/bench_l1_defaults.py --quick      # test the script: the generated set, C = 1, 2 draws
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp
from harness import OUT, data, peers, report, run

LOSS = {5: "squared-hinge", 6: "logistic"}


def generated():
    """6,000 rows of 1,000 features (2% dense), a separator on 30 of them: many irrelevant features."""
    rng = np.random.default_rng(1)
    n = 6000
    X = sp.random(n, 1000, density=0.02, format="csr", random_state=rng, data_rvs=lambda k: rng.uniform(0, 1, k))
    w = np.zeros(1000)
    w[rng.choice(1000, 30, replace=False)] = 3.0 * rng.normal(size=30)
    score = X @ w
    y = np.where(score + 0.3 * rng.normal(size=n) > np.median(score), 1.0, -1.0)
    return X, y


def data_set(name: str, root: Path):
    """The rows of ``name`` (``generated``, or a real set of ../shared/data) and their store, written once."""
    from blocksvm import write_store

    if name == "generated":
        X, y = generated()
    else:
        found = data.real(name)
        if found is None:
            raise SystemExit(f"{name} is not in ../shared/data")
        X, y = data.arrays(found[0])
    store = root / f"{name}.bsvm"
    if not store.exists():
        write_store((X, y), store, progress=False)
    return X.tocsr(), y, store


def liblinear_draw(X, y, code: int, C: float, bias: float, draw: int, eps: float | None = None):
    """LIBLINEAR's model on the columns relabeled by draw ``draw``'s permutation, mapped back: ``(w, b)``."""
    liblinear = peers.liblinear()
    perm = np.random.default_rng(draw).permutation(X.shape[1]) if draw else np.arange(X.shape[1])
    model = liblinear.train(
        liblinear.problem(y, X[:, perm]), f"-s {code} -c {C} -B {bias} -q" + (f" -e {eps}" if eps else "")
    )
    w, b = peers.weights(model)
    out = np.zeros(X.shape[1])
    out[perm] = w
    return out, b


def blocksvm_draw(store: Path, n: int, code: int, C: float, bias: float, seed: int, eps: float | None = None):
    from blocksvm.train import train

    extra = {"eps": eps} if eps else {}
    result = train(store, penalty="l1", loss=LOSS[code], C=C, bias=bias, seed=seed, verbose=0, **extra)
    W, _ = result.model.weights_in(None, n)
    return W[0, :-1], float(result.model.intercept[0])


def compare(name: str, X, y, store: Path, code: int, C: float, bias: float, draws: int) -> dict:
    n = X.shape[1]
    lib = [liblinear_draw(X, y, code, C, bias, d) for d in range(draws)]
    ours = [blocksvm_draw(store, n, code, C, bias, d) for d in range(draws)]
    tight = [liblinear_draw(X, y, code, C, bias, 0, 1e-6), blocksvm_draw(store, n, code, C, bias, 0, 1e-6)]
    f = {k: [peers.objective(w, b, X, y, C, LOSS[code], "l1", bias) for w, b in runs] for k, runs in
         (("lib", lib), ("ours", ours), ("tight", tight))}  # fmt: skip
    best = min(min(v) for v in f.values())
    distance = {k: float(np.median(f[k])) / best - 1 for k in ("lib", "ours")}
    nonzeros = {
        k: float(np.median([np.count_nonzero(w) for w, _ in runs])) for k, runs in (("lib", lib), ("ours", ours))
    }
    optimal_nonzeros = [int(np.count_nonzero(w)) for w, _ in tight]
    closer = distance["ours"] <= distance["lib"] or abs(distance["ours"] - distance["lib"]) <= 1e-4
    near = [abs(nonzeros["ours"] - m) <= max(0.05 * m, 3) for m in (nonzeros["lib"], *optimal_nonzeros)]
    return {"data": name, "code": code, "C": C, "bias": bias, "distance": distance, "nonzeros": nonzeros,
            "optimal_nonzeros": optimal_nonzeros, "objective_met": bool(closer), "nonzeros_met": bool(any(near)),
            "all": {k: [v / best - 1 for v in f[k]] for k in f}}  # fmt: skip


HEADER = ["data", "-s", "C", "-B", "median (F - F*)/F*: LIBLINEAR / blocksvm",
          "median nonzeros: LIBLINEAR / blocksvm (at -e 1e-6: LIBLINEAR, blocksvm)", "met"]  # fmt: skip


def table_row(r: dict) -> list:
    """docs/BENCHMARKS.md's row of one case."""
    met = {(True, True): "yes", (True, False): "objective", (False, True): "nonzeros"}
    return [r["data"], r["code"], f"{r['C']:g}", f"{r['bias']:+g}",
            f"{r['distance']['lib']:.1e} / {r['distance']['ours']:.1e}",
            f"{r['nonzeros']['lib']:g} / {r['nonzeros']['ours']:g} ({', '.join(map(str, r['optimal_nonzeros']))})",
            met.get((r["objective_met"], r["nonzeros_met"]), "no")]  # fmt: skip


def main() -> None:
    p = run.parser(__doc__, full=True)
    p.add_argument("--data", nargs="+", default=["a9a", "w8a", "generated"])
    p.add_argument("--C", type=float, nargs="+", default=[0.1, 1.0, 10.0])
    p.add_argument("--bias", type=float, nargs="+", default=[1.0, -1.0])
    p.add_argument("--codes", type=int, nargs="+", default=[5, 6])
    p.add_argument("--draws", type=int, default=5)
    p.add_argument("--root", type=Path, default=OUT / "l1-defaults", help="stores (default bench-out/l1-defaults)")
    p.add_argument("--json", type=Path)
    run.add_quick(p)
    args = run.quick(p, p.parse_args(), data=["generated"], C=[1.0], draws=2)
    args.root.mkdir(parents=True, exist_ok=True)
    print(report.machine(), flush=True)
    rows = []
    for name in args.data:
        X, y, store = data_set(name, args.root)
        for code in args.codes:
            for C in args.C:
                for bias in args.bias:
                    rows.append(compare(name, X, y, store, code, C, bias, args.draws))
                    print(f"  {name} -s {code} C {C:g} -B {bias:+g}: done", flush=True)
    print("\n" + report.table(HEADER, [table_row(r) for r in rows], "l" * len(HEADER)))
    if args.json:
        report.write_json(args.json, rows)


if __name__ == "__main__":
    main()
