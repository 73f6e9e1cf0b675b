"""Each loss of blocksvm.losses against values computed by hand (the oracle in tests/oracle.py builds on them)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from blocksvm.losses import HINGE, LOSSES, PERCEPTRON, SQUARED_HINGE

MARGINS = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])


def test_values_by_hand():
    np.testing.assert_array_equal(HINGE.value(MARGINS), [2.0, 1.0, 0.5, 0.0, 0.0])
    np.testing.assert_array_equal(SQUARED_HINGE.value(MARGINS), [4.0, 1.0, 0.25, 0.0, 0.0])
    np.testing.assert_array_equal(PERCEPTRON.value(MARGINS), [1.0, 0.0, 0.0, 0.0, 0.0])


def test_derivatives_by_hand():
    np.testing.assert_array_equal(HINGE.derivative(MARGINS), [1.0, 1.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(SQUARED_HINGE.derivative(MARGINS), [4.0, 2.0, 1.0, 0.0, 0.0])


@pytest.mark.parametrize("loss", list(LOSSES.values()), ids=lambda loss: loss.name)
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
