"""Multiclass: one store, one-vs-rest problems trained together, arg-max predictions.

A store whose labels take K > 2 values trains K binary problems, class k against the rest
(LIBLINEAR's one-vs-rest), all updated on every block that is read: one pass over the disk serves
all K. The model has one weight row per class and predicts the class of largest decision value.

Here the data are generated with ``SyntheticSpec(classes=4)`` (labels 1..4, the arg-max of four
hidden separators, 5 % of labels replaced by another class). The example prints the size of each
class, the per-pass history, the test accuracy and the confusion matrix.

Run: ``python examples/multiclass.py [--workdir DIR] [--small]``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

import blocksvm
from blocksvm.datasets import SyntheticSpec, write_libsvm
from blocksvm.train import train

CLASSES = 4


def main(workdir: Path, small: bool = False) -> dict:
    """Train and test a 4-class model in ``workdir``; return accuracy and confusion matrix."""
    workdir = Path(workdir)
    rows, test_rows, features = (12_000, 3_000, 500) if small else (300_000, 50_000, 20_000)
    spec = SyntheticSpec(rows=rows + test_rows, features=features, nnz=30, noise=0.05, seed=3, classes=CLASSES)
    write_libsvm(workdir / "train.svm", spec, rows=range(rows), progress=False)
    write_libsvm(workdir / "test.svm", spec, rows=range(rows, rows + test_rows), progress=False)
    converted = blocksvm.convert(
        workdir / "train.svm", workdir / "train.bsvm", block_mb=0.5 if small else 8, overwrite=True
    )

    store = blocksvm.BlockStore(workdir / "train.bsvm")
    print("classes:", dict(zip(store.classes.tolist(), store.label_counts.tolist())))
    result = train(store, C=0.5, tol=1e-3, verbose=1)
    model = result.model
    print(f"model: coef {model.coef.shape} (one row per class), classes {model.classes.tolist()}")

    X, y, _ = blocksvm.load_libsvm(workdir / "test.svm", n_features=converted.features)
    predicted = model.predict(X)
    confusion = np.zeros((CLASSES, CLASSES), dtype=np.int64)  # rows: true class, columns: predicted
    np.add.at(confusion, (np.searchsorted(model.classes, y), np.searchsorted(model.classes, predicted)), 1)
    accuracy = float(np.mean(predicted == y))
    print(f"test accuracy {100 * accuracy:.2f}%; confusion matrix (rows: true class, columns: predicted):")
    print(confusion)
    return {"accuracy": accuracy, "confusion": confusion, "classes": model.classes, "passes": len(result.history)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="keep the files here (default: a temporary folder)")
    parser.add_argument("--small", action="store_true", help="a small data set: seconds, not a minute")
    args = parser.parse_args()
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        main(args.workdir, args.small)
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder), args.small)
