#!/usr/bin/env python
"""Kernel speed: blocksvm's dual CD pass against LIBLINEAR's iteration, on the same in-memory data.

For each data set (a9a and w8a from ``../shared/data`` when present, and a generated set) and each
loss (hinge = LIBLINEAR ``-s 3``, squared hinge = ``-s 1``), in one process and on the same rows:

- **LIBLINEAR** (liblinear-official): ``train(problem(y, X), "-s S -c C -B 1 -e EPS")``, timed
  with ``time.thread_time()`` around ``train`` alone (the problem is built before). Its
  iteration count is read from its own output (``optimization finished, #iter = N``), captured
  through a print function set on the parameter object (no ``-q``). Seconds per iteration =
  train time / N. LIBLINEAR shrinks: rows whose ``alpha`` sits at a bound are dropped from later
  iterations, so its later iterations touch fewer rows than a full pass. For scale, the table
  also gives LIBLINEAR's time with ``-e 1e30``, which stops after its first (unshrunk) iteration:
  one full pass plus its setup (itself about a pass, computing ``Qbar_ii``).
- **blocksvm, full passes**: ``_dual_cd_kernels.solve_block`` on the whole data as one block (an
  empty companion B), called ``--full-passes`` times from ``alpha = 0`` with
  ``max_passes=1``: every call visits every row once (no shrinking can act within one pass).
  Seconds per pass = total / calls. This is what each visit of a block costs in training.
- **blocksvm, multi-pass**: one call with ``max_passes=1000`` (LIBLINEAR's own limit on its
  dual solvers is 300) and ``inner_eps=EPS``: LIBLINEAR's algorithm, shrinking and stopping rule
  inside the call. Seconds per pass = total / passes; this is the like-for-like comparison
  with LIBLINEAR's iterations, and the table also gives the time to reach EPS and the primal
  objective each reaches.

Rows are put in a random order first, as the converter stores them (the kernel streams runs of
consecutive rows and relies on that order being random); LIBLINEAR gets the same rows, in
float64; blocksvm gets the store's value type (float32 unless ``--dtype float64``). Both run on
one thread; each figure is the best of ``--repeat`` runs, taken in turns. Ratios are
blocksvm / LIBLINEAR (below 1: blocksvm is faster)::

    python tools/bench_epoch.py                       # a9a, w8a, 200k x 100k x 40 generated
    python tools/bench_epoch.py --sets generated --rows 1000000 --eps 0.1,0.01
    python tools/bench_epoch.py --quick               # test the script: a small generated set
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from harness import SHARED_DATA, data, peers, report, run

from blocksvm.losses import LOSSES, Loss
from blocksvm.solvers import _dual_cd_kernels as K
from blocksvm.solvers._common import row_norms_squared

LIBLINEAR_SOLVER = {"hinge": 3, "squared-hinge": 1}
BIAS = 1.0
MAX_PASSES = 1000


@dataclass
class Data:
    """One data set in both forms: float64 CSR for LIBLINEAR and objectives, kernel arrays."""

    name: str
    X: sp.csr_matrix
    y: np.ndarray  # +1 / -1
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    sq_norms: np.ndarray
    liblinear_problem: object = None  # built once, outside the timings

    @classmethod
    def from_csr(cls, name: str, X: sp.csr_matrix, labels: np.ndarray, dtype, seed: int) -> Data:
        order = np.random.default_rng(seed).permutation(X.shape[0])
        X = sp.csr_matrix(X[order], dtype=np.float64)
        X.sort_indices()
        y = np.where(labels[order] == labels.max(), 1.0, -1.0)
        values = X.data.astype(dtype)
        indptr = X.indptr.astype(np.int64)
        return cls(name, X, y, indptr, X.indices.astype(np.int32), values, row_norms_squared(indptr, values))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = run.parser(__doc__)
    p.add_argument("--sets", default="a9a,w8a,generated", help="comma-separated: a9a, w8a, generated")
    p.add_argument("--data-dir", type=Path, default=SHARED_DATA)
    p.add_argument("--rows", type=int, default=200_000, help="rows of the generated set")
    p.add_argument("--features", type=int, default=100_000)
    p.add_argument("--nnz", type=int, default=40, help="mean entries per generated row")
    p.add_argument("--losses", default="hinge,squared-hinge")
    p.add_argument("-C", type=float, default=1.0)
    p.add_argument("--eps", default="0.1", help="LIBLINEAR's -e, comma-separated values")
    p.add_argument("--full-passes", type=int, default=20, help="one-pass kernel calls timed per run")
    p.add_argument("--repeat", type=int, default=3, help="runs of each measurement; the best is kept")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"], help="blocksvm's values")
    p.add_argument("--seed", type=int, default=0)
    run.add_quick(p)
    return run.quick(p, p.parse_args(argv), sets="generated", rows=5_000, features=2_000, repeat=1, full_passes=2)


def load_sets(args: argparse.Namespace) -> list[Data]:
    sets = []
    for name in args.sets.split(","):
        if name == "generated":
            from blocksvm.datasets import generate_rows

            spec = data.spec(args.rows, args.features, args.nnz, seed=args.seed)
            block = generate_rows(spec, 0, spec.rows, "float64")
            X = sp.csr_matrix((block.data, block.indices, block.indptr), shape=(spec.rows, spec.features))
            label = f"generated {args.rows // 1000}k x {args.features // 1000}k x {args.nnz}"
            sets.append(Data.from_csr(label, X, block.labels, args.dtype, args.seed))
            continue
        found = data.real(name, args.data_dir)
        if found is None:
            print(f"({name} not in {args.data_dir}: skipped)", file=sys.stderr)
            continue
        X, labels = data.arrays(found[0])
        sets.append(Data.from_csr(name, X, labels, args.dtype, args.seed))
    return sets


def liblinear_train(data: Data, loss: str, C: float, eps: float) -> dict:
    """Train LIBLINEAR once; its train seconds, reported iterations, warning and weights."""
    from liblinear import liblinear as L

    LU = peers.liblinear()
    if data.liblinear_problem is None:
        data.liblinear_problem = LU.problem(data.y, data.X)
    out: list[str] = []
    printer = L.PRINT_STRING_FUN(lambda text: out.append(text.decode()))
    param = LU.parameter(f"-s {LIBLINEAR_SOLVER[loss]} -c {C} -B {BIAS} -e {eps}")
    param.print_func = printer  # train() installs it: LIBLINEAR's own output, captured
    start = time.thread_time()
    model = LU.train(data.liblinear_problem, param)
    seconds = time.thread_time() - start
    text = "".join(out)
    found = re.search(r"#iter = (\d+)", text)
    coef, intercept = peers.weights(model)
    return {
        "seconds": seconds,
        "iters": int(found.group(1)) if found else 0,
        "warning": "WARNING" in text,
        "switched": "Switching" in text,
        "coef": coef,
        "intercept": intercept,
    }


def kernel_call(data: Data, w, alpha, loss: Loss, C: float, max_passes: int, eps: float, seed: int):
    upper, diag = loss.dual_tables(C, C)
    empty = (
        np.zeros(1, np.int64),
        np.zeros(0, np.int32),
        np.zeros(0, data.values.dtype),
        np.zeros(0),
        np.zeros(0),
        np.zeros(0),
        np.zeros(0),
    )
    a = (data.indptr, data.indices, data.values, data.y, data.sq_norms, alpha, np.zeros(0))  # (no instance weights)
    box = (upper, diag, np.array([C, C]))
    hyper = np.array([BIAS, max_passes, eps, 1.0])
    return K.solve_block(a, empty, w, box, hyper, loss.table, seed, np.arange(len(data.y)))


def blocksvm_full(data: Data, loss: str, C: float, passes: int, seed: int) -> float:
    """Seconds per pass of one-pass calls from alpha = 0."""
    w, alpha = np.zeros(data.X.shape[1] + 1), np.zeros(len(data.y))
    start = time.thread_time()
    for call in range(passes):
        kernel_call(data, w, alpha, LOSSES[loss], C, 1, -1.0, seed + call)
    return (time.thread_time() - start) / passes


def blocksvm_multi(data: Data, loss: str, C: float, eps: float, seed: int) -> dict:
    """One call with LIBLINEAR's stopping rule: seconds, passes and weights."""
    w, alpha = np.zeros(data.X.shape[1] + 1), np.zeros(len(data.y))
    start = time.thread_time()
    stats = kernel_call(data, w, alpha, LOSSES[loss], C, MAX_PASSES, eps, seed)
    seconds = time.thread_time() - start
    return {"seconds": seconds, "passes": int(stats[K.PASSES]), "coef": w[:-1], "intercept": w[-1] * BIAS}


def primal(data: Data, coef: np.ndarray, intercept: float, loss: str, C: float) -> float:
    """``1/2 (||w||^2 + w_b^2) + C sum loss_i``, the bias weight regularized (LIBLINEAR's -B)."""
    return peers.objective(coef, intercept, data.X, data.y, C, loss, bias=BIAS)


def measure(data: Data, loss: str, eps: float, args: argparse.Namespace) -> dict:
    ll, ll_first, full, multi = None, np.inf, np.inf, None
    for r in range(args.repeat):  # in turns, so that a noisy moment hurts every contender alike
        run = liblinear_train(data, loss, args.C, eps)
        ll = run if ll is None or run["seconds"] < ll["seconds"] else ll
        # a huge -e stops LIBLINEAR after its first iteration: one full pass plus its setup
        ll_first = min(ll_first, liblinear_train(data, loss, args.C, 1e30)["seconds"])
        full = min(full, blocksvm_full(data, loss, args.C, args.full_passes, args.seed + 1000 * r))
        run = blocksvm_multi(data, loss, args.C, eps, args.seed + 1000 * r)
        multi = run if multi is None or run["seconds"] < multi["seconds"] else multi
    return {
        "data": data.name,
        "loss": loss,
        "eps": eps,
        "rows": len(data.y),
        "nnz": data.X.nnz,
        "ll": ll,
        "ll_per_iter": ll["seconds"] / max(ll["iters"], 1),
        "ll_first": ll_first,
        "full_per_pass": full,
        "multi": multi,
        "multi_per_pass": multi["seconds"] / max(multi["passes"], 1),
        "ll_primal": primal(data, ll["coef"], ll["intercept"], loss, args.C),
        "our_primal": primal(data, multi["coef"], multi["intercept"], loss, args.C),
    }


def tables(results: list[dict]) -> str:
    lines = [
        "Seconds per pass over the data (ratio: blocksvm / LIBLINEAR's seconds per iteration)",
        "",
        "| data | loss | -e | LIBLINEAR s/iter (#iter) | blocksvm full pass | ratio "
        "| blocksvm multi-pass s/pass (passes) | ratio | LIBLINEAR 1st iteration + setup |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        capped = " *" if r["multi"]["passes"] >= MAX_PASSES else ""
        lines.append(
            f"| {r['data']} | {r['loss']} | {r['eps']:g} "
            f"| {r['ll_per_iter'] * 1e3:.2f} ms ({r['ll']['iters']}{_mark(r)}) "
            f"| {r['full_per_pass'] * 1e3:.2f} ms | {r['full_per_pass'] / r['ll_per_iter']:.2f} "
            f"| {r['multi_per_pass'] * 1e3:.2f} ms ({r['multi']['passes']}{capped}) "
            f"| {r['multi_per_pass'] / r['ll_per_iter']:.2f} | {r['ll_first'] * 1e3:.2f} ms |"
        )
    lines += [
        "",
        "Time to LIBLINEAR's stopping rule (same -e), and the primal objective each reaches",
        "",
        "| data | loss | -e | LIBLINEAR s | blocksvm s | ratio | LIBLINEAR primal | blocksvm primal | rel. diff |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        rel = (r["our_primal"] - r["ll_primal"]) / r["ll_primal"]
        lines.append(
            f"| {r['data']} | {r['loss']} | {r['eps']:g} | {r['ll']['seconds']:.3f}{_mark(r)} "
            f"| {r['multi']['seconds']:.3f} | {r['multi']['seconds'] / r['ll']['seconds']:.2f} "
            f"| {r['ll_primal']:.6e} | {r['our_primal']:.6e} | {rel:+.1e} |"
        )
    lines += [
        "",
        "Full pass: every row once, no shrinking. Multi-pass: LIBLINEAR's shrinking and stopping rule in "
        "one call, like its iterations. LIBLINEAR 1st iteration + setup (-e 1e30): an upper bound of "
        "one LIBLINEAR pass without shrinking (its setup includes a pass computing Qbar_ii).",
    ]
    if any(r["multi"]["passes"] >= MAX_PASSES for r in results):
        lines += ["", f"* blocksvm stopped at its pass limit ({MAX_PASSES}) before reaching -e."]
    if any(r["ll"]["warning"] for r in results):
        lines += ["", "† LIBLINEAR stopped at its iteration limit (300) before reaching -e."]
    if any(r["ll"]["switched"] for r in results):
        lines += [
            "‡ ... and then switched to its primal solver (-s 2), whose time its seconds per "
            "iteration include: not comparable."
        ]
    return "\n".join(lines)


def _mark(r: dict) -> str:
    return " ‡" if r["ll"]["switched"] else " †" if r["ll"]["warning"] else ""


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        import liblinear.liblinearutil  # noqa: F401
    except ImportError:
        print("liblinear-official is not installed (pip install liblinear-official)", file=sys.stderr)
        return 1
    sets = load_sets(args)
    # compile (or load from numba's cache) before any clock starts
    kernel_call(sets[0], np.zeros(sets[0].X.shape[1] + 1), np.zeros(len(sets[0].y)), LOSSES["hinge"], 1.0, 1, -1.0, 0)
    results = []
    for one in sets:
        for loss in args.losses.split(","):
            for eps in (float(e) for e in args.eps.split(",")):
                print(f"{one.name} {loss} -e {eps:g} ...", file=sys.stderr, flush=True)
                results.append(measure(one, loss, eps, args))
    print(f"{report.machine()}\nC = {args.C:g}, -B {BIAS:g}, blocksvm values {args.dtype}, best of {args.repeat}, "
          "thread CPU time\n")  # fmt: skip
    print(tables(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
