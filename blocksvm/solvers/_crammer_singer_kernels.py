"""Crammer and Singer's multiclass SVM by dual coordinate descent, on one block.

Problem (Crammer & Singer, JMLR 2001; the dual solved by Keerthi, Sundararajan, Chang, Hsieh & Lin, "A
Sequential Dual Method for Large Scale Multi-Class Linear SVMs", KDD 2008; LIBLINEAR's ``Solver_MCSVM_CS``, the
appendix of Fan et al., JMLR 2008), with ``K`` classes and ``w_m`` the weights of class ``m``::

    primal   min_W  1/2 sum_m ||w_m||^2 + sum_i C_i max_m (e_i^m + w_m.x_i - w_{y_i}.x_i)
    dual     min_alpha  f(alpha) = 1/2 sum_m ||w_m(alpha)||^2 + sum_i sum_m e_i^m alpha_i^m
             s.t.  alpha_i^m <= C_i^m  for all m, i,    sum_m alpha_i^m = 0  for all i

    e_i^m = 0 if y_i = m, 1 otherwise;   C_i^m = C_i if m = y_i, 0 otherwise;   w_m(alpha) = sum_i alpha_i^m x_i

``C_i`` is C times the weight of row ``i``'s class. The constraints tie each row's ``K`` variables together and
no row to another, so a block's rows are free coordinates while the rest stay fixed: block minimization (Yu,
Hsieh, Chang & Lin, KDD 2010) applies as it does to the binary dual. A row's step (LIBLINEAR's
``solve_sub_problem``) minimizes ``f`` over its ``K`` variables exactly: with ``G_m = e_i^m + w_m.x_i`` the
gradient, ``A_i = ||x_i||^2`` and ``B_m = G_m - A_i alpha_i^m``, the new ``alpha_i^m`` is
``min(C_i^m, (beta - B_m) / A_i)`` for the ``beta`` found by sorting ``D = B + A_i C_i^m`` in decreasing order
(Keerthi et al., Algorithm 3). LIBLINEAR's shrinking drops, within a visit, a class whose variable sits at its
bound with ``G_m`` below every free one's, and a row left with one class; a row's optimality violation is
``max_m G_m - min_{m: alpha_i^m < C_i^m} G_m``.

``W`` is held feature by feature (``w[j, m]``, LIBLINEAR's layout): a row's ``K`` scores read one stretch of
memory per feature.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksvm.solvers._common import drop_shrunk, interleaved_runs

INF = math.inf

# Indices into the stats array solve_block returns.
VIOLATION_FIRST, CORRECT_FIRST, VIOLATION_LAST, PASSES, UPDATES = range(5)
N_STATS = 5


@njit(cache=True, nogil=True)
def solve_block(a, b, w, costs, hyper, seed, losses):
    """Passes of dual CD over the rows of block A and companion rows B (possibly none), updating their alphas and
    ``w`` in place.

    Parameters
    ----------
    a : tuple (indptr, indices, data, y, sq_norms, alpha)
        Block A: its CSR arrays; ``y`` (n_a,) int64, each row's class ``0 .. K - 1``; ``sq_norms`` (n_a,),
        ``||x_i||^2`` without the bias feature; ``alpha`` (n_a, K), updated in place.
    b : tuple, as ``a``
        The companion rows (a cache of support vectors, or the block visited before), n_b rows.
    w : ndarray of float64, shape (n_features + 1, K)
        ``w[j, m]``; the last row: the bias feature's weights (unused if ``bias <= 0``).
    costs : ndarray of float64, shape (K,)
        ``C`` of the rows of each class.
    hyper : ndarray of float64, shape (3,)
        ``[bias, max_passes, inner_eps]``: the bias feature's value; passes at most; stop after a pass whose
        largest violation is at most ``inner_eps`` on the unshrunk rows (< 0: never), shrinking's rule between.
    seed : int
        Seed of the row orders (< 0: the rows as stored, every pass).
    losses : ndarray of float64, shape (K,)
        Set to each class's ``sum C_i loss_i`` over A's rows in the first pass, at the ``w`` each row saw.

    Returns
    -------
    stats : ndarray of float64, shape (N_STATS,)
        The largest row violation over A's rows in the first pass, A's rows predicted right then (the arg-max
        of their scores, the first class of a tie), the largest violation of the last pass, passes and row
        updates made.
    """
    a_indptr, a_indices, a_data, a_y, a_sq, a_alpha = a
    b_indptr, b_indices, b_data, b_y, b_sq, b_alpha = b
    bias, max_passes, eps = hyper[0], int(hyper[1]), hyper[2]
    n_classes = w.shape[1]
    n_w = w.shape[0] - 1
    bias_sq = bias * bias if bias > 0 else 0.0
    n_a = a_indptr.shape[0] - 1
    n_rows = n_a + b_indptr.shape[0] - 1
    # LIBLINEAR's bookkeeping: each row's classes, the active ones first (alpha_index), how many are active, and
    # where its own class sits among them (y_index)
    alpha_index = np.empty((n_rows, n_classes), np.int64)
    active_size_i = np.full(n_rows, n_classes, np.int64)
    y_index = np.empty(n_rows, np.int64)
    qd = np.empty(n_rows)
    for i in range(n_rows):
        for m in range(n_classes):
            alpha_index[i, m] = m
        if i < n_a:
            y_index[i], qd[i] = a_y[i], a_sq[i] + bias_sq
        else:
            y_index[i], qd[i] = b_y[i - n_a], b_sq[i - n_a] + bias_sq
    active = np.arange(n_rows)
    active_size = n_rows
    shrunk = np.zeros(n_rows, np.bool_)
    order = np.empty(n_rows, np.int64)
    G = np.empty(n_classes)
    B = np.empty(n_classes)
    D = np.empty(n_classes)
    alpha_new = np.empty(n_classes)
    d_ind = np.empty(n_classes, np.int64)
    d_val = np.empty(n_classes)
    losses[:] = 0.0
    correct, first_violation, last_violation = 0, -INF, -INF
    eps_shrink = max(10.0 * eps, 1.0)
    start_from_all = True
    passes, updates = 0, 0
    state = np.array([np.uint64(max(seed, 0))], np.uint64)
    while passes < max_passes:
        if seed >= 0:
            interleaved_runs(order, active, active_size, state)
        else:  # file order (--order file): the active rows as stored
            order[:active_size] = active[:active_size]
        first = passes == 0
        stopping = -INF
        for s in range(active_size):
            i = order[s]
            in_a = i < n_a
            r = i if in_a else i - n_a
            alpha_i = a_alpha[r] if in_a else b_alpha[r]
            indptr, indices, data = (a_indptr, a_indices, a_data) if in_a else (b_indptr, b_indices, b_data)
            yi = a_y[r] if in_a else b_y[r]
            C_yi = costs[yi]
            n_act = active_size_i[i]
            # G_m = e_i^m + w_m.x_i over the active classes
            for m in range(n_act):
                G[m] = 1.0
            if y_index[i] < n_act:
                G[y_index[i]] = 0.0
            for k in range(np.uint64(indptr[r]), np.uint64(indptr[r + 1])):
                j = np.uint32(indices[k])
                v = data[k]
                for m in range(n_act):
                    G[m] += w[j, alpha_index[i, m]] * v
            if bias > 0:
                for m in range(n_act):
                    G[m] += w[n_w, alpha_index[i, m]] * bias
            if first and in_a:  # (every class is active in a visit's first pass: alpha_index is the identity)
                top, best = -INF, 0
                for m in range(n_classes):
                    score = G[m] - (0.0 if m == yi else 1.0)  # w_m.x_i
                    if score > top:
                        top, best = score, m
                high = -INF
                for m in range(n_classes):
                    high = max(high, G[m])
                losses[yi] += C_yi * (high - G[yi])  # max_m (e^m + w_m.x) - w_y.x >= 0
                if best == yi:
                    correct += 1
            if qd[i] <= 0.0:  # no features and no bias: its alphas stay 0 (LIBLINEAR's Ai > 0 test)
                continue
            minG, maxG = INF, -INF
            for m in range(n_act):
                if alpha_i[alpha_index[i, m]] < 0.0 and G[m] < minG:
                    minG = G[m]
                if G[m] > maxG:
                    maxG = G[m]
            if y_index[i] < n_act and alpha_i[yi] < C_yi and G[y_index[i]] < minG:
                minG = G[y_index[i]]
            if first and in_a:
                first_violation = max(first_violation, maxG - minG)
            # shrink the classes at their bound whose gradient is below every free one's
            m = 0
            while m < n_act:
                if _at_bound_below(alpha_i[alpha_index[i, m]], m == y_index[i], C_yi, G[m], minG):
                    n_act -= 1
                    while n_act > m:
                        if not _at_bound_below(
                            alpha_i[alpha_index[i, n_act]], n_act == y_index[i], C_yi, G[n_act], minG
                        ):
                            alpha_index[i, m], alpha_index[i, n_act] = alpha_index[i, n_act], alpha_index[i, m]
                            G[m], G[n_act] = G[n_act], G[m]
                            if y_index[i] == n_act:
                                y_index[i] = m
                            elif y_index[i] == m:
                                y_index[i] = n_act
                            break
                        n_act -= 1
                m += 1
            active_size_i[i] = n_act
            if n_act <= 1:
                shrunk[i] = True
                continue
            if maxG - minG <= 1.0e-12:
                continue
            stopping = max(stopping, maxG - minG)
            for m in range(n_act):
                B[m] = G[m] - qd[i] * alpha_i[alpha_index[i, m]]
            _sub_problem(qd[i], y_index[i], C_yi, n_act, B, D, alpha_new)
            nz = 0
            for m in range(n_act):
                c = alpha_index[i, m]
                step = alpha_new[m] - alpha_i[c]
                alpha_i[c] = alpha_new[m]
                if abs(step) >= 1.0e-12:
                    d_ind[nz] = c
                    d_val[nz] = step
                    nz += 1
            # w_m += (alpha_new - alpha_old) x_i for the classes that moved
            for k in range(np.uint64(indptr[r]), np.uint64(indptr[r + 1])):
                j = np.uint32(indices[k])
                v = data[k]
                for q in range(nz):
                    w[j, d_ind[q]] += d_val[q] * v
            if bias > 0:
                for q in range(nz):
                    w[n_w, d_ind[q]] += d_val[q] * bias
            updates += 1
        passes += 1
        last_violation = stopping
        # drop the rows left with one class, the active list staying increasing
        active_size = drop_shrunk(active, active_size, shrunk)
        # LIBLINEAR's rule: at eps_shrink, unshrink and halve it; at eps on the unshrunk rows, stop
        if stopping < eps_shrink:
            if stopping < eps and start_from_all:
                break
            active_size = n_rows
            for i in range(n_rows):
                active[i] = i
                active_size_i[i] = n_classes
            eps_shrink = max(eps_shrink / 2.0, eps)
            start_from_all = True
        else:
            start_from_all = False
    stats = np.empty(N_STATS)
    stats[VIOLATION_FIRST], stats[CORRECT_FIRST] = first_violation, correct
    stats[VIOLATION_LAST], stats[PASSES], stats[UPDATES] = last_violation, passes, updates
    return stats


@njit(cache=True, nogil=True, inline="always")
def _at_bound_below(alpha, own, C, G, minG):
    """LIBLINEAR's ``be_shrunk``: the variable sits at its bound (``C`` for the row's own class, 0 for another)
    and its gradient is below every free one's."""
    return alpha == (C if own else 0.0) and G < minG


@njit(cache=True, nogil=True, inline="always")
def _sub_problem(A, y, C, n, B, D, alpha_new):
    """A row's ``n`` active variables at the minimum of ``f`` over them (LIBLINEAR's ``solve_sub_problem``):
    ``D = B`` (``+ A C`` at the row's own class ``y``, if active) in decreasing order, ``beta`` the mean of its
    first ``r`` entries less ``A C``, for the largest ``r`` with ``beta < r D_r``; then ``alpha_m = min(C_m, (beta -
    B_m) / A)``. ``D`` is scratch."""
    for m in range(n):
        D[m] = B[m]
    if y < n:
        D[y] += A * C
    for m in range(1, n):  # insertion sort, decreasing (K is small)
        v = D[m]
        q = m - 1
        while q >= 0 and D[q] < v:
            D[q + 1] = D[q]
            q -= 1
        D[q + 1] = v
    beta = D[0] - A * C
    r = 1
    while r < n and beta < r * D[r]:
        beta += D[r]
        r += 1
    beta /= r
    for m in range(n):
        if m == y:
            alpha_new[m] = min(C, (beta - B[m]) / A)
        else:
            alpha_new[m] = min(0.0, (beta - B[m]) / A)


@njit(cache=True, nogil=True)
def own_alphas(alpha, y):
    """``alpha_i^{y_i}`` of each row: the dual's linear term is their sum."""
    out = np.empty(y.shape[0])
    for i in range(y.shape[0]):
        out[i] = alpha[i, y[i]]
    return out
