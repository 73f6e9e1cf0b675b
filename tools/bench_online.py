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
seconds and peak RSS from ``os.wait4``; the parent imports nothing heavy); end-to-end MB/s is the
LIBSVM file's size over the command's wall seconds. Test accuracy on the held-out rows::

    python tools/bench_online.py                         # both parts (about 15 minutes)
    python tools/bench_online.py --stream-gb 0.2         # a small try of part 2
    python tools/bench_online.py --skip-stream           # part 1 only
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default="a9a,w8a")
    p.add_argument("--data-dir", type=Path, default=SHARED)
    p.add_argument("--out", type=Path, default=REPO / "bench-out" / "online")
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
    p.add_argument("--job", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.job:
        return run_child(json.loads(args.job))
    args.out.mkdir(parents=True, exist_ok=True)
    print(machine())
    if not args.skip_learners:
        for name in args.sets.split(","):
            learners_table(name, args)
    if not args.skip_stream:
        stream_table(args)
    return 0


# ---- part 1 ------------------------------------------------------------------------------------


def learners_table(name: str, args) -> None:
    result = child(
        {"kind": "learners", "set": name, "data_dir": str(args.data_dir), "out": str(args.out)},
        args.out / f"learners-{name}.log",
    )
    print(f"\n### {name} ({result.get('note', '')})\n")
    print("| learner | passes | test acc. | progressive acc. (last pass) | nonzero weights | seconds |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in result.get("rows", []):
        prog = "" if row["progressive"] is None else f"{100 * row['progressive']:.2f}%"
        print(
            f"| {row['learner']} | {row['passes']} | {100 * row['accuracy']:.2f}% | {prog} | {row['nonzero']:,} "
            f"| {row['seconds']:.3f} |"
        )
    if "error" in result:
        print(f"(failed: {result['error']})")


def job_learners(set: str, data_dir: str, out: str) -> dict:
    import numpy as np
    from sklearn.datasets import load_svmlight_file

    from blocksvm.io import convert
    from blocksvm.solvers import SOLVERS
    from blocksvm.train import train
    from blocksvm.train.params import PARAMS

    work = Path(out) / set
    work.mkdir(parents=True, exist_ok=True)
    train_text, test_text, note = Path(data_dir) / set, Path(data_dir) / f"{set}.t", "test: a9a.t"
    if not test_text.exists():  # hold out every fifth row
        lines = train_text.read_bytes().splitlines(keepends=True)
        lines = [line for line in lines if line.strip()]
        (work / "train.svm").write_bytes(b"".join(line for i, line in enumerate(lines) if i % 5))
        (work / "test.svm").write_bytes(b"".join(line for i, line in enumerate(lines) if i % 5 == 0))
        train_text, test_text, note = work / "train.svm", work / "test.svm", "test: every fifth row held out"
    store = work / "train.bsvm"
    if not store.exists():
        convert(train_text, store, block_rows=5000, progress=False)
    X, y = load_svmlight_file(str(test_text))
    rows = []

    def run(label, passes, **params):
        train(store, max_outer=1, verbose=0, **{k: v for k, v in params.items() if k != "max_outer"})  # compile
        start = time.perf_counter()
        result = train(store, max_outer=passes, verbose=0, **params)
        seconds = time.perf_counter() - start
        model = result.model
        Xt = X[:, : model.n_features] if X.shape[1] > model.n_features else X
        accuracy = float(np.mean(model.predict(Xt) == y))
        last = result.history[-1]
        rows.append(
            {
                "learner": label,
                "passes": len(result.history),
                "accuracy": accuracy,
                "progressive": last.get("progressive_accuracy"),
                "nonzero": int(np.count_nonzero(model.coef)),
                "seconds": seconds,
            }
        )

    for solver_name, solver in SOLVERS.items():
        if not solver.online:
            continue
        extra = {"average": True} if solver_name in PARAMS["average"].solvers else {}
        for passes in (1, 5):
            run(solver_name + (" (average)" if extra else ""), passes, solver=solver_name, **extra)
    run("dual CD (gap 1e-3)", 100, loss="hinge")
    rows += vw_rows(train_text, test_text, X.shape[1], work)
    return {"rows": rows, "note": note}


def vw_rows(train_text: Path, test_text: Path, n_features: int, work: Path) -> list[dict]:
    import numpy as np
    from sklearn.datasets import load_svmlight_file

    vw_text = work / "train.vw"
    to_vw(train_text, vw_text)
    X, y = load_svmlight_file(str(test_text), n_features=n_features)
    rows = []
    for passes in (1, 5):
        start = time.perf_counter()
        w, b = run_vw(vw_text, n_features, passes, work, cache=True)
        seconds = time.perf_counter() - start
        accuracy = float(np.mean(np.where(X @ w + b > 0, 1.0, -1.0) == y))
        rows.append(
            {
                "learner": "Vowpal Wabbit (hinge)",
                "passes": passes,
                "accuracy": accuracy,
                "progressive": None,
                "nonzero": int(np.count_nonzero(w)),
                "seconds": seconds,
            }
        )
    return rows


def to_vw(source: Path, target: Path) -> float:
    """LIBSVM text -> VW text (``label | index:value ...``, feature 0 the bias); the seconds it took."""
    start = time.perf_counter()
    with open(source, "rb") as src, open(target, "wb") as dst:
        write = dst.write
        for line in src:
            parts = line.split(None, 1)
            if parts:
                write((b"1" if float(parts[0]) > 0 else b"-1") + b" | 0:1 " + (parts[1] if len(parts) > 1 else b"\n"))
    return time.perf_counter() - start


def run_vw(vw_text: Path, n_features: int, passes: int, work: Path, cache: bool, loss: str = "hinge"):
    """VW with ``loss``; its weights as (w, b) (numeric feature names hash to themselves)."""
    import numpy as np
    from vowpalwabbit import Workspace

    readable = work / "vw.readable.txt"
    bits = max(18, (n_features + 1).bit_length())
    arguments = [
        "-d",
        str(vw_text),
        "--loss_function",
        loss,
        "--noconstant",
        "-b",
        str(bits),
        "--holdout_off",
        "--readable_model",
        str(readable),
        "--quiet",
    ]
    if cache or passes > 1:
        arguments += ["--cache_file", str(vw_text) + ".cache", "-k", "--passes", str(passes)]
    Workspace(arg_list=arguments).finish()
    w = np.zeros(n_features + 1)
    pattern = re.compile(r"^(\d+):(\S+)")
    with open(readable) as f:
        for line in f:
            m = pattern.match(line)
            if m and int(m.group(1)) <= n_features:
                w[int(m.group(1))] = float(m.group(2))
    Path(str(vw_text) + ".cache").unlink(missing_ok=True)
    return w[1:], w[0]


# ---- part 2 ------------------------------------------------------------------------------------


def stream_table(args) -> None:
    data = args.out / f"stream-{args.stream_gb:g}gb"
    data.mkdir(parents=True, exist_ok=True)
    train_text, test_text = data / "train.svm", data / "test.svm"
    info = child(
        {"kind": "generate", "train": str(train_text), "test": str(test_text), "gb": args.stream_gb},
        data / "generate.log",
    )
    size = train_text.stat().st_size
    print(
        f"\n### One pass from text: {info.get('rows', '?'):,} rows x {info.get('features', '?'):,} features, "
        f"{size / 1e9:.2f} GB of LIBSVM text (test: {info.get('test_rows', '?'):,} held-out rows)\n"
    )
    print("| method | seconds | MB/s (end to end) | peak RSS MB | test acc. | test log loss | progressive acc. |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for entry in args.stream_solvers.split(","):
        solver, *options = entry.split()
        tag = "-".join([solver, *options]).replace("--", "")
        model = data / f"{tag}.h5"
        run = timed(
            [
                sys.executable,
                "-m",
                "blocksvm.cli",
                "stream",
                str(train_text),
                str(model),
                "--solver",
                solver,
                *options,
                "--json",
            ],
            data / f"stream-{tag}.log",
        )
        if run.get("error"):
            print(f"| blocksvm stream --solver {entry} | failed: {run['error']} |")
            continue
        summary = json.loads(run["stdout"])
        accuracy = child({"kind": "accuracy", "model": str(model), "test": str(test_text)}, data / "acc.log")
        print(
            f"| blocksvm stream --solver {entry} | {run['seconds']:.1f} | {size / 1e6 / run['seconds']:.0f} "
            f"| {run['peak_rss_mb']:.0f} | {100 * accuracy['accuracy']:.2f}% | {accuracy['log_loss']:.4f} "
            f"| {100 * summary['progressive_accuracy']:.2f}% |"
        )
    vw = child(
        {
            "kind": "vw_stream",
            "train": str(train_text),
            "test": str(test_text),
            "work": str(data),
            "features": info.get("features", 0),
            "loss": args.stream_loss,
        },
        data / "vw.log",
    )
    if "error" in vw:
        print(f"| Vowpal Wabbit | failed: {vw['error']} |")
    else:
        total = vw["convert_seconds"] + vw["train_seconds"]
        print(
            f"| Vowpal Wabbit, one pass (LIBSVM→VW {vw['convert_seconds']:.1f} s + VW {vw['train_seconds']:.1f} s) "
            f"| {total:.1f} | {size / 1e6 / total:.0f} | {vw['peak_rss_mb']:.0f} | {100 * vw['accuracy']:.2f}% "
            f"| {vw['log_loss']:.4f} | |"
        )


def job_generate(train: str, test: str, gb: float) -> dict:
    from blocksvm.datasets import SyntheticSpec, write_libsvm

    features, nnz = 1_000_000, 80
    rows = int(gb * 1e9 / 1230)  # about 1,230 bytes a row of 80 nonzeros
    test_rows = 200_000
    spec = SyntheticSpec(rows=rows + test_rows, features=features, nnz=nnz, seed=7)
    if not Path(train).exists():
        write_libsvm(train, spec, rows=range(rows), progress=False)
        write_libsvm(test, spec, rows=range(rows, rows + test_rows), progress=False)
    return {"rows": rows, "features": features, "test_rows": test_rows}


def job_accuracy(model: str, test: str) -> dict:
    from sklearn.datasets import load_svmlight_file

    from blocksvm.model import LinearModel

    model = LinearModel.load(model)
    X, y = load_svmlight_file(test, n_features=model.n_features)
    return scores(model.decision_function(X), y)


def scores(values, y) -> dict:
    """Test accuracy, and the log loss of the decision values read as logistic regression's."""
    import numpy as np

    return {
        "accuracy": float(np.mean(np.where(values > 0, 1.0, -1.0) == y)),
        "log_loss": float(np.mean(np.logaddexp(0.0, -y * values))),
    }


def job_vw_stream(train: str, test: str, work: str, features: int, loss: str = "hinge") -> dict:
    """VW one pass: the conversion, then VW alone in a fresh process (its own peak RSS)."""
    vw_text = Path(work) / "train.vw"
    convert_seconds = to_vw(Path(train), vw_text)
    run = timed(
        [
            sys.executable,
            __file__,
            "--job",
            json.dumps(
                {"kind": "vw_pass", "vw_text": str(vw_text), "features": features, "work": work}
                | {"test": test, "loss": loss}
            ),
        ],
        Path(work) / "vw-pass.log",
    )
    vw_text.unlink()
    if run.get("error"):
        return {"error": run["error"]}
    return {
        "convert_seconds": convert_seconds,
        "train_seconds": run["seconds"],
        "peak_rss_mb": run["peak_rss_mb"],
        **json.loads(run["stdout"]),
    }


def job_vw_pass(vw_text: str, features: int, work: str, test: str, loss: str = "hinge") -> dict:
    from sklearn.datasets import load_svmlight_file

    w, b = run_vw(Path(vw_text), features, 1, Path(work), cache=False, loss=loss)
    X, y = load_svmlight_file(test, n_features=features)
    return scores(X @ w + b, y)


# ---- processes ---------------------------------------------------------------------------------

JOBS = {
    "learners": job_learners,
    "generate": job_generate,
    "accuracy": job_accuracy,
    "vw_stream": job_vw_stream,
    "vw_pass": job_vw_pass,
}


def run_child(job: dict) -> int:
    kind = job.pop("kind")
    print(json.dumps(JOBS[kind](**job)))
    return 0


def child(job: dict, log: Path) -> dict:
    """Run a job in a fresh interpreter; its JSON result (or an ``error``)."""
    run = timed([sys.executable, __file__, "--job", json.dumps(job)], log)
    if run.get("error"):
        return {"error": run["error"]}
    return json.loads(run["stdout"].strip().splitlines()[-1])


def timed(command: list[str], log: Path) -> dict:
    """Wall seconds, peak RSS (``wait4``: the parent imports nothing heavy) and standard output of a command."""
    start = time.perf_counter()
    with open(log, "w") as err:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, cwd=REPO, text=True)
        stdout = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    result = {"seconds": seconds, "peak_rss_mb": usage.ru_maxrss / 1024, "stdout": stdout}
    if os.waitstatus_to_exitcode(status) != 0:
        result["error"] = " / ".join(log.read_text().strip().splitlines()[-2:])
    return result


def machine() -> str:
    cpus = os.cpu_count()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"machine: {cpus} cores, {memory:.1f} GiB; python {sys.version.split()[0]}"


if __name__ == "__main__":
    sys.exit(main())
