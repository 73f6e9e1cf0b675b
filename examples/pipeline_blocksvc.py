"""``BlockSVC`` in a scikit-learn Pipeline, tuned by GridSearchCV, checked against LinearSVC.

:class:`blocksvm.BlockSVC` is a scikit-learn classifier: ``fit``, ``predict``,
``decision_function``, ``score``, ``get_params``/``set_params``, so it composes with the rest of
scikit-learn. Here a sparse matrix goes through ``MaxAbsScaler`` (keeps sparsity) and
``BlockSVC``; ``GridSearchCV`` picks C by 3-fold cross-validation; the refitted pipeline is
scored on held-out rows and compared with ``LinearSVC``, which solves the same problem in memory
with LIBLINEAR (same loss, same regularized bias).

``BlockSVC.fit(X, y)`` writes X as a temporary block store of ``block_rows`` rows and trains on
it block by block; for data larger than memory, ``BlockSVC().fit("train.bsvm")`` trains on a
store made by ``blocksvm convert`` (the pipeline's transformers, which need X in memory, do not
apply there).

Run: ``python examples/pipeline_blocksvc.py [--workdir DIR] [--small]``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MaxAbsScaler
from sklearn.svm import LinearSVC

from blocksvm import BlockSVC, load_libsvm
from blocksvm.datasets import SyntheticSpec, write_libsvm


def main(workdir: Path, small: bool = False) -> dict:
    """Tune and score the pipeline; return the chosen C, the test scores and the gap to LinearSVC."""
    workdir = Path(workdir)
    rows, test_rows, features = (4_000, 1_000, 1_000) if small else (100_000, 20_000, 20_000)
    spec = SyntheticSpec(rows=rows + test_rows, features=features, nnz=20, noise=0.05, seed=5)
    write_libsvm(workdir / "data.svm", spec, progress=False)
    X, y, _ = load_libsvm(workdir / "data.svm", n_features=features)  # a scipy.sparse CSR matrix
    X_train, y_train, X_test, y_test = X[:rows], y[:rows], X[rows:], y[rows:]

    pipeline = Pipeline(
        [
            ("scale", MaxAbsScaler()),
            ("svm", BlockSVC(loss="squared-hinge", tol=1e-4, block_rows=rows // 4, random_state=0)),
        ]
    )
    search = GridSearchCV(pipeline, {"svm__C": [0.01, 0.1, 1.0]}, cv=3)
    search.fit(X_train, y_train)
    best = search.best_estimator_
    svm = best.named_steps["svm"]
    score = best.score(X_test, y_test)
    print(
        f"best C = {search.best_params_['svm__C']} (cross-validated accuracy {search.best_score_:.4f}); "
        f"test accuracy {score:.4f}; {svm.n_iter_} passes, stopped: {svm.stop_reason_}"
    )

    # The same problem in memory, by LIBLINEAR: the decision values should agree closely.
    reference = Pipeline(
        [("scale", MaxAbsScaler()), ("svm", LinearSVC(C=svm.C, loss="squared_hinge", tol=1e-6, max_iter=100_000))]
    )
    reference.fit(X_train, y_train)
    ours, theirs = best.decision_function(X_test), reference.decision_function(X_test)
    difference = float(np.max(np.abs(ours - theirs)) / np.max(np.abs(theirs)))
    print(
        f"LinearSVC test accuracy {reference.score(X_test, y_test):.4f}; largest decision value "
        f"difference {difference:.1e} (relative)"
    )
    return {
        "best_C": search.best_params_["svm__C"],
        "test_accuracy": score,
        "liblinear_accuracy": reference.score(X_test, y_test),
        "difference": difference,
    }


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
