"""The Newton solver's kernel: one piece of rows' share of a pass's sums.

Each problem ``k`` of a pass asks one of two things of every row ``i`` it trains on, with ``t = w_k.x_i``,
``u = d_k.x_i`` (``d_k``: a direction), ``C_i`` the row's cost (its class's C times its instance weight) and
``l(t)`` its loss as a function of its decision value (margin ``y t`` or residual ``t - y``)::

    HV     sum_i C_i l''(t) u x_i                          the data's part of the Hessian times d (CG's step)
    VALUE  sum_i C_i l(t + a_j u)   for a_j = a 2^-j, j < N_CANDIDATES      loss values along d (line search)
           sum_i C_i l'(t + a u) x_i,  sum_i C_i l''(t + a u) x_i^2        gradient and Hessian diagonal at a
           sum_i C_i l'(0) x_i                                              the gradient at w = 0 (on request)

The driver (:mod:`.newton`) adds the regularizer's terms. ``l''`` is the generalized second derivative of the
squared hinge (2 where the slack is positive, LIBLINEAR's ``I`` set). Rows are visited in order; the sums
start from zero (the piece's own: blocksvm.sums adds pieces in a fixed tree). ``decision_loss``, ``decision_slope``
and ``decision_curvature`` (a row's loss and its derivatives in the decision value) serve OWL-QN's kernel too.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksvm.losses import EPSILON, LOGISTIC
from blocksvm.solvers._common import add_scaled_row, dot, member_weight, predicted_right, slack_loss, slack_slope  # noqa: F401 (dot: the driver's)

NONE, HV, VALUE = 0, 1, 2  # what a problem asks of a pass
N_CANDIDATES = 4  # line-search steps valued per pass: a, a/2, a/4, a/8
# the scalar sums of each problem: the candidates' losses, then these (taken at the first candidate): the weight
# of the rows predicted right, their squared errors (weighted), the rows of the positive class and the rows
# (counts: LIBLINEAR's stopping rule), and the rows' weight
CORRECT, SQUARED, POSITIVE, ROWS, WEIGHT = range(N_CANDIDATES, N_CANDIDATES + 5)
N_SCALARS = N_CANDIDATES + 5
MAIN, DIAGONAL, AT_ZERO = range(3)  # a problem's vectors: Hv or the gradient, the Hessian diagonal, g(0)


@njit(cache=True, nogil=True, inline="always")
def decision_loss(loss, y, t):
    """``l(t)`` of a row with target ``y`` at decision value ``t``."""
    kind = loss[3]
    if kind == LOGISTIC:
        m = y * t
        return math.log1p(math.exp(-m)) if m >= 0 else math.log1p(math.exp(m)) - m
    slack = abs(t - y) - loss[0] if kind == EPSILON else loss[0] - y * t
    return slack_loss(loss, slack) if slack > 0 else 0.0


@njit(cache=True, nogil=True, inline="always")
def decision_slope(loss, y, t):
    """``l'(t)``: the derivative of the row's loss in its decision value."""
    kind = loss[3]
    if kind == LOGISTIC:
        m = y * t  # -y / (1 + exp(m)) without overflow
        return -y / (1.0 + math.exp(m)) if m <= 0 else -y * math.exp(-m) / (1.0 + math.exp(-m))
    if kind == EPSILON:
        r = t - y
        slack = abs(r) - loss[0]
        return (slack_slope(loss, slack) if r > 0 else -slack_slope(loss, slack)) if slack > 0 else 0.0
    slack = loss[0] - y * t
    return -y * slack_slope(loss, slack) if slack > 0 else 0.0


@njit(cache=True, nogil=True, inline="always")
def decision_curvature(loss, y, t):
    """``l''(t)``: 2 quadratic where the slack is positive (margin and epsilon kinds), ``s (1 - s)`` with
    ``s = 1 / (1 + exp(-y t))`` (logistic)."""
    kind = loss[3]
    if kind == LOGISTIC:
        e = math.exp(-abs(t))
        return e / ((1.0 + e) * (1.0 + e))
    slack = abs(t - y) - loss[0] if kind == EPSILON else loss[0] - y * t
    return 2.0 * loss[2] if slack > 0 else 0.0


@njit(cache=True, nogil=True)
def piece_sums(rows, targets, costs, member, W, D, request, setup, scalars, vectors):
    """Add one piece's sums (see the module docstring) into ``scalars`` and ``vectors`` (zeros on entry).

    Parameters
    ----------
    rows : (indptr, indices, data, weights)
        The piece's CSR arrays and its rows' instance weights (empty: every row weighs 1), which multiply their
        costs; a row of weight 0 is not trained on (nor counted).
    targets : ndarray (n_problems, n_rows)
        ±1 (classification) or the labels (regression).
    costs : ndarray (n_problems, 2)
        C of negative and positive rows (regression: ``costs[k, 1]`` for every row).
    member : ndarray of bool (n_problems, n_rows)
        Whether problem ``k`` trains on the row (cross-validation leaves a fold out).
    W, D : ndarray (n_problems, n_weights)
        The weights and each problem's direction (the bias feature's last).
    request : (kinds, alphas, slots)
        ``kinds`` (n_problems,) NONE, HV or VALUE; ``alphas`` the first candidate step of each; ``slots``
        (n_problems, 3) the row of ``vectors`` of its MAIN, DIAGONAL and AT_ZERO sums (-1: not asked).
    setup : (bias, loss)
        The bias feature's value (<= 0: none) and the loss table of :mod:`blocksvm.losses`.
    scalars : ndarray (n_problems, N_SCALARS)
    vectors : ndarray (n_slots, n_weights)
    """
    indptr, indices, data, weights = rows
    kinds, alphas, slots = request
    bias, loss = setup
    n_w = W.shape[1] - 1
    regression = loss[3] == EPSILON
    for k in range(W.shape[0]):
        kind = kinds[k]
        if kind == NONE:
            continue
        w, d, a = W[k], D[k], alphas[k]
        main, diagonal, at_zero = slots[k, MAIN], slots[k, DIAGONAL], slots[k, AT_ZERO]
        for i in range(indptr.shape[0] - 1):
            weight = member_weight(member, k, i, weights)
            if weight == 0.0:
                continue  # not problem k's row, or a row of weight 0
            y = targets[k, i]
            label = 1 if (regression or y > 0) else 0
            C = (costs[k, 1] if regression else costs[k, label]) * weight
            start, stop = np.uint64(indptr[i]), np.uint64(indptr[i + 1])
            t = w[n_w] * bias if bias > 0 else 0.0
            for p in range(start, stop):
                t += w[np.uint32(indices[p])] * data[p]
            if kind == HV:
                h = C * decision_curvature(loss, y, t)
                if h == 0.0:
                    continue  # an inactive row of the squared hinge: no second dot
            u = d[n_w] * bias if bias > 0 else 0.0
            if a != 0.0 or kind == HV:
                for p in range(start, stop):
                    u += d[np.uint32(indices[p])] * data[p]
            if kind == HV:
                add_scaled_row(vectors[main], indices, data, start, stop, h * u, bias)
                continue
            step = a
            for j in range(N_CANDIDATES):
                scalars[k, j] += C * decision_loss(loss, y, t + step * u)
                step *= 0.5
            t1 = t + a * u
            g = C * decision_slope(loss, y, t1)
            h = C * decision_curvature(loss, y, t1)
            out, diag = vectors[main], vectors[diagonal]
            for p in range(start, stop):
                j = np.uint32(indices[p])
                x = np.float64(data[p])
                out[j] += g * x
                diag[j] += h * x * x
            if bias > 0:
                out[n_w] += g * bias
                diag[n_w] += h * bias * bias
            if at_zero >= 0:
                add_scaled_row(vectors[at_zero], indices, data, start, stop, C * decision_slope(loss, y, 0.0), bias)
            scalars[k, ROWS] += 1.0
            scalars[k, WEIGHT] += weight
            scalars[k, POSITIVE] += label
            if regression:
                scalars[k, SQUARED] += weight * (t1 - y) * (t1 - y)
            elif predicted_right(y * t1, label):
                scalars[k, CORRECT] += weight
