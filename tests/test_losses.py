"""Each loss of blocksvm.losses against values computed by hand (the oracle in tests/oracle.py builds on them)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from blocksvm.losses import (
    CLASSIFICATION,
    EPSILON_INSENSITIVE,
    HINGE,
    LOGISTIC_LOSS,
    LOSSES,
    PERCEPTRON,
    SQUARED_EPSILON_INSENSITIVE,
    SQUARED_HINGE,
)
from blocksvm.penalties import LIBLINEAR_SOLVERS, PENALTIES, liblinear_code, liblinear_type, penalty_of, problem_of_type
from blocksvm.solvers import SOLVERS

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


def test_pegasos_ball():
    assert HINGE.pegasos_radius(0.01) == pytest.approx(10.0)  # 1 / sqrt(lambda)
    assert SQUARED_HINGE.pegasos_radius(0.01) == pytest.approx(math.sqrt(200.0))  # sqrt(2 / lambda)


def test_liblinear_codes():
    # LIBLINEAR's -s: 0 primal and 7 dual logistic regression, 1 and 2 the L2-loss SVM, 3 the L1-loss SVM, 4 Crammer
    # and Singer's multiclass SVM, 5 the L1-regularized L2-loss SVM, 6 L1-regularized logistic regression, 11 and 12
    # the L2-loss SVR, 13 the L1-loss SVR, 21 the one-class SVM (its README), with the solver types its save_model
    # writes (linear.cpp's solver_type_table)
    assert {s.code: (s.solver_type, s.penalty, s.loss, s.solver) for s in LIBLINEAR_SOLVERS} == {
        0: ("L2R_LR", "l2", "logistic", "newton"),
        1: ("L2R_L2LOSS_SVC_DUAL", "l2", "squared-hinge", "dual-cd"),
        2: ("L2R_L2LOSS_SVC", "l2", "squared-hinge", "newton"),
        3: ("L2R_L1LOSS_SVC_DUAL", "l2", "hinge", "dual-cd"),
        4: ("MCSVM_CS", "l2", "crammer-singer", "crammer-singer"),
        5: ("L1R_L2LOSS_SVC", "l1", "squared-hinge", "cdn"),
        6: ("L1R_LR", "l1", "logistic", "glmnet"),
        7: ("L2R_LR_DUAL", "l2", "logistic", "dual-cd"),
        11: ("L2R_L2LOSS_SVR", "l2", "squared-epsilon-insensitive", "newton"),
        12: ("L2R_L2LOSS_SVR_DUAL", "l2", "squared-epsilon-insensitive", "dual-cd"),
        13: ("L2R_L1LOSS_SVR_DUAL", "l2", "epsilon-insensitive", "dual-cd"),
        21: ("ONECLASS_SVM", "l2", "one-class", "one-class"),
    }
    assert all(s.loss in LOSSES and s.penalty in PENALTIES and s.solver in SOLVERS for s in LIBLINEAR_SOLVERS)
    assert (liblinear_code("hinge"), liblinear_code("squared-hinge"), liblinear_code("logistic")) == (3, 1, 7)
    assert (liblinear_code("squared-hinge", "l1"), liblinear_code("logistic", "l1")) == (5, 6)
    assert liblinear_type("squared-hinge", "l2", "newton") == "L2R_L2LOSS_SVC"  # a Newton model: -s 2's type
    assert liblinear_type("squared-hinge", "l2", "dual-cd") == "L2R_L2LOSS_SVC_DUAL"
    assert liblinear_type("logistic", "l1", "owl-qn") == "L1R_LR"
    assert liblinear_type("logistic", "elasticnet", "owl-qn") == "L1R_LR"  # LIBLINEAR has no elastic net
    assert liblinear_type("perceptron", "l2", "perceptron") == "L2R_L1LOSS_SVC_DUAL"
    assert problem_of_type("L1R_L2LOSS_SVC") == ("squared-hinge", "l1")
    assert problem_of_type("MCSVM_CS") == ("crammer-singer", "l2")
    assert problem_of_type("ONECLASS_SVM") == ("one-class", "l2") and problem_of_type("L2R_NONE") is None
    assert liblinear_type("crammer-singer", "l2", "crammer-singer") == "MCSVM_CS"
    assert liblinear_type("one-class", "l2", "one-class") == "ONECLASS_SVM"


def test_penalties_by_hand():
    W = np.array([[1.0, -2.0, 0.0], [0.5, 0.0, 3.0]])
    np.testing.assert_array_equal(PENALTIES["l2"].value(W), 0.5 * np.array([5.0, 9.25]))
    np.testing.assert_array_equal(PENALTIES["l1"].value(W), [3.0, 3.5])
    np.testing.assert_allclose(
        penalty_of("elasticnet", 0.25).value(W), [0.25 * 3 + 0.375 * 5, 0.25 * 3.5 + 0.375 * 9.25]
    )
    assert [p.sparse for p in PENALTIES.values()] == [False, True, True]


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
