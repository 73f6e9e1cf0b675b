#!/usr/bin/env python
"""L1-regularized squared hinge and logistic regression (-s 5, -s 6): blocksvm's OWL-QN from the store against
LIBLINEAR, side by side in one run (issue 32).

One generated set (``blocksvm.datasets.SyntheticSpec``: ``--rows`` x ``--features``, ``--nnz`` entries a row) is
written as LIBSVM text and converted to a store. For each code (5, 6) and C:

- LIBLINEAR (liblinear-official): the text loaded into memory (``load_svmlight_file`` and LIBLINEAR's ``problem``,
  timed apart), then trained at ``-e`` 1, 0.1, 0.01, 0.001, 0.0001 (its coordinate descent has no trajectory to
  read, so each ``-e`` is a run of its own): its time to a relative objective of 1e-3 is the train time of the first
  ``-e`` whose objective is within 1e-3 of the best found;
- blocksvm: ``blocksvm train STORE -s CODE -c C -e 1e-5 --threads 1 --read-threads 1`` in a child process (its
  peak RSS from ``os.wait4``), every iteration's exact objective and time in the history: its time to 1e-3 is the
  time of the first iteration within 1e-3 of the best found.

Objectives are LIBLINEAR's (``||w||_1`` with the bias weight, plus ``C sum loss``), computed in numpy from each
model's weights on the same float64 rows; "best found" is the least of every run's. Printed as a table and written
as JSON (``--json``)::

    python tools/bench_l1.py --rows 200000 --features 200000 --nnz 20
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

LIBLINEAR_EPS = (1.0, 0.1, 0.01, 0.001, 0.0001)
TARGET = 1e-3
LOSS = {5: "squared-hinge", 6: "logistic"}


def objective(coef, intercept: float, X, y, C: float, loss: str) -> float:
    from blocksvm.losses import LOSSES

    margins = y * (X @ coef + intercept)
    return float(np.abs(coef).sum() + abs(intercept) + C * LOSSES[loss].value(margins).sum())


def make_data(root: Path, rows: int, features: int, nnz: int, seed: int) -> tuple[Path, Path, float]:
    from blocksvm.datasets import SyntheticSpec, write_libsvm
    from blocksvm.io import convert

    spec = SyntheticSpec(rows=rows, features=features, nnz=nnz, noise=0.05, seed=seed)
    text, store = root / f"l1-{rows}x{features}.txt", root / f"l1-{rows}x{features}.bsvm"
    if not text.exists():
        write_libsvm(text, spec, progress=False)
    started = time.perf_counter()
    if not store.exists():
        convert(text, store, progress=False)
    return text, store, time.perf_counter() - started


def run_liblinear(X, y, code: int, C: float, problem) -> list[dict]:
    from liblinear import liblinearutil as liblinear

    runs = []
    for eps in LIBLINEAR_EPS:
        started = time.perf_counter()
        model = liblinear.train(problem, f"-s {code} -c {C} -B 1 -e {eps} -q")
        seconds = time.perf_counter() - started
        w, b = model.get_decfun()
        sign = 1.0 if model.get_labels()[0] == 1 else -1.0
        coef = sign * np.array(w)
        runs.append({"eps": eps, "seconds": seconds, "objective": objective(coef, sign * b, X, y, C, LOSS[code]),
                     "nonzeros": int(np.count_nonzero(coef))})  # fmt: skip
    return runs


def run_blocksvm(store: Path, root: Path, code: int, C: float, X, y) -> dict:
    from blocksvm.model import LinearModel

    model_path = root / f"m{code}-{C:g}.h5"
    argv = [sys.executable, "-m", "blocksvm.cli", "train", str(store), str(model_path), "-s", str(code), "-c", str(C),
            "-e", "1e-5", "--threads", "1", "--read-threads", "1", "-q"]  # fmt: skip
    started = time.perf_counter()
    child = subprocess.Popen(argv)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"blocksvm train failed: {' '.join(argv)}")
    history = [json.loads(line) for line in open(f"{model_path}.history.jsonl")]
    history = [r for r in history if "primal" in r and "time" in r]
    model = LinearModel.load(model_path)
    W, _ = model.weights_in(None, X.shape[1])
    final = objective(W[0, :-1], float(model.intercept[0]), X, y, C, LOSS[code])
    return {
        "history": [(r["time"], r["primal"]) for r in history],
        "seconds": seconds,
        "train_seconds": history[-1]["time"],
        "objective": final,
        "nonzeros": model.nonzero_weights,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "iterations": len(history),
        "passes": sum(r.get("owlqn_passes", 0) for r in history),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--features", type=int, default=200_000)
    p.add_argument("--nnz", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--C", type=float, nargs="+", default=[0.1, 1.0])
    p.add_argument("--codes", type=int, nargs="+", default=[5, 6])
    p.add_argument("--root", type=Path, default=Path("/tmp/bench_l1"))
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    args.root.mkdir(parents=True, exist_ok=True)
    from liblinear import liblinearutil as liblinear
    from sklearn.datasets import load_svmlight_file

    text, store, convert_seconds = make_data(args.root, args.rows, args.features, args.nnz, args.seed)
    started = time.perf_counter()
    X, y = load_svmlight_file(str(text), n_features=args.features)
    problem = liblinear.problem(y, X)
    load_seconds = time.perf_counter() - started
    print(f"{args.rows:,} rows x {args.features:,} features, {X.nnz:,} nonzeros; LIBLINEAR's load "
          f"{load_seconds:.2f} s, blocksvm's convert {convert_seconds:.2f} s", flush=True)  # fmt: skip
    results = []
    for code in args.codes:
        for C in args.C:
            lib = run_liblinear(X, y, code, C, problem)
            ours = run_blocksvm(store, args.root, code, C, X, y)
            best = min([r["objective"] for r in lib] + [ours["objective"]] + [f for _, f in ours["history"]])
            lib_time = next((r["seconds"] for r in lib if r["objective"] <= best * (1 + TARGET)), float("nan"))
            lib_eps = next((r["eps"] for r in lib if r["objective"] <= best * (1 + TARGET)), float("nan"))
            ours_time = next((t for t, f in ours["history"] if f <= best * (1 + TARGET)), float("nan"))
            row = {
                "code": code, "C": C, "best": best, "liblinear_seconds": lib_time, "liblinear_eps": lib_eps,
                "liblinear_load": load_seconds, "blocksvm_seconds": ours_time, "blocksvm_convert": convert_seconds,
                "liblinear_nonzeros": lib[-1]["nonzeros"], "blocksvm_nonzeros": ours["nonzeros"],
                "liblinear_final_gap": lib[-1]["objective"] / best - 1,
                "blocksvm_final_gap": ours["objective"] / best - 1,
                "blocksvm_peak_rss_mb": ours["peak_rss_mb"], "blocksvm_passes": ours["passes"],
                "blocksvm_train_seconds": ours["train_seconds"], "liblinear_runs": lib,
            }  # fmt: skip
            results.append(row)
            print(
                f"-s {code} C {C:g}: to 1e-3  LIBLINEAR {lib_time:.2f} s (-e {lib_eps:g}; +{load_seconds:.2f} s load "
                f"= {lib_time + load_seconds:.2f})  blocksvm {ours_time:.2f} s (+{convert_seconds:.2f} s convert = "
                f"{ours_time + convert_seconds:.2f}); ratio {ours_time / lib_time:.2f}x from the store, "
                f"{(ours_time + convert_seconds) / (lib_time + load_seconds):.2f}x load included; nonzeros "
                f"{lib[-1]['nonzeros']:,} / {ours['nonzeros']:,}; blocksvm {ours['passes']} passes to -e 1e-5 in "
                f"{ours['train_seconds']:.1f} s, peak RSS {ours['peak_rss_mb']:.0f} MB",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "results": results},
                                        indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
