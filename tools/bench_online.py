#!/usr/bin/env python
"""The online learners in one run: every learner beside dual CD and Vowpal Wabbit, then ``blocksvm
stream`` against VW's one pass on a large generated file.

**Part 1 — learners** (``--sets a9a,w8a``; a9a is tested on a9a.t, w8a on a held-out fifth of its
rows): each data set is converted once into a shuffled store; every online learner of the registry
(``online = True``) trains 1 and 5 passes (defaults, ``--average`` where the learner reads it),
timed after a warm-up (numba compiles once); reported: test accuracy, progressive accuracy of the
last pass, nonzero weights, seconds. Beside them: dual CD to a 1e-3 duality gap, and VW (hinge loss,
its default adaptive normalized updates, a cache file) with 1 and 5 passes, its LIBSVM→VW
conversion timed apart.

**Part 2 — one pass from text** (``--stream-gb``, default 2): a generated LIBSVM file of that size
(cached in ``--out``) and 200,000 held-out rows. ``blocksvm stream FILE MODEL --solver NAME --json``
for each ``--stream-solvers``, against VW one pass (``--loss_function hinge``, no cache) on the VW
text it needs, whose conversion is counted. Each command runs alone in a fresh process (wall
seconds and peak RSS: :func:`harness.run.command`); end-to-end MB/s is the LIBSVM file's size over the
command's wall seconds. Test accuracy on the held-out rows. The tables are docs/BENCHMARKS.md's::

    python tools/bench_online.py                         # both parts (about 15 minutes)
    python tools/bench_online.py --stream-gb 0.2         # a small try of part 2
    python tools/bench_online.py --skip-stream           # part 1 only
    python tools/bench_online.py --quick                 # test the script: a9a, 0.02 GB
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from harness import OUT, SHARED_DATA, data, peers, report, run

TEST_ROWS = 200_000  # part 2's held-out rows


def main() -> int:
    p = run.parser(__doc__)
    p.add_argument("--sets", default="a9a,w8a")
    p.add_argument("--data-dir", type=Path, default=SHARED_DATA)
    p.add_argument("--out", type=Path, default=OUT / "online")
    p.add_argument("--stream-gb", type=float, default=2.0, help="size of the generated text of part 2")
    p.add_argument(
        "--stream-solvers",
        default="perceptron,ftrl,ftrl --ftrl-alpha 0.5",
        help="learners timed in part 2, comma-separated, each with its options",
    )
    p.add_argument(
        "--stream-loss",
        default="hinge",
        choices=("hinge", "logistic"),
        help="VW's --loss_function in part 2 (logistic: give the learners --loss logistic in --stream-solvers); "
        "the table adds the test log loss",
    )
    p.add_argument("--skip-learners", action="store_true")
    p.add_argument("--skip-stream", action="store_true")
    run.add_quick(p)
    args = run.quick(p, p.parse_args(), sets="a9a", stream_gb=0.02)
    args.out.mkdir(parents=True, exist_ok=True)
    print(report.machine())
    if not args.skip_learners:
        for name in args.sets.split(","):
            learners_table(name, args)
    if not args.skip_stream:
        stream_table(args)
    return 0


# ---- part 1 ------------------------------------------------------------------------------------


def learners_table(name: str, args) -> None:
    result = run.job("learners", args.out / f"learners-{name}.log", set=name, data_dir=args.data_dir, out=args.out)
    print(f"\n### {name} ({result.get('note', '')})\n")
    rows = [[row["learner"], row["passes"], f"{100 * row['accuracy']:.2f}%",
             "" if row["progressive"] is None else f"{100 * row['progressive']:.2f}%", f"{row['nonzero']:,}",
             f"{row['seconds']:.3f}"] for row in result.get("rows", [])]  # fmt: skip
    header = ["learner", "passes", "test acc.", "progressive acc. (last pass)", "nonzero weights", "seconds"]
    print(report.table(header, rows))
    if "error" in result:
        print(f"(failed: {result['error']})")


def job_learners(set: str, data_dir: str, out: str) -> dict:
    import numpy as np

    from blocksvm.solvers import SOLVERS
    from blocksvm.train import train
    from blocksvm.train.params import PARAMS

    work = Path(out) / set
    found = data.real(set, Path(data_dir))
    if found is None:
        raise SystemExit(f"{set} is not in {data_dir}")
    train_text, test_text, _ = found
    note = f"test: {test_text.name}" if test_text else "test: every fifth row held out"
    if test_text is None:
        train_text, test_text = data.held_out(train_text, work, every=5, held=0)
    store = data.store(train_text, work / "train.bsvm", block_rows=5000)
    X, y = data.arrays(test_text)
    rows = []

    def timed_run(label, passes, **params):
        train(store, max_outer=1, verbose=0, **{k: v for k, v in params.items() if k != "max_outer"})  # compile
        start = time.perf_counter()
        result = train(store, max_outer=passes, verbose=0, **params)
        seconds = time.perf_counter() - start
        model = result.model
        Xt = X[:, : model.n_features] if X.shape[1] > model.n_features else X
        accuracy = float(np.mean(model.predict(Xt) == y))
        rows.append({"learner": label, "passes": len(result.history), "accuracy": accuracy,
                     "progressive": result.history[-1].get("progressive_accuracy"),
                     "nonzero": int(np.count_nonzero(model.coef)), "seconds": seconds})  # fmt: skip

    for solver_name, solver in SOLVERS.items():
        if not solver.online:
            continue
        extra = {"average": True} if solver_name in PARAMS["average"].solvers else {}
        for passes in (1, 5):
            timed_run(solver_name + (" (average)" if extra else ""), passes, solver=solver_name, **extra)
    timed_run("dual CD (gap 1e-3)", 100, loss="hinge")
    rows += vw_rows(train_text, test_text, X.shape[1], work)
    return {"rows": rows, "note": note}


def vw_rows(train_text: Path, test_text: Path, n_features: int, work: Path) -> list[dict]:
    import numpy as np

    vw_text = work / "train.vw"
    peers.to_vw(train_text, vw_text)
    X, y = data.arrays(test_text, n_features)
    rows = []
    for passes in (1, 5):
        start = time.perf_counter()
        w, b, _ = peers.vw(vw_text, n_features, passes)
        seconds = time.perf_counter() - start
        accuracy = float(np.mean(np.where(X @ w + b > 0, 1.0, -1.0) == y))
        rows.append({"learner": "Vowpal Wabbit (hinge)", "passes": passes, "accuracy": accuracy, "progressive": None,
                     "nonzero": int(np.count_nonzero(w)), "seconds": seconds})  # fmt: skip
    return rows


# ---- part 2 ------------------------------------------------------------------------------------


def stream_spec(gb: float):
    """The generated set of part 2: about ``gb`` GB of training text (1,230 bytes a row of 80 nonzeros) and
    :data:`TEST_ROWS` more."""
    rows = int(gb * 1e9 / 1230)
    return data.spec(rows + TEST_ROWS, 1_000_000, 80, seed=7)


def stream_table(args) -> None:
    folder = args.out / f"stream-{args.stream_gb:g}gb"
    spec = stream_spec(args.stream_gb)
    train_text, test_text = data.split(folder, "stream", spec, TEST_ROWS)
    size = train_text.stat().st_size
    print(f"\n### One pass from text: {spec.rows - TEST_ROWS:,} rows x {spec.features:,} features, {size / 1e9:.2f} GB "
          f"of LIBSVM text (test: {TEST_ROWS:,} held-out rows)\n")  # fmt: skip
    rows = []
    for entry in args.stream_solvers.split(","):
        solver, *options = entry.split()
        tag = "-".join([solver, *options]).replace("--", "")
        model = folder / f"{tag}.h5"
        done = run.command(run.cli("stream", train_text, model, "--solver", solver, *options, "--json"),
                           folder / f"stream-{tag}.log")  # fmt: skip
        if done.get("error"):
            rows.append([f"blocksvm stream --solver {entry}", f"failed: {done['error']}", "", "", "", "", ""])
            continue
        summary = json.loads(done["stdout"])
        accuracy = run.job("accuracy", folder / "acc.log", model=model, test=test_text)
        rows.append([f"blocksvm stream --solver {entry}", f"{done['seconds']:.1f}",
                     f"{size / 1e6 / done['seconds']:.0f}", f"{done['peak_rss_mb']:.0f}",
                     f"{100 * accuracy['accuracy']:.2f}%", f"{accuracy['log_loss']:.4f}",
                     f"{100 * summary['progressive_accuracy']:.2f}%"])  # fmt: skip
    vw = job_vw_stream(train_text, test_text, folder, spec.features, args.stream_loss)
    if "error" in vw:
        rows.append(["Vowpal Wabbit", f"failed: {vw['error']}", "", "", "", "", ""])
    else:
        total = vw["convert_seconds"] + vw["seconds"]
        rows.append([f"Vowpal Wabbit, one pass (LIBSVM→VW {vw['convert_seconds']:.1f} s + VW {vw['seconds']:.1f} s)",
                     f"{total:.1f}", f"{size / 1e6 / total:.0f}", f"{vw['peak_rss_mb']:.0f}",
                     f"{100 * vw['accuracy']:.2f}%", f"{vw['log_loss']:.4f}", ""])  # fmt: skip
    header = ["method", "seconds", "MB/s (end to end)", "peak RSS MB", "test acc.", "test log loss", "progressive acc."]
    print(report.table(header, rows))


def job_accuracy(model: str, test: str) -> dict:
    from blocksvm.model import LinearModel

    model = LinearModel.load(model)
    X, y = data.arrays(Path(test))
    return scores(model.decision_function(X[:, : model.n_features]), y)  # (features the training rows lacked: 0)


def scores(values, y) -> dict:
    """Test accuracy, and the log loss of the decision values read as logistic regression's."""
    import numpy as np

    return {
        "accuracy": float(np.mean(np.where(values > 0, 1.0, -1.0) == y)),
        "log_loss": float(np.mean(np.logaddexp(0.0, -y * values))),
    }


def job_vw_stream(train: Path, test: Path, work: Path, features: int, loss: str = "hinge") -> dict:
    """VW one pass: the conversion here (its seconds), then VW alone in a job (its seconds and peak RSS)."""
    vw_text = work / "train.vw"
    convert_seconds = peers.to_vw(train, vw_text)["seconds"]
    done = run.job("vw_pass", work / "vw-pass.log", vw_text=vw_text, features=features, work=work, test=test, loss=loss)
    vw_text.unlink()
    return done if "error" in done else {"convert_seconds": convert_seconds, **done}


def job_vw_pass(vw_text: str, features: int, work: str, test: str, loss: str = "hinge") -> dict:
    w, b, _ = peers.vw(Path(vw_text), features, 1, loss, cache=False)
    X, y = data.arrays(Path(test), features)
    return scores(X @ w + b, y)


if __name__ == "__main__":
    run.serve({"learners": job_learners, "accuracy": job_accuracy, "vw_pass": job_vw_pass})
    sys.exit(main())
