"""CDN's kernel: one sweep of coordinate descent over a block of columns (LIBLINEAR's ``solve_l1r_l2_svc``).

The problem (-s 5), with ``b_i = 1 - y_i w.x_i`` kept for every row::

    min_w  ||w||_1 + sum_i C_i max(0, b_i)^2

A sweep visits the block's active columns in a random order; for column ``j`` (``v_i = y_i x_ij``)::

    G = -2 sum_{b_i > 0} C_i v_i b_i,   H = max(2 sum_{b_i > 0} C_i v_i^2, 1e-12)      (one read of the column)
    violation: the minimum-norm subgradient of |w_j| + G w_j; a zero weight whose |G| < 1 - Gmax_old / l leaves
               the active set (LIBLINEAR's shrinking)
    d = the Newton step of |w_j + d| + G d + H/2 d^2  (Gp = G + 1, Gn = G - 1)
    line search d, d/2, ...: accept when |w_j + d| - |w_j| + sum_i C_i (max(0, b_i - d v_i)^2 - max(0, b_i)^2)
               <= sigma (|w_j + d| - |w_j| + G d); first tried by the bound xj_sq d^2 + G d + ... without reading
               the column (xj_sq = sum_i C_i v_i^2), else each trial reads it, b moving with d
    w_j += d

Rows are given by ``yc``, one number each: ``y_i C_i`` (``C_i``: the row's class cost times its instance weight; 0:
the row is not trained on, a held-out fold's or of weight 0), kept beside each row's slack (``yb``: an entry's two
random reads in one cache line). The bias feature is a column like the others (every row, value B), handed to the
sweep of the block that takes it this round, which visits it at a random place among its own columns. Columns are
those of the store's column layout, a block's as the tuple ``(features, indptr, rows, data)`` (``features``: their
weight indices; the others CSC).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from blocksvm.solvers._common import prefetch, shuffle_prefix, soft_newton_step

SIGMA = 0.01  # LIBLINEAR's sufficient decrease
MAX_HALVINGS = 20  # LIBLINEAR's max_num_linesearch
GMAX, GNORM1, READ = range(3)  # the sweep's totals: the largest violation, their 1-norm, column entries read
N_TOTALS = 3
YC, B = 0, 1  # a row's two numbers in a sweep: y_i C_i and its slack
AHEAD = 32
"""A column's first entries whose rows' numbers are asked of memory before its step (:func:`visit_active_columns`):
its rows are scattered over the per-row arrays, one cache miss an entry, which the processor overlaps only a few at a
time."""


@njit(cache=True, nogil=True)
def active_columns(features, active, seed, extra):
    """The positions of the block's columns whose feature is active, and of the ``extra`` columns' (the bias
    column's, when this block carries it: positions from ``len(features)`` on), in a random order: ``(order, n)``,
    the first ``n`` of ``order`` (``seed``: the permutation's, advanced). CDN's sweep and newGLMNET's cycle visit them
    so."""
    n_c = features.shape[0]
    order = np.empty(n_c + extra.shape[0], np.int64)
    n = 0
    for c in range(n_c):
        if active[features[c]]:
            order[n] = c
            n += 1
    for e in range(extra.shape[0]):
        if active[extra[e]]:
            order[n] = n_c + e
            n += 1
    shuffle_prefix(order, n, seed)
    return order, n


@njit(cache=True, nogil=True)
def sweep(columns, bias, yb, w, active, threshold, seed, totals):
    """One sweep over the block's active columns (and the bias column, where this block carries it: at a random
    place among them, as LIBLINEAR visits the bias feature), updating ``w``, the slacks and ``active`` in place and
    adding to ``totals`` (GMAX: max, GNORM1 and READ: sums).

    Parameters
    ----------
    columns : (features, indptr, rows, data)
        The block's stored columns as CSC (``features``: their weight indices).
    bias : (features, indptr, rows, data)
        The bias column (every row, value B), or no column.
    yb : ndarray (n_rows, 2)
        Each row's ``yc_i`` and slack ``b_i`` side by side (:data:`YC`, :data:`B`: one cache line a row where the
        column's entries read them), the slacks updated in place.
    w, active : ndarray (n_weights,)
        The problem's weights and active features.
    threshold : float
        LIBLINEAR's shrinking threshold ``Gmax_old / l``.
    seed : ndarray of uint64 (1,)
        The column order's random state (advanced).
    totals : ndarray (N_TOTALS,)
    """
    visit_active_columns(_coordinate, columns, bias, active, seed, (yb, (w,)), (yb, w, active, threshold, totals))


@njit(cache=True, nogil=True, inline="always")
def visit_active_columns(step, columns, bias, active, seed, read, state):
    """``step(j, entries, start, stop, state)`` on each of the block's columns whose feature is active and on the
    bias column's (where this block carries it), in the random order of :func:`active_columns`; ``entries`` is a
    column's ``(rows, data)``, its entries ``start .. stop - 1``, ``j`` its weight index. CDN's sweep and newGLMNET's
    cycle visit their columns so; the two branches differ in the arrays' types (the store's values, the bias's B).

    ``read = (per_row, per_weight)``: the (n_rows, k) array the step reads at each entry's row, and a tuple of the
    arrays it reads at its weight. A column's numbers are scattered in memory and each read depends on the one
    before (the column's place, then its entries, then their rows' numbers): each is asked of memory a few columns
    before its step, the rows of the next column's first :data:`AHEAD` entries last. Asked for nothing, a sweep of
    the 1M x 1M set's columns waited on memory for half its time. The step itself asks for nothing: where the
    per-row arrays are in the cache (a9a's 32,561 rows), asking for each entry's row ahead inside the step's loop
    cost more than it saved (newGLMNET 1.9x, CDN 1.4x their time)."""
    features, indptr, rows, data = columns
    per_row, per_weight = read
    order, n = active_columns(features, active, seed, bias[0])
    n_c = features.shape[0]
    for s in range(n):
        if s + 3 < n and order[s + 3] < n_c:
            prefetch(indptr, order[s + 3])
            prefetch(features, order[s + 3])
        if s + 2 < n and order[s + 2] < n_c:
            prefetch(rows, indptr[order[s + 2]])
            prefetch(data, indptr[order[s + 2]])
            prefetch(active, features[order[s + 2]])
            for weights in per_weight:
                prefetch(weights, features[order[s + 2]])
        if s + 1 < n and order[s + 1] < n_c:
            following = order[s + 1]
            for p in range(indptr[following], min(indptr[following + 1], indptr[following] + AHEAD)):
                prefetch(per_row, rows[p])
        c = order[s]
        if c < n_c:
            step(features[c], (rows, data), indptr[c], indptr[c + 1], state)
        else:
            e = c - n_c
            step(bias[0][e], (bias[2], bias[3]), bias[1][e], bias[1][e + 1], state)


@njit(cache=True, nogil=True, inline="always")
def _coordinate(j, entries, start, stop, state):
    """CDN's step on weight ``j``, its column the entries ``start .. stop - 1`` of ``entries`` (``(rows, data)``);
    ``state``: the sweep's ``(yb, w, active, threshold, totals)``."""
    rows, data = entries
    yb, w, active, threshold, totals = state
    g_loss, h, xj_sq = 0.0, 0.0, 0.0
    for p in range(start, stop):
        r = rows[p]
        cost, v = trained_entry(yb[r, YC], data[p])
        if cost == 0.0:
            continue
        tmp = cost * v
        xj_sq += tmp * v
        if yb[r, B] > 0:
            g_loss -= tmp * yb[r, B]
            h += tmp * v
    totals[READ] += stop - start
    g_loss *= 2.0
    g = g_loss
    h = max(2.0 * h, 1e-12)
    wj = w[j]
    d = l1_coordinate(g, h, wj, threshold, j, active, totals)
    if d == 0.0:
        return
    d, read = _line_search(entries, start, stop, yb, wj, d, g, g_loss, xj_sq)
    totals[READ] += read
    w[j] = wj + d


@njit(cache=True, nogil=True, inline="always")
def l1_coordinate(g, h, wj, threshold, j, active, totals):
    """One weight of ``|w_j + d| + g d + h d^2 / 2`` at ``w_j``: the minimizing ``d`` (the soft-thresholded Newton
    step), 0.0 where there is nothing to do (``d`` below 1e-12, or a zero ``w_j`` shrunk: ``g`` inside ``(-1 +
    threshold, 1 - threshold)``, then ``active[j]`` is cleared). Adds the size of the minimum-norm subgradient
    (LIBLINEAR's violation) of a weight not shrunk to ``totals`` (GMAX: max, GNORM1: sum). CDN's and newGLMNET's
    cycles share it (their totals start with these two)."""
    gp, gn = g + 1.0, g - 1.0
    if wj == 0.0:
        if gp < 0.0:
            violation = -gp
        elif gn > 0.0:
            violation = gn
        elif gp > threshold and gn < -threshold:
            active[j] = False
            return 0.0
        else:
            violation = 0.0
    elif wj > 0.0:
        violation = abs(gp)
    else:
        violation = abs(gn)
    totals[GMAX] = max(totals[GMAX], violation)
    totals[GNORM1] += violation
    d = soft_newton_step(gp, gn, h, wj)
    return 0.0 if abs(d) < 1.0e-12 else d


@njit(cache=True, nogil=True, inline="always")
def trained_entry(yci, x):
    """A column entry ``x = x_ij`` of a row whose ``yc`` is ``yci``: ``(C_i, v_i = y_i x_ij)`` (``C_i = 0``: the
    row is not trained on)."""
    v = np.float64(x) if yci > 0 else -np.float64(x)
    return abs(yci), v


@njit(cache=True, nogil=True)
def _line_search(entries, start, stop, yb, wj, d, g, g_loss, xj_sq):
    """LIBLINEAR's line search of a coordinate step ``d`` from ``w_j = wj``: the slacks moved by the step accepted;
    returns ``(d accepted, column entries read)`` (``entries``: the columns' ``(rows, data)``)."""
    rows, data = entries
    delta = abs(wj + d) - abs(wj) + g * d
    d_old, loss_old, read = 0.0, 0.0, 0
    halvings = 0
    while halvings < MAX_HALVINGS:
        d_diff = d_old - d
        cond = abs(wj + d) - abs(wj) - SIGMA * delta
        if xj_sq * d * d + g_loss * d + cond <= 0.0:  # the bound holds: b moves by the step, no trial read
            _move(entries, start, stop, yb, d_diff)
            read += stop - start
            break
        loss_new = 0.0
        for p in range(start, stop):
            r = rows[p]
            cost, v = trained_entry(yb[r, YC], data[p])
            if cost == 0.0:
                continue
            if halvings == 0 and yb[r, B] > 0:
                loss_old += cost * yb[r, B] * yb[r, B]
            b_new = yb[r, B] + d_diff * v
            yb[r, B] = b_new
            if b_new > 0:
                loss_new += cost * b_new * b_new
        read += stop - start
        cond = cond + loss_new - loss_old
        if cond <= 0.0:
            break
        d_old = d
        d *= 0.5
        delta *= 0.5
        halvings += 1
    if halvings >= MAX_HALVINGS:  # b was last moved to w_j + d_old: bring it to w_j + d (LIBLINEAR recomputes b)
        _move(entries, start, stop, yb, d_old - d)
        read += stop - start
    return d, read


@njit(cache=True, nogil=True)
def _move(entries, start, stop, yb, step):
    """``b_i += step v_i`` over the column's trained rows: ``b`` follows ``w_j`` moved by ``-step`` (LIBLINEAR's
    ``axpy(d_diff, x, b)``, its ``x`` holding ``y_i x_ij``)."""
    rows, data = entries
    for p in range(start, stop):
        r = rows[p]
        cost, v = trained_entry(yb[r, YC], data[p])
        if cost != 0.0:
            yb[r, B] += step * v


@njit(cache=True, nogil=True)
def objective_terms(b, yc):
    """``sum_i C_i max(0, b_i)^2`` over the trained rows."""
    total = 0.0
    for r in range(b.shape[0]):
        if yc[r] != 0.0 and b[r] > 0:
            total += abs(yc[r]) * b[r] * b[r]
    return total


@njit(cache=True, nogil=True)
def combined_loss(b, delta_b, alpha, yc):
    """``sum_i C_i max(0, b_i + alpha delta_b_i)^2``: the loss of the pieces' combined step scaled by ``alpha``."""
    total = 0.0
    for r in range(b.shape[0]):
        if yc[r] != 0.0:
            v = b[r] + alpha * delta_b[r]
            if v > 0:
                total += abs(yc[r]) * v * v
    return total


@njit(cache=True, nogil=True)
def decisions_add(columns, w, t):
    """``t_i += w_j x_ij`` for the block's columns (``(features, indptr, rows, data)``) with a nonzero weight (the
    decision values of a warm start's ``w``, column by column); returns the column entries read."""
    features, indptr, rows, data = columns
    read = 0
    for c in range(features.shape[0]):
        wj = w[features[c]]
        if wj == 0.0:
            continue
        for p in range(indptr[c], indptr[c + 1]):
            t[rows[p]] += wj * np.float64(data[p])
        read += indptr[c + 1] - indptr[c]
    return read
