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
  within 1e-3 of the best found; at blocksvm's own ``--memory-mb`` unless ``--memory-mb`` is given;
- **text to model**: ``blocksvm train TEXT -s CODE`` (conversion, columns and training in one command) against
  LIBLINEAR's load and train at its default ``-e``.

Objectives are LIBLINEAR's (``||w||_1`` with the bias weight, plus ``C sum loss``), computed in numpy from each
model's weights on the same float64 rows. Printed as docs/BENCHMARKS.md's table (C = 1: its columns) and written as
JSON (``--json``)::

    python tools/bench_l1.py --sets 1m power --C 1     # docs/BENCHMARKS.md
    python tools/bench_l1.py --quick                    # test the script: 20,000 rows, a minute
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np
from harness import OUT, data, peers, report, run

LIBLINEAR_EPS = (1.0, 0.1, 0.01, 0.001, 0.0001)
TARGET = 1e-3
LOSS = {5: "squared-hinge", 6: "logistic"}
SETS = {
    "1m": {"rows": 1_000_000, "features": 1_000_000, "nnz": 20, "power": 2.0},
    "power": {"rows": 1_000_000, "features": 2**24, "nnz": 20, "power": 3.0},
    "small": {"rows": 20_000, "features": 20_000, "nnz": 20, "power": 2.0},  # --quick
}
BLOCKS = {"small": ["--block-mb", "1"]}  # (several column blocks: two pieces need two)


def child(argv: list[str]) -> tuple[float, float]:
    """Run ``argv`` (:func:`harness.run.command`: its own peak, not this process's); its seconds and peak RSS (MB)."""
    done = run.command(argv)
    if "error" in done:
        raise SystemExit(f"failed: {' '.join(map(str, argv))}: {done['error']}")
    return done["seconds"], done["peak_rss_mb"]


def make_data(root: Path, name: str, seed: int) -> dict:
    text = data.text(root / f"{name}.txt", data.spec(**SETS[name], noise=0.05, seed=seed))
    out = {"text": text, "text_mb": text.stat().st_size / 1e6}
    for columns in (False, True):
        store = root / f"{name}{'-columns' if columns else ''}.bsvm"
        shutil.rmtree(store, ignore_errors=True)
        columns_option = ["--columns"] if columns else []
        seconds, rss = child(run.cli("convert", text, store, *columns_option, *BLOCKS.get(name, []), "-q"))
        out["columns" if columns else "rows"] = {"store": store, "seconds": seconds, "peak_rss_mb": rss}
    return out


def run_liblinear(X, y, code: int, C: float, problem) -> list[dict]:
    liblinear = peers.liblinear()
    runs = []
    for eps in LIBLINEAR_EPS:
        started = time.perf_counter()
        model = liblinear.train(problem, f"-s {code} -c {C} -B 1 -e {eps} -q")
        seconds = time.perf_counter() - started
        coef, b = peers.weights(model)
        runs.append({"eps": eps, "seconds": seconds, "objective": peers.objective(coef, b, X, y, C, LOSS[code], "l1"),
                     "nonzeros": int(np.count_nonzero(coef))})  # fmt: skip
    return runs


def run_blocksvm(store: Path, root: Path, code: int, C: float, X, y, threads: int, pieces: int, memory_mb):
    from blocksvm.model import LinearModel

    model_path = root / f"m{code}-{C:g}-{threads}-{pieces}.h5"
    cache = ("--memory-mb", str(memory_mb)) if memory_mb else ()
    seconds, rss = child(run.cli("train", store, model_path, "-s", code, "-c", C, "-e", "1e-4", "--threads", threads,
                                 "--column-pieces", pieces, *cache, "--max-outer", "300", "-q"))  # fmt: skip
    history = [json.loads(line) for line in open(f"{model_path}.history.jsonl")]
    history = [r for r in history if "primal" in r and "time" in r]
    model = LinearModel.load(model_path)
    W, _ = model.weights_in(None, X.shape[1])
    passes = np.cumsum([r.get("column_passes", 0.0) for r in history])
    return {
        "history": [(r["time"], r["primal"], p) for r, p in zip(history, passes)],
        "seconds": seconds,
        "objective": peers.objective(W[0, :-1], float(model.intercept[0]), X, y, C, LOSS[code], "l1"),
        "nonzeros": model.nonzero_weights,
        "peak_rss_mb": rss,
        "iterations": len(history),
    }


def warm(root: Path, codes: list[int], seed: int) -> None:
    """Every measured command once on the small set first: numba compiles a command's kernels in its first run."""
    store = make_data(root, "small", seed)["columns"]["store"]
    for code in codes:
        for threads, pieces in CONFIGS:
            child(run.cli("train", store, root / "warm.h5", "-s", code, "--threads", threads, "--column-pieces", pieces,
                          "--max-outer", "2", "-q"))  # fmt: skip


CONFIGS = ((1, 1), (2, 1), (2, 2))  # blocksvm's threads and column pieces


def first_within(history: list, best: float) -> tuple[float, float]:
    """(seconds, passes) of the first iteration within TARGET of ``best``."""
    return next(((t, p) for t, f, p in history if f <= best * (1 + TARGET)), (float("nan"), float("nan")))


def text_to_model(text: Path, root: Path, code: int, C: float) -> float:
    cache = root / "text-cache"
    shutil.rmtree(cache, ignore_errors=True)
    seconds, _ = child(run.cli("train", text, root / f"t{code}.h5", "-s", code, "-c", C, "--cache-dir", cache, "-q"))
    return seconds


HEADER = ["set", "-s", "LIBLINEAR train to 1e-3 (-e)", "blocksvm 1 thread (passes)", "ratio", "`--threads 2`",
          "`--threads 2 --column-pieces 2` (passes)", "text to model: blocksvm / LIBLINEAR load + train",
          "peak RSS, 1 thread"]  # fmt: skip


def table_row(row: dict) -> list:
    """docs/BENCHMARKS.md's row of one set and code (and the peak RSS of the 1-thread run)."""
    ours = row["blocksvm"]
    one, two, pieces = (ours[k]["to_target"] for k in ("1x1", "2x1", "2x2"))
    lib, whole = row["liblinear_to_target"], row["text_to_model"]
    load = row["liblinear_load"] + row["liblinear_default"]
    return [row["set"] + (f", C {row['C']:g}" if row["C"] != 1 else ""), row["code"],
            f"{lib:.2f} s ({row['liblinear_eps']})", f"{one[0]:.2f} s ({one[1]:.1f})", f"**{one[0] / lib:.2f}**",
            f"{two[0]:.2f} s ({one[0] / two[0]:.2f}×)", f"{pieces[0]:.2f} s ({pieces[1]:.1f})",
            f"{whole:.1f} / {load:.1f} s = **{whole / load:.2f}**",
            f"{ours['1x1']['peak_rss_mb']:,.0f} MB"]  # fmt: skip


def main() -> None:
    p = run.parser(__doc__, full=True)
    p.add_argument("--sets", nargs="+", default=["1m"], choices=list(SETS))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--C", type=float, nargs="+", default=[1.0])
    p.add_argument("--codes", type=int, nargs="+", default=[5, 6])
    p.add_argument("--memory-mb", type=float, default=None)
    p.add_argument("--root", type=Path, default=OUT / "l1", help="data, stores and models (default bench-out/l1)")
    p.add_argument("--json", type=Path)
    run.add_quick(p, "the small set: to test the script")
    args = run.quick(p, p.parse_args(), sets=["small"])
    args.root.mkdir(parents=True, exist_ok=True)
    from sklearn.datasets import load_svmlight_file

    print(report.machine(), flush=True)
    warm(args.root, args.codes, args.seed)
    results = []
    for name in args.sets:
        made = make_data(args.root, name, args.seed)
        started = time.perf_counter()
        X, y = load_svmlight_file(str(made["text"]), n_features=SETS[name]["features"])
        problem = peers.liblinear().problem(y, X)
        load_seconds = time.perf_counter() - started
        rows, cols = made["rows"], made["columns"]
        print(f"\n{name}: {X.shape[0]:,} rows x {X.shape[1]:,} features, {X.nnz:,} nonzeros, {made['text_mb']:.0f} MB "
              f"of text; LIBLINEAR's load {load_seconds:.1f} s; blocksvm's convert {rows['seconds']:.1f} s "
              f"({rows['peak_rss_mb']:.0f} MB), with --columns {cols['seconds']:.1f} s ({cols['peak_rss_mb']:.0f} "
              f"MB): {cols['seconds'] / rows['seconds']:.2f}x", flush=True)  # fmt: skip
        for code in args.codes:
            for C in args.C:
                lib = run_liblinear(X, y, code, C, problem)
                ours = {(t, pc): run_blocksvm(cols["store"], args.root, code, C, X, y, t, pc, args.memory_mb)
                        for t, pc in CONFIGS}  # fmt: skip
                best = min([r["objective"] for r in lib] + [f for o in ours.values() for _, f, _ in o["history"]])
                lib_time, lib_eps = next(((r["seconds"], r["eps"]) for r in lib
                                          if r["objective"] <= best * (1 + TARGET)), (float("nan"), None))  # fmt: skip
                results.append({
                    "set": name, "code": code, "C": C, "best": best, "liblinear": lib, "liblinear_load": load_seconds,
                    "liblinear_to_target": lib_time, "liblinear_eps": lib_eps,
                    "liblinear_default": next(r["seconds"] for r in lib if r["eps"] == 0.01),
                    "text_to_model": text_to_model(made["text"], args.root, code, C),
                    "blocksvm": {f"{t}x{pc}": {**o, "to_target": first_within(o["history"], best)}
                                 for (t, pc), o in ours.items()},
                    "convert": {k: {kk: vv for kk, vv in v.items() if kk != "store"} for k, v in
                                (("rows", rows), ("columns", cols))},
                })  # fmt: skip
                print(f"  -s {code}, C {C:g}: done", flush=True)
    print("\n" + report.table(HEADER, [table_row(r) for r in results]))
    if args.json:
        report.write_json(args.json, results)


if __name__ == "__main__":
    main()
