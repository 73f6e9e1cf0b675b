"""The (averaged) Perceptron, added through the solver contract, against a numpy transcription.

The oracle walks the rows in the very order the kernel visits them (the same schedule and row
order functions), applying Rosenblatt's rule and Freund & Schapire's average by its definition
(the mean of ``w`` after every row), written here without Daumé's trick the kernel uses.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import last_iterate

from blocksvm.cli import main
from blocksvm.datasets import SyntheticSpec, make_store
from blocksvm.model import LinearModel
from blocksvm.solvers._common import interleaved_runs
from blocksvm.store import BlockStore
from blocksvm.train import train
from blocksvm.train.schedule import Schedule

# The oracles here transcribe the last iterate: average=False for the learners that read it.
train = last_iterate(train)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("perceptron") / "train.bsvm"
    make_store(path, SyntheticSpec(rows=1200, features=50, nnz=8, seed=3), block_rows=300, progress=False)
    return path


def visit_order(n_rows: int, seed: int) -> np.ndarray:
    order = np.empty(n_rows, np.int64)
    interleaved_runs(order, np.arange(n_rows), n_rows, np.array([np.uint64(seed)], np.uint64))
    return order


def numpy_perceptron(path, passes: int, seed: int, bias: float, right: list | None = None):
    """Weights and averaged weights (n_features + 1 with the bias feature) after ``passes`` passes; ``right``
    gets each pass's rows predicted right before their update (a decision of 0 reads as the negative class)."""
    store = BlockStore(path)
    w = np.zeros(store.n_features + 1)
    total, steps = np.zeros_like(w), 0
    for outer in range(1, passes + 1):
        seen_right = 0
        for b in Schedule(seed, outer).order(store.n_blocks):
            block = store.read_block(int(b))
            X = block.to_csr(store.n_features).toarray()
            X = np.hstack([X, np.full((len(X), 1), bias if bias > 0 else 0.0)])
            y = np.where(block.labels == store.classes[1], 1.0, -1.0)
            for i in visit_order(block.n_rows, int(Schedule(seed, outer).seeds(block.index, 1)[0])):
                decision = w @ X[i]
                seen_right += (decision > 0) == (y[i] > 0)
                if y[i] * decision <= 0:
                    w = w + y[i] * X[i]
                total += w
                steps += 1
        if right is not None:
            right.append(seen_right)
    return w, total / steps


@pytest.mark.parametrize("bias", [1.0, -1.0])
@pytest.mark.parametrize("average", [False, True])
def test_perceptron_equals_the_numpy_transcription(store, average, bias):
    result = train(store, solver="perceptron", average=average, bias=bias, max_outer=3, seed=5, verbose=0)
    w, averaged = numpy_perceptron(store, 3, 5, bias)
    expected = averaged if average else w
    np.testing.assert_allclose(result.model.coef[0], expected[:-1], rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(result.model.intercept[0], expected[-1] * bias if bias > 0 else 0.0, atol=1e-9)
    assert result.stop_reason.startswith("max_outer") and len(result.history) == 3


def test_mistakes_on_separable_data_stay_within_the_novikoff_bound(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    u = np.array([1.0, -2.0, 0.5, 0.0, 1.0]) / np.linalg.norm([1.0, -2.0, 0.5, 0.0, 1.0])
    keep = np.abs(X @ u) > 0.3  # margin gamma >= 0.3 for the unit vector u
    X, y = X[keep], np.where(X[keep] @ u > 0, 1, -1)
    text = "".join(
        f"{label} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row)) + "\n" for label, row in zip(y, X)
    )
    (tmp_path / "sep.svm").write_text(text)
    assert main(["convert", str(tmp_path / "sep.svm"), str(tmp_path / "sep.bsvm"), "--block-size", "50", "-q"]) == 0
    result = train(tmp_path / "sep.bsvm", solver="perceptron", bias=-1, max_outer=20, verbose=0)
    mistakes = sum(r["updates"] for r in result.history)
    radius, gamma = np.max(np.linalg.norm(X.astype(np.float32), axis=1)), np.min(np.abs(X @ u))
    assert mistakes <= (radius / gamma) ** 2
    assert result.history[-1]["updates"] == 0  # converged: a pass without a mistake
    assert np.mean(result.model.predict(X) == y) == 1.0


def test_cli_trains_and_resumes_the_perceptron_exactly(store, tmp_path):
    args = [
        "train",
        str(store),
        str(tmp_path / "m.h5"),
        "--solver",
        "perceptron",
        "--average",
        "--max-outer",
        "4",
        "-q",
        "--checkpoint",
        str(tmp_path / "ck.h5"),
        "--checkpoint-every",
        "1",
    ]
    assert main(args) == 0
    whole = train(store, solver="perceptron", average=True, max_outer=4, verbose=0).model
    np.testing.assert_array_equal(LinearModel.load(tmp_path / "m.h5").coef, whole.coef)
    cut = train(store, solver="perceptron", average=True, max_outer=2, verbose=0, checkpoint=tmp_path / "c2.h5")
    assert cut.stop_reason.startswith("max_outer")
    resumed = train(store, solver="perceptron", average=True, max_outer=4, verbose=0, resume=tmp_path / "c2.h5")
    np.testing.assert_array_equal(resumed.model.coef, whole.coef)


def test_multiclass_perceptron_is_one_vs_rest(tmp_path):
    path = tmp_path / "multi.bsvm"
    make_store(path, SyntheticSpec(rows=900, features=40, nnz=8, seed=4, classes=3), block_rows=300, progress=False)
    result = train(path, solver="perceptron", max_outer=2, seed=1, verbose=0)
    assert result.model.coef.shape == (3, 40)
    store = BlockStore(path)
    for k, label in enumerate(store.classes):  # each row of W is the binary Perceptron of class k vs rest
        w = np.zeros(store.n_features + 1)
        for outer in (1, 2):
            for b in Schedule(1, outer).order(store.n_blocks):
                block = store.read_block(int(b))
                X = np.hstack([block.to_csr(store.n_features).toarray(), np.ones((block.n_rows, 1))])
                y = np.where(block.labels == label, 1.0, -1.0)
                for i in visit_order(block.n_rows, int(Schedule(1, outer).seeds(block.index, 3)[k])):
                    if y[i] * (w @ X[i]) <= 0:
                        w = w + y[i] * X[i]
        np.testing.assert_allclose(result.model.coef[k], w[:-1], atol=1e-9)


def test_one_pass_in_file_order_equals_scikit_learns_perceptron(shared_data, tmp_path):
    """``--order file`` on a store converted ``--no-shuffle``: the rows of a9a in file order, no bias."""
    from sklearn.datasets import load_svmlight_file
    from sklearn.linear_model import Perceptron

    from blocksvm.io import convert

    convert(shared_data / "a9a", tmp_path / "a9a.bsvm", block_rows=5000, shuffle=False, dtype="float64", progress=False)
    result = train(tmp_path / "a9a.bsvm", solver="perceptron", order="file", bias=-1, max_outer=1, verbose=0)
    X, y = load_svmlight_file(str(shared_data / "a9a"), n_features=123)
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)  # what scikit-learn's SGD takes
    oracle = Perceptron(shuffle=False, max_iter=1, tol=None, fit_intercept=False, eta0=1.0).fit(X, y)
    np.testing.assert_allclose(result.model.coef[0], oracle.coef_[0], rtol=0, atol=1e-9)
    assert result.history[0]["updates"] > 1000  # a9a is not separable: many mistakes in one pass


def test_progressive_validation_counts_each_row_before_its_update(store):
    """Per pass: progressive accuracy = rows right before their update (counted in numpy); the Perceptron
    updates on mistakes and on margins of 0 (a negative row at decision 0 is right, and still updates)."""
    result = train(store, solver="perceptron", max_outer=3, verbose=0, bias=-1)
    rows = BlockStore(store).n_rows
    right: list[int] = []
    w, _ = numpy_perceptron(store, 3, 0, -1.0, right)
    first = result.history[0]
    assert [r["progressive_accuracy"] for r in result.history] == pytest.approx([r / rows for r in right])
    assert first["progressive_accuracy"] >= 1 - first["updates"] / rows
    w, _ = numpy_perceptron(store, 1, 0, -1.0)
    assert 0 < first["progressive_loss"] and first["primal"] == pytest.approx(first["progressive_loss"] * rows)
    assert result.history[-1]["progressive_accuracy"] > first["progressive_accuracy"]
    np.testing.assert_allclose(
        train(store, solver="perceptron", max_outer=1, verbose=0, bias=-1).model.coef[0], w[:-1], atol=1e-9
    )
