"""Each loss of blocksvm.losses against values computed by hand (the oracle in tests/oracle.py builds on them)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from blocksvm.losses import (
    CLASSIFICATION,
    EPSILON_INSENSITIVE,
    HINGE,
    LIBLINEAR_CODES,
    LOGISTIC_LOSS,
    LOSSES,
    PERCEPTRON,
    SQUARED_EPSILON_INSENSITIVE,
    SQUARED_HINGE,
)

MARGINS = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])


def test_values_by_hand():
    np.testing.assert_array_equal(HINGE.value(MARGINS), [2.0, 1.0, 0.5, 0.0, 0.0])
    np.testing.assert_array_equal(SQUARED_HINGE.value(MARGINS), [4.0, 1.0, 0.25, 0.0, 0.0])
    np.testing.assert_array_equal(PERCEPTRON.value(MARGINS), [1.0, 0.0, 0.0, 0.0, 0.0])
    expected = [math.log(1 + math.e), math.log(2), math.log(1 + math.exp(-0.5)), math.log(1 + 1 / math.e)]
    np.testing.assert_allclose(LOGISTIC_LOSS.value(MARGINS[:4]), expected, rtol=1e-15)
    assert LOGISTIC_LOSS.value([-800.0, 800.0]).tolist() == [800.0, 0.0]  # no overflow


def test_regression_values_by_hand():
    residuals = np.array([-2.0, -0.05, 0.0, 0.3, 1.1])
    svr = EPSILON_INSENSITIVE.with_epsilon(0.1)
    np.testing.assert_allclose(svr.value(residuals), [1.9, 0.0, 0.0, 0.2, 1.0])
    np.testing.assert_allclose(SQUARED_EPSILON_INSENSITIVE.with_epsilon(0.1).value(residuals), [3.61, 0, 0, 0.04, 1.0])
    assert EPSILON_INSENSITIVE.task == "regression" and LOGISTIC_LOSS.task == CLASSIFICATION


def test_derivatives_by_hand():
    np.testing.assert_array_equal(HINGE.derivative(MARGINS), [1.0, 1.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(SQUARED_HINGE.derivative(MARGINS), [4.0, 2.0, 1.0, 0.0, 0.0])


@pytest.mark.parametrize(
    "loss", [loss for loss in LOSSES.values() if loss.task == CLASSIFICATION], ids=lambda loss: loss.name
)
def test_derivative_is_the_slope_of_the_value(loss):
    m, h = np.array([-0.7, 0.3, 0.9]), 1e-6
    np.testing.assert_allclose(loss.derivative(m), -(loss.value(m + h) - loss.value(m - h)) / (2 * h), rtol=1e-6)


def test_dual_boxes_are_liblinears():
    # Hsieh et al. 2008, Table 1: L1-loss U = C, D = 0; L2-loss U = inf, D = 1/(2C)
    assert HINGE.dual_box(0.5) == (0.5, 0.0)
    assert SQUARED_HINGE.dual_box(0.5) == (math.inf, 1.0)
    upper, diag = SQUARED_HINGE.dual_tables(0.25, 2.0)
    np.testing.assert_array_equal(upper, [math.inf, math.inf])
    np.testing.assert_array_equal(diag, [2.0, 0.25])
    assert (HINGE.liblinear_code, SQUARED_HINGE.liblinear_code) == (3, 1)


def test_pegasos_ball():
    assert HINGE.pegasos_radius(0.01) == pytest.approx(10.0)  # 1 / sqrt(lambda)
    assert SQUARED_HINGE.pegasos_radius(0.01) == pytest.approx(math.sqrt(200.0))  # sqrt(2 / lambda)


def test_liblinear_codes():
    # LIBLINEAR's -s: 0 primal and 7 dual logistic regression, 1 and 2 the L2-loss SVM, 3 the L1-loss SVM, 4
    # Crammer and Singer's multiclass SVM, 11 and 12 the L2-loss SVR, 13 the L1-loss SVR, 21 the one-class SVM (its
    # README)
    assert LIBLINEAR_CODES == {
        0: "logistic",
        7: "logistic",
        1: "squared-hinge",
        2: "squared-hinge",
        3: "hinge",
        11: "squared-epsilon-insensitive",
        12: "squared-epsilon-insensitive",
        13: "epsilon-insensitive",
        4: "crammer-singer",
        21: "one-class",
    }


def test_dual_terms_by_hand():
    upper, diag = np.array([2.0, 3.0]), np.array([0.0, 0.0])
    terms = LOGISTIC_LOSS.dual_terms(np.array([-1.0, 1.0, 1.0]), np.array([1.0, 0.0, 1.5]), upper, diag)
    # -(a log a + (C - a) log(C - a) - C log C): C = 2, a = 1 gives 2 log 2; a = 0 gives 0; C = 3, a = 1.5: 3 log 2
    np.testing.assert_allclose(terms[:, 0], [2 * math.log(2), 0.0, 3 * math.log(2)])
    np.testing.assert_array_equal(terms[:, 1], 0.0)
    svr = SQUARED_EPSILON_INSENSITIVE.with_epsilon(0.5)
    upper, diag = svr.dual_tables(2.0, 2.0)
    terms = svr.dual_terms(np.array([3.0, -1.0]), np.array([-1.0, 2.0]), upper, diag)
    # y beta - eps |beta| and beta^2 / (2C)
    np.testing.assert_allclose(terms, [[-3.5, 0.25], [-3.0, 1.0]])
