"""CW and AROW (diagonal covariance), added through the solver contract, against numpy transcriptions.

The oracles keep ``mu`` and the diagonal of ``Sigma`` and apply, row by row, Algorithm 1 of Dredze,
Crammer & Pereira, "Confidence-Weighted Linear Classification" (ICML 2008; the approximate "Variance"
update, ``Sigma^-1 += 2 alpha phi diag(x^2)``, with ``phi`` from scipy's normal quantile) and Figure 1 of
Crammer, Kulesza & Dredze, "Adaptive Regularization of Weight Vectors" (NIPS 2009; ``Sigma^-1 += x x^T / r``
kept on the diagonal). They visit the rows in the kernel's order: the text file's, or the trainer's
schedule (block order, then each block's row order from its seed).
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import (
    assert_trains_and_resumes_exactly,
    assert_weights,
    last_iterate,
    learn_in_file_order,
    learner_text,
    multiclass_store,
    schedule,
    sparse_rows,
    streamed_and_one_pass,
    with_bias,
    write_rows,
)
from scipy.stats import norm
from sklearn.datasets import load_svmlight_file

from blocksvm.io import convert
from blocksvm.stream import stream
from blocksvm.train import train

# The oracles here transcribe the last iterate: average=False for the learners that read it.
stream = last_iterate(stream)
train = last_iterate(train)

FEATURES = 50
ROWS = 600


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    return learner_text(tmp_path_factory.mktemp("cw"), 17, ROWS, FEATURES, 7, 10)


class NumpyCW:
    """Dredze, Crammer & Pereira 2008, Algorithm 1 (Variance), Sigma = a I at the start (a = 1); a class weight c
    asks for the confidence c phi."""

    def __init__(self, n_weights: int, eta: float):
        self.mu, self.sigma = np.zeros(n_weights), np.ones(n_weights)  # sigma: the diagonal of Sigma
        self.phi = norm.ppf(eta)
        self.correct, self.losses = 0, 0.0  # progressive validation: each row before its update

    def learn(self, x: np.ndarray, y: float, weight: float = 1.0) -> None:
        M, V = y * (x @ self.mu), x @ (self.sigma * x)
        self.correct += M > 0 or (M == 0 and y < 0)  # a decision of 0 reads as the negative class
        self.losses += max(0.0, 1.0 - M)
        if V == 0:
            return
        phi = weight * self.phi
        gamma = (-(1 + 2 * phi * M) + np.sqrt((1 + 2 * phi * M) ** 2 - 8 * phi * (M - phi * V))) / (4 * phi * V)
        alpha = max(gamma, 0.0)
        self.mu = self.mu + alpha * y * self.sigma * x
        self.sigma = 1.0 / (1.0 / self.sigma + 2 * alpha * phi * x**2)


class NumpyAROW(NumpyCW):
    """Crammer, Kulesza & Dredze 2009, Figure 1, diagonal; a class weight c weights the row's loss: r / c."""

    def __init__(self, n_weights: int, r: float):
        self.mu, self.sigma, self.r = np.zeros(n_weights), np.ones(n_weights), r
        self.correct, self.losses = 0, 0.0

    def learn(self, x: np.ndarray, y: float, weight: float = 1.0) -> None:
        m, v = x @ self.mu, x @ (self.sigma * x)
        self.correct += y * m > 0 or (m == 0 and y < 0)
        self.losses += max(0.0, 1.0 - y * m)
        if y * m < 1 and v > 0:
            r = self.r / weight
            beta = 1.0 / (v + r)
            alpha = max(0.0, 1.0 - y * m) * beta
            self.mu = self.mu + alpha * self.sigma * y * x
            self.sigma = 1.0 / (1.0 / self.sigma + x**2 / r)


def oracle_of(solver: str, n_weights: int, eta: float = 0.8, r: float = 0.5) -> NumpyCW:
    return NumpyCW(n_weights, eta) if solver == "cw" else NumpyAROW(n_weights, r)


HYPER = {"cw": {"cw_eta": 0.8}, "arow": {"arow_r": 0.5}}  # each learner's own parameter


@pytest.mark.parametrize("solver", ["cw", "arow"])
@pytest.mark.parametrize("bias, class_weight", [(1.0, None), (-1.0, None), (2.0, {1: 3.0, -1: 0.5})])
def test_in_file_order_equals_the_numpy_transcription(text, in_file_order, solver, bias, class_weight):
    result = train(
        in_file_order,
        solver=solver,
        order="file",
        max_outer=2,
        bias=bias,
        class_weight=class_weight,
        verbose=0,
        **HYPER[solver],
    )
    X, y = load_svmlight_file(str(text), n_features=FEATURES)
    oracle = learn_in_file_order(oracle_of(solver, FEATURES + 1), with_bias(X, bias), y, 2, class_weight)
    assert_weights(result.model, oracle.mu, bias)
    last = result.history[-1]
    assert last["progressive_accuracy"] == pytest.approx(oracle.correct / ROWS)
    assert last["progressive_loss"] == pytest.approx(oracle.losses / ROWS, rel=1e-10)


@pytest.mark.parametrize("solver", ["cw", "arow"])
def test_multiclass_is_one_vs_rest_in_the_schedules_order(tmp_path, solver):
    store = multiclass_store(tmp_path, 6)
    result = train(store, solver=solver, max_outer=2, seed=4, verbose=0, **HYPER[solver])
    assert result.model.coef.shape == (3, 30)
    oracles = [oracle_of(solver, 31) for _ in range(3)]
    for X, labels, k, order in schedule(store, 2, 4, 3):
        rows = with_bias(X, 1.0)
        for i in order:
            oracles[k].learn(rows[i], 1.0 if labels[i] == k + 1 else -1.0)
    for k in range(3):
        assert_weights(result.model, oracles[k].mu, k=k)


@pytest.mark.parametrize("solver", ["cw", "arow"])
def test_empty_rows_without_a_bias_change_nothing(tmp_path, solver):
    """x^T Sigma x = 0 (no features, no bias): alpha is 0, so the rows cost their loss and leave mu, Sigma be."""
    idx, val, y = sparse_rows(np.random.default_rng(2), 200, 20, 5, 6, 0.1)
    write_rows(tmp_path / "full.svm", idx, val, y)
    lines = (tmp_path / "full.svm").read_text().splitlines(keepends=True)
    (tmp_path / "empty.svm").write_text("".join(line + ("1\n" if i % 3 == 0 else "") for i, line in enumerate(lines)))
    results = []
    for name in ("full", "empty"):
        convert(tmp_path / f"{name}.svm", tmp_path / f"{name}.bsvm", block_rows=60, shuffle=False, progress=False)
        results.append(train(tmp_path / f"{name}.bsvm", solver=solver, order="file", bias=-1, max_outer=2, verbose=0))
        assert np.all(np.isfinite(results[-1].model.coef))
    np.testing.assert_array_equal(results[0].model.coef, results[1].model.coef)
    assert results[1].history[0]["updates"] == results[0].history[0]["updates"]


@pytest.mark.parametrize("solver, flags", [("cw", ["--cw-eta", "0.7"]), ("arow", ["--arow-r", "0.3"])])
def test_cli_trains_and_resumes_exactly(shuffled, tmp_path, solver, flags):
    own = {"cw_eta": 0.7} if solver == "cw" else {"arow_r": 0.3}
    flags = ["--solver", solver, *flags, "--no-average", "--seed", "9"]
    whole = assert_trains_and_resumes_exactly(train, shuffled, tmp_path, flags, solver=solver, seed=9, **own)
    other = train(
        shuffled,
        max_outer=4,
        solver=solver,
        seed=9,
        verbose=0,
        **({"cw_eta": 0.95} if solver == "cw" else {"arow_r": 3.0}),
    )
    assert not np.allclose(other.model.coef, whole.model.coef)  # the flag reaches the learner


@pytest.mark.parametrize("solver", ["cw", "arow"])
def test_a_stream_of_the_text_is_one_pass_in_file_order(text, tmp_path, solver):
    streamed, trained = streamed_and_one_pass(stream, train, text, tmp_path, solver=solver, **HYPER[solver])
    assert streamed.summary["progressive_accuracy"] == pytest.approx(trained.history[0]["progressive_accuracy"])


@pytest.mark.parametrize("solver", ["cw", "arow"])
def test_warm_start_takes_the_models_weights_as_the_mean_with_a_fresh_variance(text, in_file_order, tmp_path, solver):
    kw = dict(solver=solver, order="file", verbose=0, **HYPER[solver])
    first = train(in_file_order, max_outer=1, **kw).model
    first.save(tmp_path / "first.h5")
    again = train(in_file_order, max_outer=1, warm_start=tmp_path / "first.h5", **kw).model
    oracle = oracle_of(solver, FEATURES + 1)
    oracle.mu = np.append(first.coef[0], first.intercept[0])  # bias 1: the bias feature's weight
    X, y = load_svmlight_file(str(text), n_features=FEATURES)
    for x, label in zip(with_bias(X, 1.0), y):
        oracle.learn(x, 1.0 if label > 0 else -1.0)
    np.testing.assert_allclose(again.coef[0], oracle.mu[:-1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("solver", ["cw", "arow"])
@pytest.mark.parametrize("warm", [False, True])
def test_the_average_is_the_mean_of_the_iterates(text, in_file_order, tmp_path, solver, warm):
    """``average`` (the default): the model is the mean of ``mu`` after each row seen, the transcription's
    iterates averaged in numpy; a warm start counts the model it starts from as the first iterate's start."""
    kw = dict(solver=solver, order="file", verbose=0, **HYPER[solver])
    oracle = oracle_of(solver, FEATURES + 1)
    start = {}
    if warm:
        first = train(in_file_order, max_outer=1, **kw).model
        first.save(tmp_path / "first.h5")
        oracle.mu = np.append(first.coef[0], first.intercept[0])
        start = {"warm_start": tmp_path / "first.h5"}
    result = train(in_file_order, max_outer=2, average=True, **kw, **start)
    X, y = load_svmlight_file(str(text), n_features=FEATURES)
    iterates = []
    for _ in range(2):
        for x, label in zip(with_bias(X, 1.0), y):
            oracle.learn(x, 1.0 if label > 0 else -1.0)
            iterates.append(oracle.mu.copy())
    mean = np.mean(iterates, axis=0)
    np.testing.assert_allclose(result.model.coef[0], mean[:-1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(result.model.intercept[0], mean[-1], rtol=1e-9, atol=1e-12)
