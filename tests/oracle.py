"""The one objective oracle of the tests: LIBLINEAR's primal, written in numpy, and LIBLINEAR itself.

``P(w) = 1/2 ||w||^2 + sum_i C_i loss(y_i (w.x_i + b))``, with the bias weight ``b / bias``
regularized as LIBLINEAR's ``-B`` does. Independent of blocksvm: it reads nothing of the package.
"""

from __future__ import annotations

import numpy as np

LIBLINEAR_SOLVER = {"hinge": 3, "squared-hinge": 1}


def primal(coef: np.ndarray, intercept: float, X, y, C, loss: str, bias: float) -> float:
    """LIBLINEAR's primal objective of one binary problem (``y`` in {-1, +1}).

    ``C`` is a number or an array of per-row costs.
    """
    margins = y * (X @ coef + intercept)
    slack = np.maximum(0.0, 1.0 - margins)
    w_bias = intercept / bias if bias > 0 else 0.0
    losses = slack if loss == "hinge" else slack**2
    return 0.5 * (coef @ coef + w_bias**2) + float(np.sum(C * losses))


def liblinear_fit(X, y, loss: str, C: float, bias: float, eps: float = 1e-5) -> tuple[np.ndarray, float]:
    """LIBLINEAR's weights for class ``+1``, as ``(coef, intercept)``."""
    from liblinear import liblinearutil as liblinear

    B = bias if bias > 0 else -1  # LIBLINEAR's -B sets the bias; the problem's own is overridden
    model = liblinear.train(liblinear.problem(y, X), f"-s {LIBLINEAR_SOLVER[loss]} -c {C} -B {B} -e {eps} -q")
    assert model.bias == B
    w, b = model.get_decfun()  # b is the bias weight times B
    sign = 1.0 if model.get_labels()[0] == 1 else -1.0
    return sign * np.array(w), sign * b
