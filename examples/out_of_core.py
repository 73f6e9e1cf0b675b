"""Out-of-core training from a LIBSVM file: convert once, train block by block, predict.

Shows the whole pipeline of the Python API on a generated webspam-like file:

1. ``write_libsvm``: a LIBSVM text file (train) and a held-out one (test);
2. ``blocksvm.convert``: both into block stores, the training store in small blocks (``block_mb``)
   so that training holds only a few of them in memory at a time;
3. ``train``: dual coordinate descent by block minimization, with the held-out store as
   validation (its accuracy is in every history record);
4. ``blocksvm.predict.predict``: the test file, streamed, predictions written in source order.

The same from the shell::

    blocksvm convert train.svm train.bsvm --block-mb 4
    blocksvm convert test.svm test.bsvm --n-features 50000
    blocksvm train train.bsvm model.h5 -C 0.1 --validation test.bsvm
    blocksvm predict model.h5 test.svm --output predictions.txt

Run: ``python examples/out_of_core.py [--workdir DIR] [--small]``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import blocksvm
from blocksvm.datasets import SyntheticSpec, write_libsvm
from blocksvm.predict import predict
from blocksvm.train import train


def main(workdir: Path, small: bool = False) -> dict:
    """Run the pipeline in ``workdir``; return the figures it prints."""
    workdir = Path(workdir)
    rows, test_rows, features = (20_000, 5_000, 2_000) if small else (300_000, 50_000, 50_000)
    spec = SyntheticSpec(rows=rows + test_rows, features=features, nnz=30, noise=0.05, seed=1)
    train_text, test_text = workdir / "train.svm", workdir / "test.svm"
    write_libsvm(train_text, spec, rows=range(rows), progress=False)
    write_libsvm(test_text, spec, rows=range(rows, rows + test_rows), progress=False)

    # Convert once. block_mb is the in-memory size of a block: training holds about three.
    converted = blocksvm.convert(train_text, workdir / "train.bsvm", block_mb=0.5 if small else 4, overwrite=True)
    # The test file may not use the largest feature index: give it the training store's width.
    blocksvm.convert(test_text, workdir / "test.bsvm", n_features=converted.features, overwrite=True)
    print(converted)

    result = train(
        workdir / "train.bsvm",
        C=0.1,
        tol=1e-3,
        validation=workdir / "test.bsvm",
        history_path=workdir / "history.jsonl",
        verbose=1,
    )
    model_path = result.model.save(workdir / "model.h5")

    # Predict the text file (a store works too); predictions come out in the file's row order.
    summary = predict(model_path, test_text, workdir / "predictions.txt")
    print(summary)
    return {
        "blocks": converted.blocks,
        "passes": len(result.history),
        "gap": result.model.summary["gap"],
        "validation_accuracy": result.history[-1]["validation_accuracy"],
        "test_accuracy": summary.accuracy,
        "predictions": workdir / "predictions.txt",
    }


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
