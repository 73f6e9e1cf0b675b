#!/usr/bin/env python
"""Dual CD from blocks in the page cache against LIBLINEAR's load and train, side by side in one run.

One generated set (1,000,000 rows x 500,000 features x 60 nonzeros by default, P3-like: squared hinge, C = 1,
bias 1), its LIBSVM text and its store, cached in ``--out``. In turns, each in a process of its own:

- ``blocksvm train`` from the store (in the page cache) at its defaults, to its 1e-3 relative duality gap: wall
  seconds, passes, the primal it certifies, and where its seconds went (the first pass reads and decodes the store;
  the later ones sweep the rows kept in memory);
- LIBLINEAR (liblinear-official) ``-s 1 -c 1 -B 1`` at its default ``-e 0.1``: its reader's seconds
  (``svm_read_problem``), its ``problem`` and its train's, and the primal it reaches;
- the ratios the issue asks for: blocksvm's wall over LIBLINEAR's train alone and over its load + train.

::

    python tools/bench_sweeps.py            # the 1M x 500k x 60 set: about 10 minutes on 2 cores
    python tools/bench_sweeps.py --quick    # 100,000 rows: test the script
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from harness import OUT, data, peers, report, run


def job_blocksvm(store: str, folder: str) -> dict:
    """A training run at the defaults, its numba caches loaded first (a tiny run)."""
    from blocksvm.train import train

    data.warm_up(Path(folder), params={})
    start = time.perf_counter()
    result = train(store, verbose=0, progress=False, history_path=Path(folder) / "sweeps.history.jsonl")
    seconds = time.perf_counter() - start
    last, later = result.history[-1], [r["seconds"]["wall"] for r in result.history[1:]]
    return {"seconds": seconds, "passes": len(result.history), "primal": last["primal"], "gap": last["gap"],
            "first_pass": result.history[0]["seconds"], "later": later}  # fmt: skip


def job_liblinear(text: str, C: float) -> dict:
    """LIBLINEAR's reader, its problem and its train (-s 1 -B 1 at its default -e), and the primal it reaches."""
    import numpy as np

    liblinear = peers.liblinear()
    start = time.perf_counter()
    y, X = liblinear.svm_read_problem(text, return_scipy=True)
    read = time.perf_counter() - start
    start = time.perf_counter()
    problem = liblinear.problem(y, X)
    made = time.perf_counter() - start
    start = time.perf_counter()
    model = liblinear.train(problem, f"-s 1 -c {C} -B 1 -q")
    trained = time.perf_counter() - start
    w, b = peers.weights(model)
    labels = np.where(y > 0, 1.0, -1.0)
    return {"read": read, "problem": made, "train": trained, "primal": peers.objective(w, b, X, labels, C,
                                                                                        "squared-hinge")}  # fmt: skip


def main() -> None:
    run.serve({"blocksvm": job_blocksvm, "liblinear": job_liblinear})
    p = run.parser(__doc__)
    data.generated_args(p, rows=1_000_000, features=500_000, nnz=60, block_rows=100_000)
    p.add_argument("--repeat", type=int, default=1, help="runs of each, in turns")
    p.add_argument("--out", type=Path, default=OUT / "sweeps")
    run.add_quick(p)
    args = run.quick(p, p.parse_args(), rows=100_000, features=50_000, block_rows=10_000)
    args.out.mkdir(parents=True, exist_ok=True)
    text, store = data.generated(args, args.out)
    data.warm_page_cache(text)
    for block in sorted(store.glob("*.h5")):
        data.warm_page_cache(block)
    print(report.machine(), file=sys.stderr)
    jobs = {"blocksvm": lambda: run.job("blocksvm", store=str(store), folder=str(args.out)),
            "liblinear": lambda: run.job("liblinear", text=str(text), C=1.0)}  # fmt: skip
    results = run.in_turns(list(jobs), args.repeat, lambda name: jobs[name]())
    ours = min(results["blocksvm"], key=lambda r: r["seconds"])
    theirs = min(results["liblinear"], key=lambda r: r["train"])
    load = theirs["read"] + theirs["problem"]
    rows = [
        ["blocksvm train (store in the page cache)", report.seconds(ours["seconds"]), ours["passes"],
         f"{ours['primal']:.6e}", f"{ours['seconds'] / theirs['train']:.2f}",
         f"{ours['seconds'] / (load + theirs['train']):.2f}"],
        ["LIBLINEAR train alone (-s 1, -e 0.1)", report.seconds(theirs["train"]), "", f"{theirs['primal']:.6e}",
         "1.00", ""],
        ["LIBLINEAR load + train", report.seconds(load + theirs["train"]), "", "", "", "1.00"],
    ]  # fmt: skip
    print(f"\n{args.rows:,} x {args.features:,} x {args.nnz}, squared hinge, C = 1, bias 1\n")
    print(report.table(["run", "seconds", "passes", "primal", "/ LIBLINEAR train", "/ LIBLINEAR load + train"], rows))
    print(f"\nblocksvm's first pass: {json.dumps(ours['first_pass'])}; later passes' wall: "
          f"{', '.join(f'{x:.2f}' for x in ours['later'])} s")  # fmt: skip
    report.write_json(args.out / "bench_sweeps.json", {"machine": report.machine(), "results": results})


if __name__ == "__main__":
    main()
