"""Projected online gradient descent, added through the solver contract: a numpy transcription, Pegasos,
and LIBLINEAR's optimum.

The transcription keeps ``w`` and the sum of the iterates as plain vectors and makes, row by row, the
step the textbook writes: ``w <- Pi_R((1 - eta_t lambda) w + eta_t g_t y_t x_t)``, with no scale trick
and no deferred sums (the kernel has both). It visits the rows in the kernel's order: the text file's, or
the trainer's schedule (block order, then each block's row order from its seed).
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
    liblinear_fit,
    loss_gradient,
    multiclass_store,
    primal,
    schedule,
    streamed_and_one_pass,
    with_bias,
)
from sklearn.datasets import load_svmlight_file

from blocksvm.errors import ParameterError
from blocksvm.io import convert
from blocksvm.stream import stream
from blocksvm.train import train

# The oracles here transcribe the last iterate: average=False for the learners that read it.
stream = last_iterate(stream)
train = last_iterate(train)

FEATURES = 50
ROWS = 600
# How much a row's loss curves per unit of ||x||^2: the smooth schedule's L = CURVATURE ||x||^2
CURVATURE = {"hinge": 0.0, "squared-hinge": 2.0}


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    return learner_text(tmp_path_factory.mktemp("ogd"), 19, ROWS, FEATURES, 7, 10)


class NumpyOGD:
    """Projected OGD on lambda/2 ||w||^2 + loss(y w.x), one row at a time, and the mean of the iterates."""

    def __init__(self, n_weights: int, rows: int, C: float, loss: str, step_schedule: str, eta: float):
        self.lam = 1.0 / (rows * C)
        self.radius = 1.0 / np.sqrt(self.lam) if loss == "hinge" else np.sqrt(2.0 / self.lam)
        self.w, self.sum, self.t = np.zeros(n_weights), np.zeros(n_weights), 0
        self.loss, self.step_schedule, self.eta = loss, step_schedule, eta
        self.correct, self.losses = 0, 0.0  # progressive validation: each row before its update

    def learn(self, x: np.ndarray, y: float, weight: float = 1.0) -> None:
        self.t += 1
        eta_t = {
            "inverse": 1.0 / (self.lam * self.t),
            "smooth": 1.0 / (self.lam * self.t + CURVATURE[self.loss] * (x @ x)),
            "sqrt": self.eta / np.sqrt(self.t),
        }[self.step_schedule]
        margin = y * (self.w @ x)
        self.correct += margin > 0 or (margin == 0 and y < 0)  # a decision of 0 reads as the negative class
        self.losses += max(0.0, 1 - margin) ** (1 if self.loss == "hinge" else 2)
        # w - eta_t (lambda w - g y x), a shrink never below 0
        w = max(0.0, 1.0 - eta_t * self.lam) * self.w + eta_t * weight * loss_gradient(self.loss, margin) * y * x
        norm = np.linalg.norm(w)
        self.w = w * self.radius / norm if norm > self.radius else w
        self.sum += self.w

    def average(self) -> np.ndarray:
        return self.sum / self.t


@pytest.mark.parametrize(
    "loss, bias, step_schedule, eta, C, class_weight",
    [
        ("hinge", 1.0, "inverse", 1.0, 0.5, None),
        ("squared-hinge", -1.0, "inverse", 1.0, 0.05, None),
        ("hinge", -1.0, "sqrt", 0.5, 1.0, None),
        ("squared-hinge", 2.0, "sqrt", 0.2, 0.1, {1: 3.0, -1: 0.5}),
        ("hinge", 1.0, "sqrt", 130.0, 0.01, None),  # eta lambda / sqrt(t) > 1 for 470 rows: the shrink stops at 0
        ("squared-hinge", 1.0, "smooth", 1.0, 0.5, None),
        ("squared-hinge", 2.0, "smooth", 1.0, 0.1, {1: 3.0, -1: 0.5}),
    ],
)
@pytest.mark.parametrize("average", [False, True])
def test_in_file_order_equals_the_numpy_transcription(
    text, in_file_order, loss, bias, step_schedule, eta, C, class_weight, average
):
    result = train(
        in_file_order,
        solver="ogd",
        order="file",
        max_outer=3,
        loss=loss,
        bias=bias,
        C=C,
        class_weight=class_weight,
        ogd_schedule=step_schedule,
        ogd_eta=eta,
        average=average,
        verbose=0,
    )
    X, y = load_svmlight_file(str(text), n_features=FEATURES)
    oracle = learn_in_file_order(
        NumpyOGD(FEATURES + 1, ROWS, C, loss, step_schedule, eta), with_bias(X, bias), y, 3, class_weight
    )
    w = oracle.average() if average else oracle.w
    assert_weights(result.model, w, bias, rtol=1e-9, atol=1e-9 * np.abs(w).max())
    last = result.history[-1]
    assert last["progressive_accuracy"] == pytest.approx(oracle.correct / ROWS)
    assert last["progressive_loss"] == pytest.approx(oracle.losses / ROWS, rel=1e-9)


def test_multiclass_averaged_ogd_is_one_vs_rest_in_the_schedules_order(tmp_path):
    store = multiclass_store(tmp_path, 9)
    result = train(
        store,
        solver="ogd",
        ogd_schedule="sqrt",
        loss="hinge",
        average=True,
        max_outer=2,
        seed=4,
        verbose=0,
    )
    assert result.model.coef.shape == (3, 30)
    oracles = [NumpyOGD(31, 600, 1.0, "hinge", "sqrt", 1.0) for _ in range(3)]
    for X, labels, k, order in schedule(store, 2, 4, 3):
        rows = with_bias(X, 1.0)
        for i in order:
            oracles[k].learn(rows[i], 1.0 if labels[i] == k + 1 else -1.0)
    for k in range(3):
        assert_weights(result.model, oracles[k].average(), k=k, rtol=1e-9)


@pytest.mark.parametrize("steps", ["inverse", "smooth"])
def test_steps_of_one_over_lambda_t_are_pegasos_with_batches_of_one(shuffled, steps):
    """The same algorithm, written apart (Pegasos's kernel steps per mini-batch): the same iterate."""
    for loss in ("hinge", "squared-hinge"):
        kw = dict(loss=loss, average=False, max_outer=3, seed=2, verbose=0)
        ogd = train(shuffled, solver="ogd", ogd_schedule=steps, **kw)
        pegasos = train(shuffled, solver="pegasos", batch_size=1, pegasos_schedule=steps, **kw)
        np.testing.assert_allclose(ogd.model.coef, pegasos.model.coef, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(ogd.model.intercept, pegasos.model.intercept, rtol=1e-9, atol=1e-12)


def numpy_pegasos(rows, y, block_rows, passes, C, loss, batch_size, weight):
    """Pegasos's smooth mini-batch steps as the paper writes them, on dense rows in file order (batches do not
    cross blocks), and the mean of the block-end iterates from the second pass on: ``(last, mean)``."""
    lam = 1.0 / (len(y) * C)
    radius = 1.0 / np.sqrt(lam) if loss == "hinge" else np.sqrt(2.0 / lam)
    w, t, ends = np.zeros(rows.shape[1]), 1, []
    for outer in range(1, passes + 1):
        for block in range(0, len(y), block_rows):
            for start in range(block, min(block + block_rows, len(y)), batch_size):
                batch = range(start, min(start + batch_size, block + block_rows, len(y)))
                g = [loss_gradient(loss, y[i] * (w @ rows[i])) * weight[y[i]] * y[i] * rows[i] for i in batch]
                L = CURVATURE[loss] * np.mean([rows[i] @ rows[i] for i in batch])
                eta = 1.0 / (lam * t + L)
                w = (1.0 - eta * lam) * w + eta * np.mean(g, axis=0)
                w = w * min(1.0, radius / np.linalg.norm(w)) if w.any() else w
                t += 1
            if outer >= 2:
                ends.append(w)
    return w, np.mean(ends, axis=0)


@pytest.mark.parametrize(
    "loss, bias, C, class_weight", [("squared-hinge", 1.0, 0.5, None), ("squared-hinge", 2.0, 0.1, {1: 3.0})]
)
def test_pegasos_smooth_mini_batches_equal_the_numpy_transcription(text, in_file_order, loss, bias, C, class_weight):
    """Pegasos's default steps, 1 / (lambda t + L) with L the batch's mean curvature, in file order: the
    transcription's last iterate and mean of block ends (the kernel keeps w as scale * v, ||w||^2 incrementally)."""
    kw = dict(solver="pegasos", order="file", max_outer=3, loss=loss, bias=bias, C=C, batch_size=4, verbose=0)
    X, labels = load_svmlight_file(str(text), n_features=FEATURES)
    y = np.where(labels > 0, 1.0, -1.0)
    weight = {1.0: (class_weight or {}).get(1, 1.0), -1.0: (class_weight or {}).get(-1, 1.0)}
    last, mean = numpy_pegasos(with_bias(X, bias), y, 150, 3, C, loss, 4, weight)
    for average, w in ((False, last), (True, mean)):
        model = train(in_file_order, class_weight=class_weight, average=average, **kw).model
        np.testing.assert_allclose(model.coef[0], w[:-1], rtol=1e-9, atol=1e-12 * np.abs(w).max())
        np.testing.assert_allclose(model.intercept[0], w[-1] * bias, rtol=1e-9, atol=1e-12 * np.abs(w).max())


@pytest.mark.parametrize(
    "loss, step_schedule, passes, within",
    [
        ("hinge", "inverse", 5, 0.02),
        ("squared-hinge", "sqrt", 10, 0.05),
    ],
)
def test_the_average_nears_the_svm_optimum(small_libsvm, tmp_path, loss, step_schedule, passes, within):
    """The online-to-batch average's objective, a few passes in, within a few % of LIBLINEAR's optimum."""
    C = 0.1
    convert(small_libsvm, tmp_path / "small.bsvm", block_rows=1000, progress=False)
    result = train(
        tmp_path / "small.bsvm",
        solver="ogd",
        ogd_schedule=step_schedule,
        loss=loss,
        C=C,
        average=True,
        max_outer=passes,
        verbose=0,
    )
    X, y = load_svmlight_file(str(small_libsvm), n_features=result.model.n_features)
    optimum = primal(*liblinear_fit(X, y, loss, C, 1.0), X, y, C, loss)
    objective = primal(result.model.coef[0], result.model.intercept[0], X, y, C, loss)
    assert optimum <= objective <= (1 + within) * optimum
    assert result.history[-1]["primal"] == pytest.approx(objective, rel=1e-9)  # the final record is exact


def test_cli_trains_and_resumes_exactly(shuffled, tmp_path):
    flags = "--solver ogd --average --ogd-schedule sqrt --ogd-eta 0.7 --loss hinge --seed 9".split()
    options = dict(solver="ogd", average=True, ogd_schedule="sqrt", ogd_eta=0.7, loss="hinge", seed=9)
    whole = assert_trains_and_resumes_exactly(train, shuffled, tmp_path, flags, **options)
    other = train(shuffled, max_outer=4, verbose=0, **{**options, "ogd_eta": 0.3})
    assert not np.allclose(other.model.coef, whole.model.coef)  # the flag reaches the learner


def test_a_stream_of_the_text_is_one_pass_in_file_order(text, tmp_path):
    """A stream knows no row count: lambda = 1 / C there (its problem has one row), and so here."""
    kw = dict(solver="ogd", average=True, loss="hinge")
    streamed_and_one_pass(stream, train, text, tmp_path, stream_kw={"C": 1.0}, train_kw={"C": 1.0 / ROWS}, **kw)


def test_warm_start_is_refused(shuffled, tmp_path):
    """OGD's step count and average are more than a model's weights."""
    train(shuffled, solver="ogd", max_outer=1, verbose=0).model.save(tmp_path / "first.h5")
    with pytest.raises(ParameterError, match="--solver ogd cannot continue a saved model"):
        train(shuffled, solver="ogd", max_outer=1, verbose=0, warm_start=tmp_path / "first.h5")
