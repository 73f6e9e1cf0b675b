"""Dual coordinate descent for L2-regularized L1- and L2-loss linear SVMs, on one block.

Problem (LIBLINEAR's ``solve_l2r_l1l2_svc``; Hsieh, Chang, Lin, Keerthi & Sundararajan,
"A Dual Coordinate Descent Method for Large-scale Linear SVM", ICML 2008, Algorithm 1)::

    min_alpha  f(alpha) = 1/2 alpha^T Qbar alpha - e^T alpha
    s.t.       0 <= alpha_i <= U_i,      Qbar = Q + D,  Q_ij = y_i y_j x_i^T x_j

    L1-loss (hinge):          U_i = C_i,       D_ii = 0
    L2-loss (squared hinge):  U_i = infinity,  D_ii = 1 / (2 C_i)

with ``w = sum_i alpha_i y_i x_i`` kept up to date. Coordinate ``i`` takes the clipped Newton step
``alpha_i <- min(max(alpha_i - G / Qbar_ii, 0), U_i)`` where ``G = y_i w^T x_i - 1 + D_ii alpha_i``,
and its projected gradient ``PG`` measures how far ``alpha_i`` is from optimal.

Block minimization (Yu, Hsieh, Chang & Lin, "Large Linear Classification When Data Cannot Fit
In Memory", KDD 2010, Algorithm 2 with LIBLINEAR as the inner solver) calls :func:`solve_block`
on one block at a time: the block's rows are the only free coordinates, ``w`` is shared.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksvm.solvers._common import HINGE, shuffle_runs

INF = math.inf

# Indices into the stats array solve_block returns.
PG_MAX_FIRST, PG_MIN_FIRST, LOSS_FIRST, CORRECT_FIRST, PG_MAX_LAST, PG_MIN_LAST, PASSES, UPDATES = range(8)
N_STATS = 8
RUN = 32  # rows visited consecutively (see shuffle_runs); 1 gives a plain random permutation


def loss_tables(loss: int, c_negative: float, c_positive: float) -> tuple[np.ndarray, np.ndarray]:
    """LIBLINEAR's per-class ``upper_bound`` and ``diag`` tables, index 0 for y = -1, 1 for y = +1."""
    if loss == HINGE:
        return np.array([c_negative, c_positive]), np.zeros(2)
    return np.array([INF, INF]), np.array([0.5 / c_negative, 0.5 / c_positive])


@njit(cache=True, nogil=True)
def solve_block(a_indptr, a_indices, a_data, a_y, a_sq_norms, a_alpha,
                b_indptr, b_indices, b_data, b_y, b_sq_norms, b_alpha,
                w, bias, upper, diag, cost, loss, max_passes, inner_eps, seed):  # fmt: skip
    """Run dual CD passes over the rows of block A and companion rows B, updating alpha and w.

    The free coordinates are A's rows and B's rows, visited together in one random order per
    pass; B (possibly empty) holds rows kept in memory from earlier blocks, so that the groups
    of rows solved together change from visit to visit.

    Parameters
    ----------
    a_indptr, a_indices, a_data : CSR arrays of block A (see :mod:`blocksvm.solvers._common`).
    a_y : ndarray of float64, shape (n_a,)
        +1 or -1.
    a_sq_norms : ndarray of float64, shape (n_a,)
        ``||x_i||^2`` without the bias feature.
    a_alpha : ndarray of float64, shape (n_a,)
        A's dual variables (a view into the store-wide alpha), updated in place.
    b_indptr, b_indices, b_data, b_y, b_sq_norms, b_alpha : the same for B (n_b rows, may be 0).
    w : ndarray of float64, shape (n_features + 1,)
        Last entry: weight of the bias feature of value ``bias`` (unused if ``bias <= 0``).
    upper, diag : ndarray of float64, shape (2,)
        :func:`loss_tables`. ``cost`` (shape (2,)) holds C per class for the loss estimate.
    loss : int
        HINGE or SQUARED_HINGE.
    max_passes : int
        Passes over A and B at most (>= 1).
    inner_eps : float
        Stop after a pass whose PG violation ``max PG - min PG`` is at most this (< 0: never).
    seed : int
        Seed of the row permutations.

    Returns
    -------
    stats : ndarray of float64, shape (N_STATS,)
        Over A's rows in the first pass: max and min PG, loss sum (``sum C_i loss_i`` at the
        ``w`` each row saw) and count of positive margins. Over the last pass: max and min PG.
        Then passes made and updates made.
    """
    n_a = a_indptr.shape[0] - 1
    n_rows = n_a + b_indptr.shape[0] - 1
    loss_sum, correct, first_max, first_min = 0.0, 0, -INF, INF  # over A's rows, first pass
    index = np.arange(n_rows)
    scratch = np.empty(n_rows, np.int64)
    state = np.array([np.uint64(seed)], np.uint64)
    active_size = n_rows
    pg_max_old, pg_min_old = INF, -INF
    passes = 0
    updates = 0
    while passes < max_passes:
        shuffle_runs(index, active_size, RUN, state, scratch)
        pg_max_new, pg_min_new = -INF, INF
        first = passes == 0
        s = 0
        while s < active_size:
            i = index[s]
            if i < n_a:
                shrink, PG, margin, c, moved = _coordinate_step(
                    a_indptr, a_indices, a_data, a_y, a_sq_norms, a_alpha, i,
                    w, bias, upper, diag, pg_max_old, pg_min_old)  # fmt: skip
            else:
                shrink, PG, margin, c, moved = _coordinate_step(
                    b_indptr, b_indices, b_data, b_y, b_sq_norms, b_alpha, i - n_a,
                    w, bias, upper, diag, pg_max_old, pg_min_old)  # fmt: skip
            if shrink:
                active_size -= 1
                index[s], index[active_size] = index[active_size], index[s]
                continue
            pg_max_new = max(pg_max_new, PG)
            pg_min_new = min(pg_min_new, PG)
            updates += moved
            if first and i < n_a:
                slack = 1.0 - margin
                if slack > 0:
                    loss_sum += cost[c] * (slack if loss == HINGE else slack * slack)
                if margin > 0:
                    correct += 1
                first_max = max(first_max, PG)
                first_min = min(first_min, PG)
            s += 1
        passes += 1
        # LIBLINEAR's stopping rule, with one pass over the unshrunk set before trusting it
        if pg_max_new - pg_min_new <= inner_eps:
            if active_size == n_rows:
                break
            active_size = n_rows
            pg_max_old, pg_min_old = INF, -INF
            continue
        pg_max_old = pg_max_new if pg_max_new > 0 else INF
        pg_min_old = pg_min_new if pg_min_new < 0 else -INF
    stats = np.empty(N_STATS, np.float64)
    stats[PG_MAX_FIRST], stats[PG_MIN_FIRST] = first_max, first_min
    stats[LOSS_FIRST], stats[CORRECT_FIRST] = loss_sum, correct
    stats[PG_MAX_LAST], stats[PG_MIN_LAST] = pg_max_new, pg_min_new
    stats[PASSES] = passes
    stats[UPDATES] = updates
    return stats


@njit(cache=True, nogil=True, inline="always")
def _coordinate_step(indptr, indices, data, y, sq_norms, alpha, r, w, bias, upper, diag,
                     pg_max_old, pg_min_old):  # fmt: skip
    """One coordinate of Algorithm 1 for row ``r``: gradient, shrinking test, clipped Newton step.

    Returns ``(shrink, PG, margin, c, moved)``: whether to shrink the row away, its projected
    gradient, ``y_r w.x_r`` before the step, its class index, and 1 if alpha_r changed.
    """
    n_w = w.shape[0] - 1
    yi = y[r]
    c = 1 if yi > 0 else 0
    dot = 0.0
    for k in range(indptr[r], indptr[r + 1]):
        dot += w[indices[k]] * data[k]
    if bias > 0:
        dot += w[n_w] * bias
    margin = yi * dot
    G = margin - 1.0 + diag[c] * alpha[r]  # G = y_i w.x_i - 1 + D_ii alpha_i
    U = upper[c]
    PG = 0.0
    if alpha[r] == 0.0:
        if G > pg_max_old:  # alpha_r stays at 0
            return True, 0.0, margin, c, 0
        if G < 0:
            PG = G
    elif alpha[r] == U:
        if G < pg_min_old:  # alpha_r stays at U
            return True, 0.0, margin, c, 0
        if G > 0:
            PG = G
    else:
        PG = G
    if abs(PG) <= 1.0e-12:
        return False, PG, margin, c, 0
    # clipped Newton step, then w += (alpha_r - alpha_old) y_r x_r
    alpha_old = alpha[r]
    qd = sq_norms[r] + (bias * bias if bias > 0 else 0.0) + diag[c]
    alpha[r] = min(max(alpha_old - G / qd, 0.0), U)
    d = (alpha[r] - alpha_old) * yi
    for k in range(indptr[r], indptr[r + 1]):
        w[indices[k]] += d * data[k]
    if bias > 0:
        w[n_w] += d * bias
    return False, PG, margin, c, 1
