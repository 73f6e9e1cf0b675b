"""L1-FOBOS / truncated gradient, added through the solver contract, against an eager numpy transcription.

The kernel defers each weight's shrinkage until its feature occurs (lazy updates: O(nnz) a row); the
oracle here does what Duchi & Singer's FOBOS step says, literally: a (sub)gradient step, then every
coordinate soft-thresholded at every row. Both visit the rows in the same order, so they must agree,
exact zeros included.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import (
    assert_trains_and_resumes_exactly,
    assert_weights,
    learn_in_file_order,
    learner_text,
    loss_gradient,
    multiclass_store,
    schedule,
    streamed_and_one_pass,
)
from sklearn.datasets import load_svmlight_file

from blocksvm.stream import stream
from blocksvm.train import train

FEATURES = 60
ROWS = 700


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    return learner_text(tmp_path_factory.mktemp("fobos"), 11, ROWS, FEATURES, 8, 12)


class NumpyFOBOS:
    """Duchi & Singer's L1 FOBOS step on every row, every coordinate shrunk every time (no lazy updates)."""

    def __init__(self, n_weights: int, eta: float, schedule: str, l1: float, loss: str, bias: float):
        self.w, self.t = np.zeros(n_weights), 0
        self.eta, self.schedule, self.l1, self.loss, self.bias = eta, schedule, l1, loss, bias
        self.correct, self.losses = 0, 0.0  # progressive validation: each row before its update

    def learn(self, x: np.ndarray, y: float, weight: float = 1.0) -> None:
        """One row, ``x`` dense with the features only."""
        x = np.append(x, self.bias if self.bias > 0 else 0.0)
        self.t += 1
        eta_t = self.eta / np.sqrt(self.t) if self.schedule == "sqrt" else self.eta
        margin = y * (self.w @ x)
        self.correct += margin > 0 or (margin == 0 and y < 0)  # a decision of 0 reads as the negative class
        self.losses += max(0.0, 1 - margin) ** (1 if self.loss == "hinge" else 2)
        half = self.w + eta_t * y * weight * loss_gradient(self.loss, margin) * x  # w - eta_t g_t
        self.w = np.sign(half) * np.maximum(0.0, np.abs(half) - eta_t * self.l1)


HYPER = dict(eta=0.5, l1=0.02)


@pytest.mark.parametrize(
    "loss, bias, step_schedule, class_weight",
    [
        ("hinge", 1.0, "sqrt", None),
        ("squared-hinge", -1.0, "sqrt", None),
        ("hinge", 2.0, "constant", {1: 3.0, -1: 0.5}),
        ("squared-hinge", 1.0, "constant", None),
    ],
)
def test_lazy_fobos_in_file_order_equals_the_eager_transcription(
    text, in_file_order, loss, bias, step_schedule, class_weight
):
    eta = HYPER["eta"] if step_schedule == "sqrt" else HYPER["eta"] / 10
    result = train(
        in_file_order,
        solver="fobos",
        order="file",
        max_outer=2,
        loss=loss,
        bias=bias,
        class_weight=class_weight,
        fobos_eta=eta,
        fobos_schedule=step_schedule,
        l1=HYPER["l1"],
        verbose=0,
    )
    X, y = load_svmlight_file(str(text), n_features=FEATURES)
    oracle = NumpyFOBOS(FEATURES + 1, eta, step_schedule, HYPER["l1"], loss, bias)
    w = learn_in_file_order(oracle, X.toarray(), y, 2, class_weight).w
    assert_weights(result.model, w, bias)
    last = result.history[-1]
    assert 0 < last["nonzero_weights"] == np.count_nonzero(w[:-1]) < FEATURES  # l1 zeroes some weights exactly
    assert np.array_equal(result.model.coef[0] == 0, w[:-1] == 0)
    assert last["progressive_accuracy"] == oracle.correct / ROWS
    assert last["progressive_loss"] == pytest.approx(oracle.losses / ROWS, rel=1e-10)
    # the final record's objective is exact: the C-weighted losses at the final w, and rows * l1 ||w||_1
    margins = y * (X @ w[:-1] + (w[-1] * bias if bias > 0 else 0.0))
    costs = np.array([(class_weight or {}).get(int(label), 1.0) for label in y])
    losses = costs * np.maximum(0.0, 1 - margins) ** (1 if loss == "hinge" else 2)
    assert last["primal_exact"] and last["primal"] == pytest.approx(
        losses.sum() + ROWS * HYPER["l1"] * np.abs(w).sum(), rel=1e-10
    )


def test_multiclass_fobos_is_one_vs_rest_in_the_schedules_order(tmp_path):
    store = multiclass_store(tmp_path, 5)
    result = train(store, solver="fobos", max_outer=2, seed=4, l1=0.01, verbose=0)
    assert result.model.coef.shape == (3, 30)
    oracles = [NumpyFOBOS(31, 0.1, "sqrt", 0.01, "squared-hinge", 1.0) for _ in range(3)]
    for X, labels, k, order in schedule(store, 2, 4, 3):
        for i in order:
            oracles[k].learn(X[i].toarray()[0].astype(np.float64), 1.0 if labels[i] == k + 1 else -1.0)
    for k in range(3):
        assert_weights(result.model, oracles[k].w, k=k)


def test_cli_trains_and_resumes_fobos_exactly(shuffled, tmp_path):
    flags = ["--solver", "fobos", "--fobos-eta", "0.3", "--lambda1", "0.01", "--seed", "9"]
    whole = assert_trains_and_resumes_exactly(
        train, shuffled, tmp_path, flags, solver="fobos", fobos_eta=0.3, l1=0.01, seed=9
    )
    resumed = train(
        shuffled, max_outer=4, resume=tmp_path / "c2.h5", solver="fobos", fobos_eta=0.3, l1=0.01, seed=9, verbose=0
    )
    assert [r["nonzero_weights"] for r in resumed.history] == [r["nonzero_weights"] for r in whole.history]


def test_a_stream_of_the_text_is_one_pass_in_file_order(text, tmp_path):
    streamed, trained = streamed_and_one_pass(stream, train, text, tmp_path, solver="fobos", l1=0.02, loss="hinge")
    assert streamed.summary["progressive_accuracy"] == trained.history[0]["progressive_accuracy"]


def test_warm_start_begins_at_the_models_weights(shuffled, tmp_path):
    first = train(shuffled, solver="fobos", l1=0.01, max_outer=1, verbose=0).model
    first.save(tmp_path / "first.h5")
    again = train(
        shuffled, solver="fobos", l1=0.0, fobos_eta=1e-12, max_outer=1, verbose=0, warm_start=tmp_path / "first.h5"
    )
    np.testing.assert_allclose(again.model.coef, first.coef, rtol=1e-9, atol=1e-9)
