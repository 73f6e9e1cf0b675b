"""The one objective oracle of the tests: LIBLINEAR's primal, written in numpy, and LIBLINEAR itself.

``P(w) = 1/2 ||w||^2 + sum_i C_i loss(y_i (w.x_i + b))``, with the bias weight ``b / bias``
regularized as LIBLINEAR's ``-B`` does. The loss values come from :mod:`blocksvm.losses`, the one
definition of each loss (pinned to hand-computed values in tests/test_losses.py); the optimum they
are compared with is LIBLINEAR's, computed by LIBLINEAR.
"""

from __future__ import annotations

import numpy as np

from blocksvm.losses import LOSSES
from blocksvm.penalties import liblinear_code


def primal(coef: np.ndarray, intercept: float, X, y, C, loss: str, bias: float = 1.0) -> float:
    """LIBLINEAR's primal objective of one binary problem (``y`` in {-1, +1}).

    ``C`` is a number or an array of per-row costs (:func:`row_costs`); ``loss`` a name of
    :data:`blocksvm.losses.LOSSES` (scikit-learn's ``squared_hinge`` spelling too).
    """
    losses = LOSSES[loss.replace("_", "-")].value(y * (X @ coef + intercept))
    w_bias = intercept / bias if bias > 0 else 0.0
    return 0.5 * (coef @ coef + w_bias**2) + float(np.sum(C * losses))


def row_costs(y, costs) -> np.ndarray:
    """Per-row C of ±1 targets ``y`` from ``costs = (C_negative, C_positive)``."""
    return np.where(np.asarray(y) > 0, costs[1], costs[0])


def seed_liblinear() -> None:
    """Reset the C library's ``rand()``, which LIBLINEAR's dual solvers draw their coordinate order from without
    seeding it: a model that stops at LIBLINEAR's iteration cap (-s 3) then depends on every earlier LIBLINEAR call
    in the process, so on the test order. Called before each oracle training, it is the model of a fresh process."""
    import ctypes

    ctypes.CDLL(None).srand(1)


def liblinear_fit(X, y, loss: str, C: float, bias: float, eps: float = 1e-5) -> tuple[np.ndarray, float]:
    """LIBLINEAR's weights for class ``+1``, as ``(coef, intercept)``."""
    from liblinear import liblinearutil as liblinear

    seed_liblinear()

    B = bias if bias > 0 else -1  # LIBLINEAR's -B sets the bias; the problem's own is overridden
    code = liblinear_code(loss)
    model = liblinear.train(liblinear.problem(y, X), f"-s {code} -c {C} -B {B} -e {eps} -q")
    assert model.bias == B
    w, b = model.get_decfun()  # b is the bias weight times B
    sign = 1.0 if model.get_labels()[0] == 1 else -1.0
    return sign * np.array(w), sign * b


def last_iterate(function):
    """``function`` (``train`` or ``stream``) with ``average=False`` for the learners that read ``average``, unless
    the call sets it: the oracles these tests transcribe (the papers' rules, scikit-learn's learners) return the
    last iterate, and the default became the mean of the iterates (issue 24, docs/TUNING.md)."""
    from functools import wraps

    from blocksvm.solvers.registry import SOLVERS

    readers = {name for name, solver in SOLVERS.items() if "average" in {p.name for p in solver.params}}
    default_solver = {"train": "dual-cd", "stream": "perceptron"}[function.__name__]

    @wraps(function)
    def call(*args, **kwargs):
        if kwargs.get("solver", default_solver) in readers:
            kwargs.setdefault("average", False)
        return function(*args, **kwargs)

    return call
