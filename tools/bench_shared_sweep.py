#!/usr/bin/env python
"""One problem's resident sweep on T threads sharing ``w`` (PASSCoDe's wild updates, Hsieh, Yu & Dhillon 2015):
what it would buy and what it would cost, measured on a store kept in memory, before it is built.

After two passes of dual CD at its defaults (the store kept, the resident rows swept once a pass), the resident rows
are dealt at random to T threads and each sweeps its share with dual CD's own kernel (``sweep_working``), all writing
the same ``w`` and ``alpha`` (each row's alpha is its thread's alone; ``w``'s entries are written by every thread, and
an update can be lost). Printed, for T = 1 and 2 in turns: the seconds of the sweep; the drift of ``w`` from ``sum_i
alpha_i y_i x_i`` it leaves (what lost updates did: an exact certificate must recompute ``w`` from ``alpha`` before
it is computed); and the seconds of that recomputation on T threads (each a contiguous range of rows into its own
vector, added after)::

    python tools/bench_shared_sweep.py STORE
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from blocksvm.solvers import _dual_cd_kernels as K  # noqa: E402
from blocksvm.solvers.resident import _EMPTY_CSR, _EMPTY_ROWS  # noqa: E402
from blocksvm.train.loop import Trainer  # noqa: E402
from blocksvm.train.params import settle  # noqa: E402


@njit(nogil=True)
def add_rows(w, indptr, indices, data, coef, lo, hi):
    """``w += sum_r coef_r x_r`` over rows ``lo .. hi - 1``."""
    for r in range(lo, hi):
        c = coef[r]
        if c != 0.0:
            for k in range(indptr[r], indptr[r + 1]):
                w[indices[k]] += c * data[k]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("store", type=Path)
    p.add_argument("--repeat", type=int, default=2)
    args = p.parse_args()
    params, _ = settle("train", None, {"max_outer": 2, "tol": 0})
    trainer = Trainer(args.store, params, verbose=0)
    trainer.run()
    s, problem = trainer.solver, trainer.solver.problem
    kept = s.rows_kept
    assert kept is not None and problem.n_problems == 1, "a store the default budget keeps, two classes"
    n, width = len(kept["ids"]), s.w.shape[1]
    csr = (kept["indptr"], kept["indices"], kept["data"])
    rows = (kept["y"][0], kept["qd"][0], kept["weights"], kept["ids"])
    upper, diag = s.tables[0]
    box, loss = (upper, diag, problem.costs[0]), problem.loss.table
    hyper = np.array([problem.bias, 1.0, -1.0, s.sigma])
    rng = np.random.default_rng(0)

    def sweep(members: np.ndarray, seed: int):
        return K.sweep_working(_EMPTY_CSR, csr, _EMPTY_ROWS, rows, s.w[0], s.alpha[0], box, hyper, loss, seed,
                               members, s.shrunk[0], s.pg_old[0])  # fmt: skip

    def exact_w(threads: int) -> tuple[np.ndarray, float]:
        coef = s.alpha[0][kept["ids"]] * kept["y"][0] * s.sigma
        parts, cuts = np.zeros((threads, width)), np.linspace(0, n, threads + 1).astype(np.int64)
        start = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda t: add_rows(parts[t], *csr, coef, cuts[t], cuts[t + 1]), range(threads)))
        w = parts.sum(axis=0)
        w[-1] = coef.sum() * problem.bias if problem.bias > 0 else 0.0
        return w, time.perf_counter() - start

    sweep(np.arange(100, dtype=np.int64), 1)  # (compiled before it is timed)
    exact_w(1)
    print(f"{n:,} rows kept, {width - 1:,} features, {len(kept['indices']):,} nonzeros")
    print("| threads | sweep s | drift of w (relative) | recompute of w s |")
    print("|---:|---:|---:|---:|")
    for threads in [1, 2] * args.repeat:
        shares = [np.sort(x).astype(np.int64) for x in np.array_split(rng.permutation(n), threads)]
        start = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(sweep, shares, range(100, 100 + threads)))
        seconds = time.perf_counter() - start
        w, recompute = exact_w(threads)
        drift = np.linalg.norm(s.w[0][:-1] - w[:-1]) / np.linalg.norm(w[:-1])
        print(f"| {threads} | {seconds:.2f} | {drift:.1e} | {recompute:.2f} |")
        s.w[0][...] = w  # (each row from w = sum alpha y x again)


if __name__ == "__main__":
    main()
