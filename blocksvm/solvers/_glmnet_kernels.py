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
from blocksvm.solvers._cdn_kernels import GMAX, GNORM1, l1_coordinate, visit_active_columns
from blocksvm.solvers._newton_kernels import decision_curvature, decision_loss, decision_slope

NU = 1e-12  # LIBLINEAR's nu: Hdiag's floor
MAX_STEP = 10.0  # a coordinate's step is clipped to [-10, 10], as LIBLINEAR's
# a cycle's totals: the largest violation, their 1-norm (l1_coordinate's, at CDN's places), column entries read
QP_GMAX, QP_GNORM1, READ = GMAX, GNORM1, 2
N_TOTALS = 3
TAU, XD, D = 0, 0, 1  # a row's two numbers: (tau_i, D_i) in the gradient's read, ((X d)_i, D_i) in the quadratic's


@njit(cache=True, nogil=True)
def gradient(columns, td, span, wanted, out):
    """``Grad_j`` and ``Hdiag_j`` (see the module docstring) of the block's columns ``span = (first, stop)`` whose
    feature is ``wanted``, and each one's ``sum_i x_ij^2`` (its squared norm over every row: screening's); returns
    the column entries read.

    columns : (features, indptr, rows, data), the block's columns.
    td : ndarray (n_rows, 2), each row's ``tau_i`` and ``D_i`` side by side (:data:`TAU`, :data:`D`).
    wanted : ndarray of bool (n_weights,).
    out : (grad, hdiag, norms), arrays (n_weights,) indexed by feature, written at the columns read.
    """
    features, indptr, rows, data = columns
    first, stop = span
    grad, hdiag, norms = out
    read = 0
    for c in range(first, stop):
        j = features[c]
        if not wanted[j]:
            continue
        h, g, sq = NU, 0.0, 0.0
        for p in range(indptr[c], indptr[c + 1]):
            r = rows[p]
            x = np.float64(data[p])
            h += x * x * td[r, D]
            g += x * td[r, TAU]
            sq += x * x
        grad[j], hdiag[j], norms[j] = g, h, sq
        read += indptr[c + 1] - indptr[c]
    return read


@njit(cache=True, nogil=True)
def quadratic_cycle(columns, bias, dx, model, active, threshold, seed, totals):
    """One cycle of coordinate descent on the quadratic model over the block's columns whose feature is ``active``
    (and the bias column, where this block carries it), in a random order, moving ``w + d`` and ``X d`` in place; a
    zero ``(w + d)_j`` whose |G| < 1 - threshold leaves ``active`` (LIBLINEAR's inner shrinking; ``threshold``:
    ``Gmax_old / l``). Adds to ``totals`` (QP_GMAX: max; QP_GNORM1, READ: sums).

    columns : (features, indptr, rows, data), the block's columns; bias : the bias column, or no column.
    dx : ndarray (n_rows, 2), each row's ``(X d)_i`` and ``D_i`` side by side (:data:`XD`, :data:`D`).
    model : (grad, hdiag, w, wpd), arrays (n_weights,): the gradient and Hessian diagonal at ``w``, and ``w + d``.
    seed : ndarray of uint64 (1,), the column order's random state (advanced).
    """
    visit_active_columns(_coordinate, columns, bias, active, seed, (dx, model), (dx, model, active, threshold, totals))


@njit(cache=True, nogil=True, inline="always")
def _coordinate(j, entries, start, stop, state):
    """The quadratic's step on weight ``j``, its column the entries ``start .. stop - 1`` of ``(rows, data)``;
    ``state``: the cycle's ``(dx, model, active, threshold, totals)``."""
    rows, data = entries
    dx, model, active, threshold, totals = state
    grad, hdiag, w, wpd = model
    h = hdiag[j]
    g = grad[j] + (wpd[j] - w[j]) * NU
    for p in range(start, stop):
        r = rows[p]
        g += np.float64(data[p]) * dx[r, D] * dx[r, XD]
    totals[READ] += stop - start
    v = wpd[j]
    z = l1_coordinate(g, h, v, threshold, j, active, totals)
    if z == 0.0:
        return
    z = min(max(z, -MAX_STEP), MAX_STEP)
    wpd[j] = v + z
    for p in range(start, stop):
        dx[rows[p], XD] += z * np.float64(data[p])
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


@njit(cache=True, nogil=True)
def violations(w, grad, threshold, screened, active, kept):
    """Each weight's violation, the size of the minimum-norm subgradient of ``|w_j| + grad_j w_j``, into ``kept``
    (0.0 where the weight sits out this iteration's quadratic), and ``active``: False for a zero weight LIBLINEAR
    shrinks (``grad_j + 1 > threshold`` and ``grad_j - 1 < -threshold``) and for one ``screened``. One pass over the
    weights, in place."""
    for j in range(w.shape[0]):
        gp, gn = grad[j] + 1.0, grad[j] - 1.0
        if w[j] == 0.0:
            violation = -gp if gp < 0.0 else (gn if gn > 0.0 else 0.0)
            shrunk = screened[j] or (gp > threshold and gn < -threshold)
        else:
            violation = abs(gp) if w[j] > 0.0 else abs(gn)
            shrunk = screened[j]
        active[j] = not shrunk
        kept[j] = 0.0 if shrunk else violation


@njit(cache=True, nogil=True)
def largest_unscreened(grad, screened):
    """``max |grad_j|`` over the weights not screened (0.0: none)."""
    top = 0.0
    for j in range(grad.shape[0]):
        if not screened[j]:
            top = max(top, abs(grad[j]))
    return top


@njit(cache=True, nogil=True)
def screen(w, grad, norms, scale, radius, screened):
    """Mark ``screened`` the zero weights whose column (its squared norm known: ``norms_j >= 0``) keeps
    ``|grad_j| / scale + radius ||x_j|| < 1`` (gap-safe screening; see the driver)."""
    for j in range(w.shape[0]):
        if w[j] == 0.0 and norms[j] >= 0.0 and abs(grad[j]) / scale + radius * math.sqrt(norms[j]) < 1.0:
            screened[j] = True
