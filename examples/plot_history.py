"""Reading a training history and plotting it, with ``blocksvm.plot`` and by hand.

``blocksvm train`` appends one JSON object per pass to ``MODEL.history.jsonl`` (``history_path=``
in Python): ``outer``, ``time``, ``primal``, ``dual``, ``gap``, ``pg_violation``, ``nsv``,
``train_accuracy``, ``validation_accuracy``, ``read_seconds``, ``compute_seconds``, ... (see
docs/ALGORITHMS.md, "What is measured"). ``primal_exact`` tells an exact objective from a pass
estimate.

This example trains a small model with a validation store to get a history (or reads the one you
give with ``--history``), then

1. draws the standard four panels with :func:`blocksvm.plot.plot_history` (what
   ``blocksvm plot HISTORY`` does);
2. draws the duality gap against seconds and the validation accuracy against passes by hand from
   the JSON lines: the few lines it takes to plot any other field.

Run: ``python examples/plot_history.py [--workdir DIR] [--small] [--history FILE]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import blocksvm
from blocksvm.datasets import SyntheticSpec, write_libsvm
from blocksvm.plot import plot_history
from blocksvm.train import train


def make_history(workdir: Path, small: bool) -> Path:
    """Train on generated data with a validation store; return the history file."""
    rows = 8_000 if small else 400_000
    spec = SyntheticSpec(rows=rows + rows // 4, features=2_000, nnz=20, seed=2)
    write_libsvm(workdir / "train.svm", spec, rows=range(rows), progress=False)
    write_libsvm(workdir / "valid.svm", spec, rows=range(rows, spec.rows), progress=False)
    blocksvm.convert(workdir / "train.svm", workdir / "train.bsvm", block_rows=rows // 8, overwrite=True)
    blocksvm.convert(workdir / "valid.svm", workdir / "valid.bsvm", n_features=2_000, overwrite=True)
    history = workdir / "history.jsonl"
    train(
        workdir / "train.bsvm",
        C=1.0,
        tol=1e-4,
        eval_every=2,
        validation=workdir / "valid.bsvm",
        history_path=history,
        verbose=0,
    )
    return history


def main(workdir: Path, small: bool = False, history: Path | None = None) -> dict:
    """Plot ``history`` (default: a freshly trained one) to two PNG files in ``workdir``."""
    workdir = Path(workdir)
    history = Path(history) if history else make_history(workdir, small)

    # 1. the standard figure
    standard = plot_history(history, workdir / "convergence.png", title="blocksvm training")

    # 2. by hand: one dict per line
    records = [json.loads(line) for line in history.read_text().splitlines() if line.strip()]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    if records[0]["gap"] is not None:  # dual CD; Pegasos has no dual, hence no gap
        exact = [r for r in records if r["primal_exact"]]
        left.semilogy([r["time"] for r in records], [r["gap"] for r in records], label="pass estimate")
        left.semilogy([r["time"] for r in exact], [r["gap"] for r in exact], "o", label="exact")
        left.legend()
    left.set(xlabel="seconds", ylabel="relative duality gap (P - D) / P", title="Convergence")
    validated = [r for r in records if r["validation_accuracy"] is not None]
    right.plot([r["outer"] for r in records], [100 * r["train_accuracy"] for r in records], label="training")
    right.plot([r["outer"] for r in validated], [100 * r["validation_accuracy"] for r in validated], label="validation")
    right.set(xlabel="pass over the store", ylabel="accuracy (%)", title="Accuracy")
    right.legend()
    for ax in (left, right):
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    by_hand = workdir / "by_hand.png"
    fig.savefig(by_hand, dpi=100)
    plt.close(fig)

    last = records[-1]
    print(f"{len(records)} passes, final gap {last['gap']}, validation accuracy {last['validation_accuracy']}")
    print(f"wrote {standard} and {by_hand}")
    return {"records": len(records), "standard": standard, "by_hand": by_hand}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="keep the files here (default: a temporary folder)")
    parser.add_argument("--small", action="store_true", help="train on a small data set")
    parser.add_argument("--history", type=Path, help="plot this history instead of training one")
    args = parser.parse_args()
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        main(args.workdir, args.small, args.history)
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder), args.small, args.history)
