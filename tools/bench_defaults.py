"""Every learner at its defaults, after 1 to 50 passes, against LIBLINEAR and the majority class (issue 24).

For each data set (a9a tested on a9a.t; w8a with a quarter of its rows held out; a generated set), each
learner of the registry at its defaults, with and without the bias feature, three seeds: the held-out
accuracy after every pass, read from the record of one run of ``--max-outer 50`` (the record after pass P
is the model a run of ``--max-outer P`` returns: the schedule is a function of (seed, pass, block)).
Beside them: LIBLINEAR -s 1 (dual CD, squared hinge, C = 1, the same bias) and the majority class. With
``--loss``, every learner trains that loss and LIBLINEAR solves it (hinge -s 3, logistic -s 7).

    python tools/bench_defaults.py                 # the table of docs/TUNING.md, "Defaults"
    python tools/bench_defaults.py --quick         # one seed, few passes: to test the script
    python tools/bench_defaults.py --solvers ogd --loss logistic   # another loss than the default

Accuracies do not depend on the machine; the script takes about 10 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
CHECKPOINTS = (1, 5, 10, 20, 30, 50)


def held_out_split(source: Path, work: Path, every: int = 4) -> tuple[Path, Path]:
    """Rows ``i`` with ``i % every == every - 1`` (file order) held out; the rest for training."""
    train, test = work / f"{source.name}.train", work / f"{source.name}.test"
    if not test.exists():
        with open(source, "rb") as src, open(train, "wb") as a, open(test, "wb") as b:
            for i, line in enumerate(src):
                (b if i % every == every - 1 else a).write(line)
    return train, test


def data_sets(args, work: Path) -> dict[str, tuple[Path, Path]]:
    from blocksvm.datasets import SyntheticSpec, write_libsvm

    sets = {}
    if (args.data_dir / "a9a").exists():
        sets["a9a"] = (args.data_dir / "a9a", args.data_dir / "a9a.t")
    if (args.data_dir / "w8a").exists():
        sets["w8a"] = held_out_split(args.data_dir / "w8a", work)
    generated = work / "gen.svm"
    if not generated.exists():
        spec = SyntheticSpec(rows=40_000, features=20_000, nnz=30, seed=5, noise=0.05)
        write_libsvm(generated, spec, progress=False)
    sets["gen-40k"] = held_out_split(generated, work)
    return sets


def stores(name: str, train_text: Path, test_text: Path, work: Path) -> tuple[Path, Path]:
    from blocksvm.io import convert
    from blocksvm.store import BlockStore

    train, test = work / f"{name}.bsvm", work / f"{name}-test.bsvm"
    if not train.exists():
        convert(train_text, train, block_rows=4096, progress=False)
    if not test.exists():
        convert(test_text, test, n_features=BlockStore(train).n_features, shuffle=False, progress=False)
    return train, test


def labels_and_matrix(text: Path, n_features: int):
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(text), n_features=n_features)
    return X, y


# LIBLINEAR's solver of each loss (-s): the default, squared hinge, and the others --loss may choose
LIBLINEAR_CODES = {"squared-hinge": 1, "hinge": 3, "logistic": 7}


def liblinear_accuracy(train_text: Path, test_text: Path, n_features: int, bias: float, code: int = 1) -> float:
    from liblinear import liblinearutil as liblinear

    X, y = labels_and_matrix(train_text, n_features)
    Xt, yt = labels_and_matrix(test_text, n_features)
    model = liblinear.train(liblinear.problem(y, X), f"-s {code} -c 1 -B {bias if bias > 0 else -1} -q")
    predicted, _, _ = liblinear.predict(yt, Xt, model, "-q")
    return float(np.mean(np.array(predicted) == yt))


def majority_accuracy(test_text: Path, n_features: int) -> float:
    _, y = labels_and_matrix(test_text, n_features)
    return float(max(np.mean(y == label) for label in np.unique(y)))


def learner_curve(solver: str, train: Path, test: Path, bias: float, seed: int, passes: int, **params) -> list[float]:
    """Held-out accuracy after each pass of one run at the learner's defaults (or ``params``)."""
    from blocksvm.train import train as fit

    result = fit(train, solver=solver, bias=bias, seed=seed, max_outer=passes, validation=test, verbose=0, **params)
    curve = [record["validation_accuracy"] for record in result.history]
    return curve + [curve[-1]] * (passes - len(curve))  # a learner that stopped early keeps its model


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", type=Path, default=SHARED)
    p.add_argument("--out", type=Path, default=REPO / "bench-out" / "defaults")
    p.add_argument("--solvers", default="", help="comma-separated learners (default: every one)")
    p.add_argument("--params", default="{}", help="JSON of parameters to set instead of the defaults")
    p.add_argument("--sets", default="", help="comma-separated data sets (default: every one)")
    p.add_argument("--loss", choices=tuple(LIBLINEAR_CODES), help="train this loss (default: each learner's)")
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    from blocksvm.solvers.registry import SOLVERS
    from blocksvm.store import BlockStore

    args.out.mkdir(parents=True, exist_ok=True)
    seeds = (0,) if args.quick else (0, 1, 2)
    passes = 10 if args.quick else max(CHECKPOINTS)
    shown = [c for c in CHECKPOINTS if c <= passes]
    solvers = args.solvers.split(",") if args.solvers else list(SOLVERS)
    params = json.loads(args.params) | ({"loss": args.loss} if args.loss else {})
    code = LIBLINEAR_CODES[args.loss or "squared-hinge"]
    results = {}
    print("| set | bias | learner | " + " | ".join(f"{c} passes" for c in shown) + " | worst from 10 on |")
    print("|---|---:|---|" + "---:|" * (len(shown) + 1))
    for name, (train_text, test_text) in data_sets(args, args.out).items():
        if args.sets and name not in args.sets.split(","):
            continue
        train, test = stores(name, train_text, test_text, args.out)
        n_features = BlockStore(train).n_features
        majority = majority_accuracy(test_text, n_features)
        print(f"| {name} | | majority class | " + " | ".join(f"{100 * majority:.2f}" for _ in shown) + " | |")
        for bias in (1.0, -1.0):
            reference = liblinear_accuracy(train_text, test_text, n_features, bias, code)
            print(
                f"| {name} | {bias:g} | LIBLINEAR -s {code} | "
                + " | ".join(f"{100 * reference:.2f}" for _ in shown)
                + " | |"
            )
            for solver in solvers:
                curves = np.array([learner_curve(solver, train, test, bias, seed, passes, **params) for seed in seeds])
                at = {c: (curves[:, c - 1].min(), curves[:, c - 1].max()) for c in shown}
                worst = curves[:, 9:].min() if passes >= 10 else float("nan")
                cells = " | ".join(
                    f"{100 * lo:.2f}" if lo == hi else f"{100 * lo:.2f}–{100 * hi:.2f}" for lo, hi in at.values()
                )
                flag = (
                    " (below majority)"
                    if worst < majority
                    else (" (>1 pt below LIBLINEAR)" if worst < reference - 0.01 else "")
                )
                print(f"| {name} | {bias:g} | {solver} | {cells} | {100 * worst:.2f}{flag} |", flush=True)
                results[f"{name}/{bias:g}/{solver}"] = {
                    "curves": curves.tolist(),
                    "liblinear": reference,
                    "majority": majority,
                }
    (args.out / "defaults.json").write_text(json.dumps(results))
    print(f"\nwritten: {args.out / 'defaults.json'}")


if __name__ == "__main__":
    main()
