"""The one-class SVM by two-level coordinate descent, on one block and its working set.

Problem (Schoelkopf et al., Neural Computation 2001, scaled by ``nu l`` as LIBLINEAR 2.42+'s ``ONECLASS_SVM``,
``solve_oneclass_svm``; Chou, Lin & Lin, "Dual coordinate-descent methods for linear one-class SVM and SVDD",
SDM 2020, Algorithm 7 of its supplement)::

    primal   min_{w, rho}  1/2 ||w||^2 - nu l rho + sum_i max(0, rho - w.x_i)
    dual     min_alpha  f(alpha) = 1/2 alpha^T Q alpha,   0 <= alpha_i <= 1,   e^T alpha = nu l,   Q_ij = x_i.x_j

with ``w = sum_i alpha_i x_i``; the model decides ``w.x - rho`` (> 0: +1, an inlier). The equality constraint ties
every row to the others, so a coordinate step moves two variables at once: ``alpha_i`` up and ``alpha_j`` down
by the same amount keeps the sum. With ``G_i = w.x_i`` the gradient, the pair ``(i, j)`` is violating while
``-G_i > -G_j`` for ``alpha_i < 1`` and ``alpha_j > 0``; its step ``(G_i - G_j) / (Q_ii + Q_jj - 2 Q_ij)`` is the
exact minimum along the pair, clipped to the box. Each iteration of the outer level computes every ``G_i``,
measures the violation ``max_{alpha_i < 1} -G_i - min_{alpha_j > 0} -G_j`` (0 at the optimum), shrinks the rows
that will stay at a bound, and pairs the ``max(active / 10, 1)`` largest ``-G`` of the rows that may rise with the
as many smallest of the rows that may fall, largest with smallest; the inner level updates those pairs.

Over blocks the sum of a working set's alphas cannot change within a visit: mass moves between blocks only
through rows of two blocks solved together (the working set: a cache of support vectors, or the block visited
before).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksvm.solvers._common import working_add, working_dot

INF = math.inf

# Indices into the stats array solve_block returns.
UP_FIRST, LOW_FIRST, VIOLATION_LAST, ITERATIONS, UPDATES = range(5)
N_STATS = 5


@njit(cache=True, nogil=True)
def solve_block(a, b, w, hyper, G_a):
    """Iterations of the two-level method over the rows of block A and companion rows B (possibly none), updating
    their alphas and ``w`` in place.

    Parameters
    ----------
    a : tuple (indptr, indices, data, sq_norms, alpha)
        Block A: its CSR arrays (indices increasing along each row); ``sq_norms`` (n_a,), ``||x_i||^2``;
        ``alpha`` (n_a,), updated in place.
    b : tuple, as ``a``
        The companion rows, n_b of them.
    w : ndarray of float64, shape (n_features + 1,)
        The last entry is ``-rho``: left alone.
    hyper : ndarray of float64, shape (2,)
        ``[max_iterations, inner_eps]``: iterations at most; stop when the violation is below ``inner_eps`` on
        every working row (< 0: never).
    G_a : ndarray of float64, shape (n_a,)
        Set to ``w.x_i`` of A's rows at the end (the offset ``rho`` is chosen from them).

    Returns
    -------
    stats : ndarray of float64, shape (N_STATS,)
        The first iteration's ``max -G`` over the rows that may rise and ``min -G`` over those that may fall, the
        last iteration's violation, iterations and pair updates made.
    """
    a_indptr, a_indices, a_data, a_sq, a_alpha = a
    b_indptr, b_indices, b_data, b_sq, b_alpha = b
    max_iter, eps = int(hyper[0]), hyper[1]
    n_a = a_indptr.shape[0] - 1
    n_rows = n_a + b_indptr.shape[0] - 1
    alpha = np.concatenate((a_alpha, b_alpha))
    qd = np.concatenate((a_sq, b_sq))
    G = np.zeros(n_rows)
    index = np.arange(n_rows)
    active_size = n_rows
    up_first, low_first, violation = -INF, INF, INF
    iterations, updates = 0, 0
    while iterations < max_iter:
        neg_max, neg_min = -INF, INF
        for s in range(active_size):
            i = index[s]
            G[i] = working_dot(w, a, b, n_a, i)
            if alpha[i] < 1.0:
                neg_max = max(neg_max, -G[i])
            if alpha[i] > 0.0:
                neg_min = min(neg_min, -G[i])
        if iterations == 0 and active_size == n_rows:
            up_first, low_first = neg_max, neg_min
        violation = neg_max - neg_min
        if violation < eps:
            if active_size == n_rows:
                break
            active_size = n_rows  # unshrink, and measure again
            continue
        # shrink the rows that will stay at their bound
        s = 0
        while s < active_size:
            i = index[s]
            if (alpha[i] == 1.0 and -G[i] > neg_max) or (alpha[i] == 0.0 and -G[i] < neg_min):
                active_size -= 1
                index[s], index[active_size] = index[active_size], index[s]
            else:
                s += 1
        # the rows that may rise (alpha < 1) by decreasing -G, those that may fall (alpha > 0) by increasing -G
        ups = np.empty(active_size, np.int64)
        lows = np.empty(active_size, np.int64)
        n_up, n_low = 0, 0
        for s in range(active_size):
            i = index[s]
            if alpha[i] < 1.0:
                ups[n_up] = i
                n_up += 1
            if alpha[i] > 0.0:
                lows[n_low] = i
                n_low += 1
        pairs = min(max(active_size // 10, 1), n_up, n_low)
        ups = ups[:n_up][np.argsort(G[ups[:n_up]], kind="mergesort")][:pairs]  # smallest G: largest -G
        lows = lows[:n_low][np.argsort(-G[lows[:n_low]], kind="mergesort")][:pairs]  # largest G: smallest -G
        for s in range(pairs):
            i, j = ups[s], lows[s]
            if (alpha[i] == 0.0 and alpha[j] == 0.0) or (alpha[i] == 1.0 and alpha[j] == 1.0):
                continue
            Gi = working_dot(w, a, b, n_a, i)
            Gj = working_dot(w, a, b, n_a, j)
            if not (
                (alpha[i] < 1.0 and alpha[j] > 0.0 and -Gj + 1e-12 < -Gi)
                or (alpha[i] > 0.0 and alpha[j] < 1.0 and -Gi + 1e-12 < -Gj)
            ):
                continue
            quad = qd[i] + qd[j] - 2.0 * _row_dot(a, b, n_a, i, j)
            if quad <= 0.0:
                quad = 1e-12
            delta = (Gi - Gj) / quad
            old_i = alpha[i]
            total = alpha[i] + alpha[j]
            alpha[i] -= delta
            alpha[j] += delta
            if total > 1.0:
                if alpha[i] > 1.0:
                    alpha[i], alpha[j] = 1.0, total - 1.0
            elif alpha[j] < 0.0:
                alpha[j], alpha[i] = 0.0, total
            if total > 1.0:
                if alpha[j] > 1.0:
                    alpha[j], alpha[i] = 1.0, total - 1.0
            elif alpha[i] < 0.0:
                alpha[i], alpha[j] = 0.0, total
            delta = alpha[i] - old_i
            working_add(w, a, b, n_a, i, delta, 0.0)
            working_add(w, a, b, n_a, j, -delta, 0.0)
            updates += 1
        iterations += 1
    a_alpha[:] = alpha[:n_a]
    b_alpha[:] = alpha[n_a:]
    for i in range(n_a):
        G_a[i] = working_dot(w, a, b, n_a, i)
    stats = np.empty(N_STATS)
    stats[UP_FIRST], stats[LOW_FIRST], stats[VIOLATION_LAST] = up_first, low_first, violation
    stats[ITERATIONS], stats[UPDATES] = iterations, updates
    return stats


@njit(cache=True, nogil=True, inline="always")
def _row_dot(a, b, n_a, i, j):
    """``x_i.x_j``: the two rows' increasing indices merged."""
    pi, ii, di = (a[0], a[1], a[2]) if i < n_a else (b[0], b[1], b[2])
    pj, ij, dj = (a[0], a[1], a[2]) if j < n_a else (b[0], b[1], b[2])
    ri = i if i < n_a else i - n_a
    rj = j if j < n_a else j - n_a
    p, p_end = pi[ri], pi[ri + 1]
    q, q_end = pj[rj], pj[rj + 1]
    total = 0.0
    while p < p_end and q < q_end:
        if ii[p] == ij[q]:
            total += np.float64(di[p]) * dj[q]
            p += 1
            q += 1
        elif ii[p] < ij[q]:
            p += 1
        else:
            q += 1
    return total


@njit(cache=True, nogil=True)
def add_rows(w, indptr, indices, data, alpha):
    """``w += sum_i alpha_i x_i`` over the rows (a block's first visit brings its rows into ``w``)."""
    for i in range(indptr.shape[0] - 1):
        d = alpha[i]
        if d == 0.0:
            continue
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            w[np.uint32(indices[k])] += d * data[k]
