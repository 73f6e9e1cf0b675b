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

import json
import sys
from pathlib import Path

import numpy as np
from harness import OUT, SHARED_DATA, data, peers, report, run

CHECKPOINTS = (1, 5, 10, 20, 30, 50)
# LIBLINEAR's solver of each loss (-s): the default, squared hinge, and the others --loss may choose
LIBLINEAR_CODES = {"squared-hinge": 1, "hinge": 3, "logistic": 7}


def data_sets(data_dir: Path, work: Path) -> dict[str, tuple[Path, Path]]:
    """Each set's training and test text: a9a's own test file, a quarter of the others' rows held out."""
    sets = {}
    for name in ("a9a", "w8a"):
        found = data.real(name, data_dir)
        if found:
            sets[name] = found[:2] if found[1] else data.held_out(found[0], work, every=4, held=3)
    generated = data.text(work / "gen.svm", data.spec(40_000, 20_000, 30, seed=5, noise=0.05))
    sets["gen-40k"] = data.held_out(generated, work, every=4, held=3)
    return sets


def stores(name: str, train_text: Path, test_text: Path, work: Path) -> tuple[Path, Path]:
    from blocksvm.store import BlockStore

    train = data.store(train_text, work / f"{name}.bsvm", block_rows=4096)
    n_features = BlockStore(train).n_features
    return train, data.store(test_text, work / f"{name}-test.bsvm", n_features=n_features, shuffle=False)


def liblinear_accuracy(train_text: Path, test_text: Path, n_features: int, bias: float, code: int = 1) -> float:
    liblinear = peers.liblinear()
    X, y = data.arrays(train_text, n_features)
    Xt, yt = data.arrays(test_text, n_features)
    model = liblinear.train(liblinear.problem(y, X), f"-s {code} -c 1 -B {bias if bias > 0 else -1} -q")
    predicted, _, _ = liblinear.predict(yt, Xt, model, "-q")
    return float(np.mean(np.array(predicted) == yt))


def majority_accuracy(test_text: Path, n_features: int) -> float:
    _, y = data.arrays(test_text, n_features)
    return float(max(np.mean(y == label) for label in np.unique(y)))


def learner_curve(solver: str, train: Path, test: Path, bias: float, seed: int, passes: int, **params) -> list[float]:
    """Held-out accuracy after each pass of one run at the learner's defaults (or ``params``)."""
    from blocksvm.train import train as fit

    result = fit(train, solver=solver, bias=bias, seed=seed, max_outer=passes, validation=test, verbose=0, **params)
    curve = [record["validation_accuracy"] for record in result.history]
    return curve + [curve[-1]] * (passes - len(curve))  # a learner that stopped early keeps its model


def main() -> None:
    p = run.parser(__doc__)
    p.add_argument("--data-dir", type=Path, default=SHARED_DATA)
    p.add_argument("--out", type=Path, default=OUT / "defaults")
    p.add_argument("--solvers", default="", help="comma-separated learners (default: every one)")
    p.add_argument("--params", default="{}", help="JSON of parameters to set instead of the defaults")
    p.add_argument("--sets", default="", help="comma-separated data sets (default: every one)")
    p.add_argument("--loss", choices=tuple(LIBLINEAR_CODES), help="train this loss (default: each learner's)")
    run.add_quick(p, "one seed, 10 passes: to test the script")
    args = p.parse_args()
    from blocksvm.solvers.registry import SOLVERS
    from blocksvm.store import BlockStore

    args.out.mkdir(parents=True, exist_ok=True)
    print(report.machine(), file=sys.stderr)
    seeds = (0,) if args.quick else (0, 1, 2)
    passes = 10 if args.quick else max(CHECKPOINTS)
    shown = [c for c in CHECKPOINTS if c <= passes]
    solvers = args.solvers.split(",") if args.solvers else list(SOLVERS)
    params = json.loads(args.params) | ({"loss": args.loss} if args.loss else {})
    code = LIBLINEAR_CODES[args.loss or "squared-hinge"]
    results, rows = {}, []

    def add(row: list) -> None:
        rows.append(row)
        print(" | ".join(map(str, row)), file=sys.stderr, flush=True)

    for name, (train_text, test_text) in data_sets(args.data_dir, args.out).items():
        if args.sets and name not in args.sets.split(","):
            continue
        train, test = stores(name, train_text, test_text, args.out)
        n_features = BlockStore(train).n_features
        majority = majority_accuracy(test_text, n_features)
        add([name, "", "majority class", *(f"{100 * majority:.2f}" for _ in shown), ""])
        for bias in (1.0, -1.0):
            reference = liblinear_accuracy(train_text, test_text, n_features, bias, code)
            add([name, f"{bias:g}", f"LIBLINEAR -s {code}", *(f"{100 * reference:.2f}" for _ in shown), ""])
            for solver in solvers:
                curves = np.array([learner_curve(solver, train, test, bias, seed, passes, **params) for seed in seeds])
                at = {c: (curves[:, c - 1].min(), curves[:, c - 1].max()) for c in shown}
                worst = curves[:, 9:].min() if passes >= 10 else float("nan")
                cells = [f"{100 * lo:.2f}" if lo == hi else f"{100 * lo:.2f}–{100 * hi:.2f}" for lo, hi in at.values()]
                flag = " (below majority)" if worst < majority else ""
                flag = flag or (" (>1 pt below LIBLINEAR)" if worst < reference - 0.01 else "")
                add([name, f"{bias:g}", solver, *cells, f"{100 * worst:.2f}{flag}"])
                results[f"{name}/{bias:g}/{solver}"] = {"curves": curves.tolist(), "liblinear": reference,
                                                         "majority": majority}  # fmt: skip
    header = ["set", "bias", "learner", *(f"{c} passes" for c in shown), "worst from 10 on"]
    print(report.table(header, rows, "lrl" + "r" * (len(shown) + 1)))
    print(f"\nwritten: {report.write_json(args.out / 'defaults.json', results)}")


if __name__ == "__main__":
    main()
