"""Choosing C: convert once, train many times from the same blocks, keep the best on validation.

Converting is the one step that reads the text file; every training run then reads only the
compressed blocks. So a grid over C costs one conversion and one training per value. Each run
tracks the held-out accuracy per pass (``validation=``); the model with the best final validation
accuracy is kept. Larger C needs more passes (see docs/TUNING.md), so the grid goes from small to
large C and caps the passes.

The same from the shell::

    blocksvm convert train.svm train.bsvm && blocksvm convert valid.svm valid.bsvm --n-features N
    for C in 0.01 0.1 1 10; do blocksvm train train.bsvm model-$C.h5 -C $C --validation valid.bsvm --json; done

Run: ``python examples/grid_search_c.py [--workdir DIR] [--small]``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import blocksvm
from blocksvm.datasets import SyntheticSpec, write_libsvm
from blocksvm.train import train

GRID = (0.01, 0.1, 1.0, 10.0)


def main(workdir: Path, small: bool = False) -> dict:
    """Run the grid in ``workdir``; return the validation accuracy of each C and the best C."""
    workdir = Path(workdir)
    rows, valid_rows, features = (8_000, 2_000, 4_000) if small else (200_000, 50_000, 100_000)
    spec = SyntheticSpec(rows=rows + valid_rows, features=features, nnz=20, noise=0.1, seed=7)
    write_libsvm(workdir / "train.svm", spec, rows=range(rows), progress=False)
    write_libsvm(workdir / "valid.svm", spec, rows=range(rows, rows + valid_rows), progress=False)

    converted = blocksvm.convert(
        workdir / "train.svm", workdir / "train.bsvm", block_mb=0.3 if small else 8, overwrite=True
    )
    blocksvm.convert(workdir / "valid.svm", workdir / "valid.bsvm", n_features=converted.features, overwrite=True)
    store, valid = blocksvm.BlockStore(workdir / "train.bsvm"), blocksvm.BlockStore(workdir / "valid.bsvm")

    print(f"{'C':>8}  {'passes':>6}  {'seconds':>7}  {'gap':>8}  validation accuracy")
    accuracy, models = {}, {}
    for C in GRID:
        result = train(store, C=C, tol=1e-3, max_outer=30, validation=valid, verbose=0)
        s = result.model.summary
        accuracy[C] = s["validation_accuracy"]
        models[C] = result.model
        print(f"{C:8g}  {s['outer_iterations']:6d}  {s['seconds']:7.1f}  {s['gap']:8.1e}  {100 * accuracy[C]:.2f}%")

    best = max(GRID, key=lambda C: accuracy[C])
    models[best].save(workdir / "best.h5")
    print(f"best C = {best:g} ({100 * accuracy[best]:.2f}% on validation), saved to {workdir / 'best.h5'}")
    return {"accuracy": accuracy, "best_C": best, "model": workdir / "best.h5"}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="keep the files here (default: a temporary folder)")
    parser.add_argument("--small", action="store_true", help="a small data set: seconds, not minutes")
    args = parser.parse_args()
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        main(args.workdir, args.small)
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder), args.small)
