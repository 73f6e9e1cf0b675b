"""newGLMNET's kernels (LIBLINEAR's ``solve_l1r_lr``): the gradient over a block of columns, a cycle of coordinate
descent on the quadratic model over a block's columns, and the per-row arithmetic of the driver.

The problem (-s 6 with the logistic loss; the squared hinge works the same way with its generalized Hessian)::

    min_w  F(w) = ||w||_1 + L(w),   L(w) = sum_i C_i l(y_i, t_i),  t_i = w.x_i

An iteration at ``w`` (Yuan, Ho & Lin 2012)::

    tau_i = C_i l'(t_i), D_i = C_i l''(t_i)                              per row (the driver: no data read)
    Grad_j = sum_i x_ij tau_i, Hdiag_j = nu + sum_i x_ij^2 D_i          one read of every column (gradient)
    d ~ argmin_d  Grad.d + 1/2 d' H d + ||w + d||_1,  H = X' D X + nu I
        by cycles of coordinate descent over the active columns (quadratic), each keeping xTd_i = (X d)_i:
        G = Grad_j + nu (wpd_j - w_j) + sum_i x_ij D_i xTd_i,  z = the step of |wpd_j + z| + G z + Hdiag_j z^2 / 2
    the line search on the rows: w + a d for a = 1, 1/2, ...  with  F(w + a d) - F(w) <= sigma a delta
        (delta = Grad.d + ||w + d||_1 - ||w||_1; the losses from t + a xTd, no data read)

``tau`` and ``D`` are zero for rows not trained on (a held-out fold's, weight 0); ``yc`` is ``y_i C_i`` (0: not
trained on), as in CDN's kernel. ``loss`` is a loss table of :mod:`blocksvm.losses`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksvm.losses import LOGISTIC
from blocksvm.solvers._cdn_kernels import GMAX, GNORM1, active_columns, l1_coordinate
from blocksvm.solvers._newton_kernels import decision_curvature, decision_loss, decision_slope

NU = 1e-12  # LIBLINEAR's nu: Hdiag's floor
MAX_STEP = 10.0  # a coordinate's step is clipped to [-10, 10], as LIBLINEAR's
# a cycle's totals: the largest violation, their 1-norm (l1_coordinate's, at CDN's places), column entries read
QP_GMAX, QP_GNORM1, READ = GMAX, GNORM1, 2
N_TOTALS = 3


@njit(cache=True, nogil=True)
def gradient(features, indptr, rows, data, tau, D, first, stop, wanted, grad, hdiag, norms):
    """``Grad_j`` and ``Hdiag_j`` (see the module docstring) of the block's columns ``first .. stop - 1`` whose
    feature is ``wanted`` into ``grad`` and ``hdiag`` (indexed by feature), and each one's ``sum_i x_ij^2`` into
    ``norms`` (its squared norm over every row: screening's); returns the column entries read."""
    read = 0
    for c in range(first, stop):
        j = features[c]
        if not wanted[j]:
            continue
        h, g, sq = NU, 0.0, 0.0
        for p in range(indptr[c], indptr[c + 1]):
            r = rows[p]
            x = np.float64(data[p])
            h += x * x * D[r]
            g += x * tau[r]
            sq += x * x
        grad[j], hdiag[j], norms[j] = g, h, sq
        read += indptr[c + 1] - indptr[c]
    return read


@njit(cache=True, nogil=True)
def quadratic_cycle(features, indptr, rows, data, D, grad, hdiag, w, wpd, xTd, active, gmax_old, n_rows, seed, totals):
    """One cycle of coordinate descent on the quadratic model over the block's columns whose feature is ``active``
    (in a random order), moving ``wpd`` (= w + d) and ``xTd`` in place; a zero ``wpd_j`` whose |G| < 1 - gmax_old / l
    leaves ``active`` (LIBLINEAR's inner shrinking). Adds to ``totals`` (QP_GMAX: max; QP_GNORM1, READ: sums)."""
    order, n = active_columns(features, active, seed)
    threshold = gmax_old / n_rows
    for s in range(n):
        c = order[s]
        j, start, stop = features[c], indptr[c], indptr[c + 1]
        h = hdiag[j]
        g = grad[j] + (wpd[j] - w[j]) * NU
        for p in range(start, stop):
            r = rows[p]
            g += np.float64(data[p]) * D[r] * xTd[r]
        totals[READ] += stop - start
        v = wpd[j]
        z = l1_coordinate(g, h, v, threshold, j, active, totals)
        if z == 0.0:
            continue
        z = min(max(z, -MAX_STEP), MAX_STEP)
        wpd[j] = v + z
        for p in range(start, stop):
            xTd[rows[p]] += z * np.float64(data[p])
        totals[READ] += stop - start


@njit(cache=True, nogil=True, inline="always")
def target_and_cost(yci):
    """A row's ``(y_i, C_i)`` from its ``yc`` entry ``y_i C_i`` (``C_i = 0``: the row is not trained on)."""
    return (1.0, yci) if yci > 0 else (-1.0, -yci)


@njit(cache=True, nogil=True)
def row_terms(t, yc, loss, tau, D):
    """``tau`` and ``D`` of every row at decision values ``t`` (see the module docstring); returns the loss
    ``sum_i C_i l(t_i)``."""
    total = 0.0
    for r in range(t.shape[0]):
        y, cost = target_and_cost(yc[r])
        if cost == 0.0:
            tau[r], D[r] = 0.0, 0.0
            continue
        total += cost * decision_loss(loss, y, t[r])
        tau[r] = cost * decision_slope(loss, y, t[r])
        D[r] = cost * decision_curvature(loss, y, t[r])
    return total


@njit(cache=True, nogil=True)
def loss_along(t, xTd, alpha, yc, loss):
    """``sum_i C_i l(t_i + alpha xTd_i)``: the loss at ``w + alpha d`` (no data read)."""
    total = 0.0
    for r in range(t.shape[0]):
        y, cost = target_and_cost(yc[r])
        if cost == 0.0:
            continue
        total += cost * decision_loss(loss, y, t[r] + alpha * xTd[r])
    return total


@njit(cache=True, nogil=True)
def move_rows(t, xTd, alpha):
    """``t += alpha xTd``: the decision values at the step taken."""
    for r in range(t.shape[0]):
        t[r] += alpha * xTd[r]


@njit(cache=True, nogil=True)
def slope_at_zero(loss, y):
    """``l'`` of a row of target ``y`` at decision value 0."""
    return decision_slope(loss, y, 0.0)


@njit(cache=True, nogil=True)
def curvature_at_zero(loss, y):
    """``l''`` of a row of target ``y`` at decision value 0."""
    return decision_curvature(loss, y, 0.0)


@njit(cache=True, nogil=True)
def dual_value(t, yc, loss, scale):
    """The dual objective ``-sum_i f_i*(tau_i / scale)`` of the dual point ``theta = -tau / scale`` (``f_i(t) = C_i
    l(y_i t)``, ``tau_i = f_i'(t_i)``; ``scale >= 1`` makes it feasible: ``|X' theta| <= 1``): Fenchel's conjugates,
    for the logistic loss ``C [p log p + (1 - p) log(1 - p)]`` at ``p = sigma(-y t) / scale``, for the squared hinge
    ``-2 C b / scale + C (b / scale)^2`` at ``b = max(0, 1 - y t)``."""
    total = 0.0
    for r in range(t.shape[0]):
        y, cost = target_and_cost(yc[r])
        if cost == 0.0:
            continue
        m = y * t[r]
        if loss[3] == LOGISTIC:
            p = (1.0 / (1.0 + math.exp(m)) if m >= 0 else math.exp(-m) / (1.0 + math.exp(-m))) / scale
            entropy = 0.0
            if p > 0.0:
                entropy += p * math.log(p)
            if p < 1.0:
                entropy += (1.0 - p) * math.log1p(-p)
            total -= cost * entropy
        else:
            b = max(0.0, 1.0 - m) / scale
            total -= cost * (b * b - 2.0 * b)
    return total
