"""FTRL-Proximal, added through the solver contract, against a numpy transcription of McMahan et al.'s Algorithm 1.

The oracle keeps ``z`` and ``n`` per coordinate and computes the weights of a row's features from them,
as Algorithm 1 of "Ad Click Prediction: a View from the Trenches" (KDD 2013) does, with the
(sub)gradient of the hinge or squared hinge loss written here by hand. It visits the rows in the
order the kernel does: the text file's (``--order file`` on a store converted without shuffling)
or the schedule's (block order, then each block's row order from its seed).
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import (
    NumpyFTRL,
    assert_trains_and_resumes_exactly,
    assert_weights,
    learner_text,
    multiclass_store,
    schedule,
    sparse_rows,
    streamed_and_one_pass,
    write_rows,
)
from sklearn.datasets import load_svmlight_file

from blocksvm.io import convert
from blocksvm.stream import stream
from blocksvm.train import train

FEATURES = 60


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    return learner_text(tmp_path_factory.mktemp("ftrl"), 7, 700, FEATURES, 8, 12)


def ftrl_in_file_order(text, passes: int, class_weight: dict | None = None, **kw) -> NumpyFTRL:
    """The oracle after ``passes`` passes over ``text``; its progressive sums are the last pass's."""
    X, y = load_svmlight_file(str(text), n_features=FEATURES)
    oracle = NumpyFTRL(FEATURES + 1, **kw)
    for _ in range(passes):
        oracle.correct, oracle.losses = 0, 0.0
        for i in range(X.shape[0]):
            row = X[i]
            weight = (class_weight or {}).get(int(y[i]), 1.0)
            oracle.learn(row.indices, row.data, 1.0 if y[i] > 0 else -1.0, weight)
    return oracle


HYPER = dict(alpha=0.3, beta=1.0, l1=5.0, l2=0.2)


@pytest.mark.parametrize(
    "loss, bias, class_weight", [("hinge", 1.0, None), ("squared-hinge", -1.0, None), ("hinge", 2.0, {1: 3.0, -1: 0.5})]
)
def test_ftrl_in_file_order_equals_the_numpy_transcription(text, in_file_order, loss, bias, class_weight):
    result = train(
        in_file_order,
        solver="ftrl",
        order="file",
        max_outer=2,
        loss=loss,
        bias=bias,
        class_weight=class_weight,
        ftrl_alpha=HYPER["alpha"],
        ftrl_beta=HYPER["beta"],
        l1=HYPER["l1"],
        l2=HYPER["l2"],
        verbose=0,
    )
    oracle = ftrl_in_file_order(text, 2, class_weight, loss=loss, bias=bias, **HYPER)
    w = oracle.coef()
    assert_weights(result.model, w, bias)
    last = result.history[-1]
    assert 0 < last["nonzero_weights"] == np.count_nonzero(w[:-1]) < FEATURES  # l1 zeroes some weights exactly
    assert last["progressive_accuracy"] == oracle.correct / 700
    assert last["progressive_loss"] == pytest.approx(oracle.losses / 700, rel=1e-10)
    # the final record's objective is exact: the C-weighted losses at the final w, and the penalties
    X, y = load_svmlight_file(str(text), n_features=FEATURES)
    margins = y * (X @ w[:-1] + (w[-1] * bias if bias > 0 else 0.0))
    costs = np.array([(class_weight or {}).get(int(label), 1.0) for label in y])
    losses = costs * np.maximum(0.0, 1 - margins) ** (1 if loss == "hinge" else 2)
    regularizer = HYPER["l1"] * np.abs(w).sum() + 0.5 * HYPER["l2"] * w @ w
    assert last["primal_exact"] and last["primal"] == pytest.approx(losses.sum() + regularizer, rel=1e-10)


def test_multiclass_ftrl_is_one_vs_rest_in_the_schedules_order(tmp_path):
    store = multiclass_store(tmp_path, 3)
    result = train(store, solver="ftrl", max_outer=2, seed=4, l1=0.2, verbose=0)
    assert result.model.coef.shape == (3, 30)
    oracles = [NumpyFTRL(31, 0.1, 1.0, 0.2, 0.0, "squared-hinge", 1.0) for _ in range(3)]
    for X, labels, k, order in schedule(store, 2, 4, 3):
        for i in order:
            oracles[k].learn(X[i].indices, X[i].data.astype(np.float64), 1.0 if labels[i] == k + 1 else -1.0)
    for k in range(3):
        assert_weights(result.model, oracles[k].coef(), k=k)


def test_cli_trains_and_resumes_ftrl_exactly(shuffled, tmp_path):
    flags = "--solver ftrl --ftrl-alpha 0.2 --ftrl-beta 0.5 --lambda1 0.3 --lambda2 0.1 --seed 9".split()
    options = dict(solver="ftrl", ftrl_alpha=0.2, ftrl_beta=0.5, l1=0.3, l2=0.1, seed=9)
    assert_trains_and_resumes_exactly(train, shuffled, tmp_path, flags, **options)


def test_a_stream_of_the_text_is_one_pass_in_file_order(text, tmp_path):
    streamed, trained = streamed_and_one_pass(stream, train, text, tmp_path, solver="ftrl", l1=0.5, loss="hinge")
    assert streamed.summary["progressive_accuracy"] == trained.history[0]["progressive_accuracy"]


def test_warm_start_begins_at_the_models_weights(shuffled, tmp_path):
    first = train(shuffled, solver="ftrl", l1=0.3, max_outer=1, verbose=0).model
    first.save(tmp_path / "first.h5")
    # a pass with the weights frozen by l1 too large to move: the warm start keeps the model's weights
    again = train(
        shuffled, solver="ftrl", l1=0.3, max_outer=1, verbose=0, warm_start=tmp_path / "first.h5", ftrl_alpha=1e-12
    )
    np.testing.assert_allclose(again.model.coef, first.coef, rtol=1e-9, atol=1e-9)


@pytest.mark.slow
def test_sparse_target_reaches_dual_cds_accuracy_with_half_its_nonzeros(tmp_path):
    """The issue's target: 10% of 1,000 features matter; FTRL with L1 is within 1 point of dual CD's test
    accuracy with at most half its nonzero weights (in fact about a tenth, and better accuracy)."""
    idx, val, y = sparse_rows(np.random.default_rng(0), 24000, 1000, 50, 100, 0.02)
    write_rows(tmp_path / "train.svm", idx[:20000], val[:20000], y[:20000])
    convert(tmp_path / "train.svm", tmp_path / "train.bsvm", block_rows=5000, n_features=1000, progress=False)
    write_rows(tmp_path / "test.svm", idx[20000:], val[20000:], y[20000:])
    X_test, y_test = load_svmlight_file(str(tmp_path / "test.svm"), n_features=1000)
    dual_cd = train(tmp_path / "train.bsvm", solver="dual-cd", loss="hinge", verbose=0).model
    ftrl = train(tmp_path / "train.bsvm", solver="ftrl", loss="hinge", l1=300.0, max_outer=5, verbose=0).model
    accuracy = {name: np.mean(m.predict(X_test) == y_test) for name, m in (("dual_cd", dual_cd), ("ftrl", ftrl))}
    assert accuracy["ftrl"] >= accuracy["dual_cd"] - 0.01
    assert np.count_nonzero(ftrl.coef) <= np.count_nonzero(dual_cd.coef) / 2
