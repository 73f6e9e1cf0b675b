#!/usr/bin/env python
"""L1-regularized squared hinge and logistic regression (-s 5, -s 6): blocksvm's coordinate descent over the store's
columns against LIBLINEAR, side by side in one run.

For each generated set (``blocksvm.datasets.SyntheticSpec``; ``--sets``: ``1m`` is 1M rows x 1M features x 20
nonzeros a row, ``power`` 1M rows x 2^24 features whose popularity falls as a power law) the text is written once,
then:

- **convert**: ``blocksvm convert TEXT STORE`` and ``blocksvm convert TEXT STORE --columns``, each in a child
  process (seconds, peak RSS);
- **LIBLINEAR** (liblinear-official): its load (``load_svmlight_file`` and its ``problem``), then its train at ``-e``
  1, 0.1, 0.01, 0.001, 0.0001 (each ``-e`` a run of its own: its coordinate descent has no trajectory to read): its
  time to a relative objective of 1e-3 is the train time of the first ``-e`` within 1e-3 of the best found (its
  transpose is inside its train time);
- **blocksvm**: ``blocksvm train STORE -s CODE -e 1e-4 --max-outer 300`` from the store with columns, in a child
  process (peak RSS of the command alone), at ``--threads`` 1 and 2 (one piece: LIBLINEAR's algorithm) and at 2 threads
  over 2 pieces (``--column-pieces 2``: block Jacobi); its history gives each iteration's exact objective, time and
  column entries read: the time and the passes (entries read / nonzeros) to 1e-3 are those of the first iteration
  within 1e-3 of the best found; at blocksvm's own ``--cache-mb`` unless ``--cache-mb`` is given;
- **text to model**: ``blocksvm train TEXT -s CODE`` (conversion, columns and training in one command) against
  LIBLINEAR's load and train at its default ``-e``.

Objectives are LIBLINEAR's (``||w||_1`` with the bias weight, plus ``C sum loss``), computed in numpy from each
model's weights on the same float64 rows. Printed as markdown tables and written as JSON (``--json``)::

    python tools/bench_l1.py --sets 1m power --C 1
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

LIBLINEAR_EPS = (1.0, 0.1, 0.01, 0.001, 0.0001)
TARGET = 1e-3
LOSS = {5: "squared-hinge", 6: "logistic"}
SETS = {
    "1m": {"rows": 1_000_000, "features": 1_000_000, "nnz": 20, "power": 2.0},
    "power": {"rows": 1_000_000, "features": 2**24, "nnz": 20, "power": 3.0},
}


def objective(coef, intercept: float, X, y, C: float, loss: str) -> float:
    from blocksvm.losses import LOSSES

    margins = y * (X @ coef + intercept)
    return float(np.abs(coef).sum() + abs(intercept) + C * LOSSES[loss].value(margins).sum())


# A light interpreter starts the command and reports its peak RSS: a child of this process (which holds the data
# set, over a GB) would start its peak from ours (Linux keeps the parent's peak in ru_maxrss across exec).
PEAK_OF_CHILD = (
    "import resource, subprocess, sys; code = subprocess.call(sys.argv[2:]); "
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); sys.exit(code)"
)


def child(argv: list[str]) -> tuple[float, float]:
    """Run ``argv``; its seconds and peak RSS (MB)."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as peak:
        started = time.perf_counter()
        if subprocess.call([sys.executable, "-c", PEAK_OF_CHILD, peak.name, *argv]) != 0:
            raise SystemExit(f"failed: {' '.join(argv)}")
        seconds = time.perf_counter() - started
        return seconds, int(peak.read()) / 1024


def blocksvm(*args: str) -> list[str]:
    return [sys.executable, "-m", "blocksvm.cli", *args]


def make_data(root: Path, name: str, seed: int) -> dict:
    from blocksvm.datasets import SyntheticSpec, write_libsvm

    spec = SyntheticSpec(**SETS[name], noise=0.05, seed=seed)
    text = root / f"{name}.txt"
    if not text.exists():
        write_libsvm(text, spec, progress=False)
    out = {"text": text, "text_mb": text.stat().st_size / 1e6}
    for columns in (False, True):
        store = root / f"{name}{'-columns' if columns else ''}.bsvm"
        shutil.rmtree(store, ignore_errors=True)
        seconds, rss = child(blocksvm("convert", str(text), str(store), *(["--columns"] if columns else []), "-q"))
        out["columns" if columns else "rows"] = {"store": store, "seconds": seconds, "peak_rss_mb": rss}
    return out


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


def run_blocksvm(store: Path, root: Path, code: int, C: float, X, y, threads: int, pieces: int, cache_mb):
    from blocksvm.model import LinearModel

    model_path = root / f"m{code}-{C:g}-{threads}-{pieces}.h5"
    cache = ("--cache-mb", str(cache_mb)) if cache_mb else ()
    seconds, rss = child(blocksvm("train", str(store), str(model_path), "-s", str(code), "-c", str(C), "-e", "1e-4",
                                  "--threads", str(threads), "--column-pieces", str(pieces), *cache,
                                  "--max-outer", "300", "-q"))  # fmt: skip
    history = [json.loads(line) for line in open(f"{model_path}.history.jsonl")]
    history = [r for r in history if "primal" in r and "time" in r]
    model = LinearModel.load(model_path)
    W, _ = model.weights_in(None, X.shape[1])
    passes = np.cumsum([r.get("column_passes", 0.0) for r in history])
    return {
        "history": [(r["time"], r["primal"], p) for r, p in zip(history, passes)],
        "seconds": seconds,
        "objective": objective(W[0, :-1], float(model.intercept[0]), X, y, C, LOSS[code]),
        "nonzeros": model.nonzero_weights,
        "peak_rss_mb": rss,
        "iterations": len(history),
    }


def first_within(history: list, best: float) -> tuple[float, float]:
    """(seconds, passes) of the first iteration within TARGET of ``best``."""
    return next(((t, p) for t, f, p in history if f <= best * (1 + TARGET)), (float("nan"), float("nan")))


def text_to_model(text: Path, root: Path, code: int, C: float) -> float:
    cache = root / "text-cache"
    shutil.rmtree(cache, ignore_errors=True)
    seconds, _ = child(blocksvm("train", str(text), str(root / f"t{code}.h5"), "-s", str(code), "-c", str(C),
                                "--cache-dir", str(cache), "-q"))  # fmt: skip
    return seconds


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", nargs="+", default=["1m"], choices=list(SETS))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--C", type=float, nargs="+", default=[1.0])
    p.add_argument("--codes", type=int, nargs="+", default=[5, 6])
    p.add_argument("--cache-mb", type=float, default=None)
    p.add_argument("--root", type=Path, default=Path("/tmp/bench_l1"))
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    args.root.mkdir(parents=True, exist_ok=True)
    from liblinear import liblinearutil as liblinear
    from sklearn.datasets import load_svmlight_file

    results = []
    for name in args.sets:
        made = make_data(args.root, name, args.seed)
        started = time.perf_counter()
        X, y = load_svmlight_file(str(made["text"]), n_features=SETS[name]["features"])
        problem = liblinear.problem(y, X)
        load_seconds = time.perf_counter() - started
        rows, cols = made["rows"], made["columns"]
        print(f"\n{name}: {X.shape[0]:,} rows x {X.shape[1]:,} features, {X.nnz:,} nonzeros, {made['text_mb']:.0f} MB "
              f"of text; LIBLINEAR's load {load_seconds:.1f} s; blocksvm's convert {rows['seconds']:.1f} s "
              f"({rows['peak_rss_mb']:.0f} MB), with --columns {cols['seconds']:.1f} s ({cols['peak_rss_mb']:.0f} "
              f"MB): {cols['seconds'] / rows['seconds']:.2f}x", flush=True)  # fmt: skip
        print("\n| -s | C | LIBLINEAR to 1e-3: train (-e) | blocksvm to 1e-3: 1 thread (passes) | 2 threads | 2 "
              "threads, 2 pieces (passes) | ratio 1 thread / LIBLINEAR | text to model: blocksvm / LIBLINEAR load + "
              "train | peak RSS (1 thread) |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|---|")
        for code in args.codes:
            for C in args.C:
                lib = run_liblinear(X, y, code, C, problem)
                ours = {(t, pc): run_blocksvm(cols["store"], args.root, code, C, X, y, t, pc, args.cache_mb)
                        for t, pc in ((1, 1), (2, 1), (2, 2))}  # fmt: skip
                best = min([r["objective"] for r in lib] + [f for o in ours.values() for _, f, _ in o["history"]])
                lib_time, lib_eps = next(((r["seconds"], r["eps"]) for r in lib
                                          if r["objective"] <= best * (1 + TARGET)), (float("nan"), None))  # fmt: skip
                reached = {key: first_within(o["history"], best) for key, o in ours.items()}
                lib_default = next(r["seconds"] for r in lib if r["eps"] == 0.01)
                whole = text_to_model(made["text"], args.root, code, C)
                row = {
                    "set": name, "code": code, "C": C, "best": best, "liblinear": lib, "liblinear_load": load_seconds,
                    "liblinear_to_target": lib_time, "liblinear_eps": lib_eps, "text_to_model": whole,
                    "blocksvm": {f"{t}x{pc}": {**o, "to_target": reached[(t, pc)]} for (t, pc), o in ours.items()},
                    "convert": {k: {kk: vv for kk, vv in v.items() if kk != "store"} for k, v in
                                (("rows", rows), ("columns", cols))},
                }  # fmt: skip
                results.append(row)
                one, two, pieces = reached[(1, 1)], reached[(2, 1)], reached[(2, 2)]
                print(f"| {code} | {C:g} | {lib_time:.2f} s (-e {lib_eps}) | {one[0]:.2f} s ({one[1]:.1f}) | "
                      f"{two[0]:.2f} s ({one[0] / two[0]:.2f}x) | {pieces[0]:.2f} s ({pieces[1]:.1f}; "
                      f"{one[0] / pieces[0]:.2f}x) | {one[0] / lib_time:.2f} | {whole:.1f} s / "
                      f"{load_seconds + lib_default:.1f} s = {whole / (load_seconds + lib_default):.2f} | "
                      f"{ours[(1, 1)]['peak_rss_mb']:.0f} MB |", flush=True)  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
