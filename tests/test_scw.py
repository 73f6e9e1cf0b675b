"""SCW-I and SCW-II against numpy transcriptions of Wang, Zhao & Hoi, "Exact Soft Confidence-Weighted Learning"
(ICML 2012), Algorithms 1 and 2.

The full-covariance oracle is the paper's algorithm as printed; on rows with one nonzero feature each (no bias),
``Sigma x x^T Sigma`` is diagonal, so blocksvm's diagonal SCW must equal it exactly. The diagonal oracle keeps
``Sigma``'s diagonal, as blocksvm does, for every other test.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import assert_weights, learn_in_file_order, learner_text, multiclass_store, schedule, with_bias
from sklearn.datasets import load_svmlight_file

from blocksvm.io import convert
from blocksvm.stream import stream
from blocksvm.train import train

FEATURES = 40
ROWS = 500


def alpha_of(variant: str, m: float, v: float, phi: float, C: float) -> float:
    """The paper's step: Algorithm 1 (SCW-I) or 2 (SCW-II)."""
    psi, zeta = 1 + phi**2 / 2, 1 + phi**2
    if variant == "scw1":
        return min(C, max(0.0, (-m * psi + np.sqrt(m**2 * phi**4 / 4 + v * phi**2 * zeta)) / (v * zeta)))
    n = v + 1 / (2 * C)
    gamma = phi * np.sqrt(phi**2 * m**2 * v**2 + 4 * n * v * (n + v * phi**2))
    return max(0.0, (-(2 * m * n + phi**2 * m * v) + gamma) / (2 * (n**2 + n * v * phi**2)))


class NumpySCW:
    """One SCW learner; ``full``: Sigma a matrix (the paper), else its diagonal (blocksvm's variant)."""

    def __init__(self, variant: str, n_weights: int, phi: float, C: float, full: bool = False):
        self.variant, self.phi, self.C, self.full = variant, phi, C, full
        self.mu = np.zeros(n_weights)
        self.sigma = np.eye(n_weights) if full else np.ones(n_weights)
        self.correct, self.losses = 0, 0.0

    def learn(self, x: np.ndarray, y: float, weight: float = 1.0) -> None:
        sigma_x = self.sigma @ x if self.full else self.sigma * x
        m, v = y * (self.mu @ x), x @ sigma_x
        self.correct += m > 0 or (m == 0 and y < 0)  # a decision of 0 reads as the negative class
        self.losses += max(0.0, 1.0 - m)
        if v == 0 or self.phi * np.sqrt(v) - m <= 0:  # the loss max(0, phi sqrt(v) - m) is 0
            return
        alpha = alpha_of(self.variant, m, v, self.phi, self.C * weight)
        u = (-alpha * v * self.phi + np.sqrt(alpha**2 * v**2 * self.phi**2 + 4 * v)) ** 2 / 4
        beta = alpha * self.phi / (np.sqrt(u) + v * alpha * self.phi)
        self.mu = self.mu + alpha * y * sigma_x
        self.sigma = self.sigma - beta * (np.outer(sigma_x, sigma_x) if self.full else sigma_x**2)


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    return learner_text(tmp_path_factory.mktemp("scw"), 23, ROWS, FEATURES, 6, 9, positive_first=False)


@pytest.fixture(scope="module")
def in_file_order(text):
    path = text.with_suffix(".bsvm")
    convert(text, path, block_rows=125, shuffle=False, dtype="float64", progress=False)
    return path


@pytest.mark.parametrize("variant", ["scw1", "scw2"])
def test_one_feature_a_row_equals_the_papers_full_covariance_algorithm(tmp_path, variant):
    rng = np.random.default_rng(4)
    columns, values = rng.integers(1, 9, 300), rng.normal(size=300).round(3) + 0.01
    labels = np.where(rng.random(300) < 0.5 + 0.1 * np.sign(values), 1, -1)
    (tmp_path / "one.svm").write_text("".join(f"{y} {c}:{v}\n" for y, c, v in zip(labels, columns, values)))
    model = stream(tmp_path / "one.svm", solver=variant, C=0.3, scw_phi=0.7, bias=-1, dtype="float64", verbose=0).model
    X, y = load_svmlight_file(str(tmp_path / "one.svm"), n_features=8)
    oracle = NumpySCW(variant, 8, phi=0.7, C=0.3, full=True)
    for x, label in zip(X.toarray(), y):
        oracle.learn(x, label)
    assert np.count_nonzero(oracle.sigma - np.diag(np.diag(oracle.sigma))) == 0
    np.testing.assert_allclose(model.coef[0], oracle.mu, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("variant", ["scw1", "scw2"])
@pytest.mark.parametrize("bias, class_weight", [(1.0, None), (-1.0, None), (2.0, {1: 3.0, -1: 0.5})])
def test_in_file_order_equals_the_diagonal_transcription(text, in_file_order, variant, bias, class_weight):
    result = train(
        in_file_order,
        solver=variant,
        C=0.5,
        scw_phi=1.2,
        order="file",
        max_outer=2,
        bias=bias,
        class_weight=class_weight,
        verbose=0,
    )
    X, y = load_svmlight_file(str(text), n_features=FEATURES)
    oracle = NumpySCW(variant, FEATURES + 1, phi=1.2, C=0.5)
    learn_in_file_order(oracle, with_bias(X, bias), y, 2, class_weight)
    assert_weights(result.model, oracle.mu, bias)
    last = result.history[-1]
    assert last["progressive_accuracy"] == pytest.approx(oracle.correct / ROWS)
    assert last["progressive_loss"] == pytest.approx(oracle.losses / ROWS, rel=1e-10)


def test_multiclass_is_one_vs_rest_in_the_schedules_order(tmp_path):
    store = multiclass_store(tmp_path, 8)
    result = train(store, solver="scw2", C=0.2, max_outer=2, seed=4, verbose=0)
    oracles = [NumpySCW("scw2", 31, phi=1.0, C=0.2) for _ in range(3)]
    for X, labels, k, order in schedule(store, 2, 4, 3):
        rows = with_bias(X, 1.0)
        for i in order:
            oracles[k].learn(rows[i], 1.0 if labels[i] == k + 1 else -1.0)
    for k in range(3):
        np.testing.assert_allclose(result.model.coef[k], oracles[k].mu[:-1], rtol=1e-10, atol=1e-12)


def test_the_cap_bounds_scw1s_steps_and_scw2_damps_them(in_file_order):
    """SCW-I with C above every step is SCW-I uncapped; a smaller C changes it; SCW-II differs from both."""
    models = {
        C: train(in_file_order, solver="scw1", C=C, order="file", max_outer=1, verbose=0).model.coef
        for C in (1e-3, 1e300)
    }
    assert not np.allclose(models[1e-3], models[1e300])
    assert np.linalg.norm(models[1e-3]) < np.linalg.norm(models[1e300])
    scw2 = train(in_file_order, solver="scw2", C=1e-3, order="file", max_outer=1, verbose=0).model.coef
    assert not np.allclose(scw2, models[1e-3])


@pytest.mark.parametrize("variant", ["scw1", "scw2"])
def test_a_stream_is_one_pass_in_file_order(text, in_file_order, variant):
    streamed = stream(text, solver=variant, verbose=0, chunk_bytes=4096, dtype="float64").model
    one_pass = train(in_file_order, solver=variant, order="file", max_outer=1, verbose=0).model
    np.testing.assert_array_equal(streamed.coef, one_pass.coef)
    np.testing.assert_array_equal(streamed.intercept, one_pass.intercept)
