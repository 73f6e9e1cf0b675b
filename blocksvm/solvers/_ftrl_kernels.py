"""FTRL-Proximal with per-coordinate learning rates, on one block.

McMahan et al., "Ad Click Prediction: a View from the Trenches", KDD 2013, Algorithm 1. The
weights are never stored: each coordinate keeps ``z_i`` (the gradients summed, minus the
proximal centres' pull) and ``n_i`` (the squared gradients summed), and its weight is

    w_i = 0                                                          if |z_i| <= lambda1
    w_i = -(z_i - sgn(z_i) lambda1) / ((beta + sqrt(n_i)) / alpha + lambda2)   otherwise

computed when feature ``i`` occurs in a row (lazily: a row costs O(nnz)). For each row ``x_t``::

    w_i from z_i, n_i for every i with x_ti != 0       (the bias feature too, when bias > 0)
    g_i = -y_t l'(y_t w.x_t) x_ti                      (the hinge family's sub-gradient, below)
    sigma_i = (sqrt(n_i + g_i^2) - sqrt(n_i)) / alpha
    z_i <- z_i + g_i - sigma_i w_i
    n_i <- n_i + g_i^2

The paper's loss is the logistic loss; here it is the user's loss of :mod:`blocksvm.losses`,
``l(m) = s (linear + quadratic s)`` with ``s = max(0, threshold - m)``, whose ``-l'(m)`` is
``linear + 2 quadratic s`` when ``s > 0`` and 0 otherwise (0 at the hinge's kink). A row with
``s = 0`` changes nothing.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksvm.solvers._common import visit_order

# Indices into the stats array ftrl_block returns.
LOSS_SEEN, CORRECT_SEEN, UPDATES = range(3)


@njit(cache=True, nogil=True, inline="always")
def ftrl_weight(z, n, alpha, beta, l1, l2):
    """``w_i`` of one coordinate from its ``z_i`` and ``n_i`` (scalars)."""
    if abs(z) <= l1:
        return 0.0
    return -(z - math.copysign(l1, z)) / ((beta + math.sqrt(n)) / alpha + l2)


@njit(cache=True, nogil=True)
def ftrl_block(indptr, indices, data, y, z, n, bias, loss, cost, step, alpha, beta, l1, l2, seed):
    """One pass of FTRL-Proximal over a block's rows in a random order (file order when ``seed < 0``).

    Parameters
    ----------
    indptr, indices, data : CSR arrays of the block.
    y : ndarray of float64, shape (n_rows,)
        +1 or -1.
    z, n : ndarray of float64, shape (n_features + 1,)
        FTRL's per-coordinate state, updated in place; last entry for the bias feature of value
        ``bias`` (none when ``bias <= 0``).
    loss : ndarray of float64, shape (3,)
        The loss table ``[threshold, linear, quadratic]`` of :mod:`blocksvm.losses`.
    cost : ndarray of float64, shape (2,)
        Weight of the reported loss of negative and positive rows.
    step : ndarray of float64, shape (2,)
        Multiplier of the gradient of negative and positive rows: the class weights (1 without them).
    alpha, beta, l1, l2 : float
        The paper's alpha, beta, lambda1, lambda2.
    seed : int

    Returns
    -------
    stats : ndarray of float64, shape (3,)
        Loss sum and rows with a positive margin, each at the ``w`` the row saw; rows with a
        nonzero gradient.
    """
    n_rows = indptr.shape[0] - 1
    n_w = z.shape[0] - 1
    order = np.empty(n_rows, np.int64)
    visit_order(order, np.arange(n_rows), n_rows, seed)
    longest = 0
    for i in range(n_rows):
        longest = max(longest, indptr[i + 1] - indptr[i])
    w_row = np.empty(longest, np.float64)  # the row's w_i, kept for the update
    stats = np.zeros(3, np.float64)
    for s in range(n_rows):
        i = order[s]
        start, stop = np.uint64(indptr[i]), np.uint64(indptr[i + 1])
        # w.x with w_i computed from z_i, n_i
        w_bias = ftrl_weight(z[n_w], n[n_w], alpha, beta, l1, l2) if bias > 0 else 0.0
        dot = w_bias * bias
        for k in range(start, stop):
            j = np.uint32(indices[k])
            w_j = ftrl_weight(z[j], n[j], alpha, beta, l1, l2)
            w_row[k - start] = w_j
            dot += w_j * data[k]
        margin = y[i] * dot
        slack = loss[0] - margin
        if margin > 0:
            stats[CORRECT_SEEN] += 1
        if slack <= 0:
            continue
        label = 1 if y[i] > 0 else 0
        stats[LOSS_SEEN] += cost[label] * (slack * (loss[1] + loss[2] * slack))
        stats[UPDATES] += 1
        # g_i = g x_i with g = -y l'(m): the gradient of the row's loss in w.x
        g = -y[i] * step[label] * (loss[1] + 2.0 * loss[2] * slack)
        for k in range(start, stop):
            j = np.uint32(indices[k])
            g_j = g * data[k]
            sigma = (math.sqrt(n[j] + g_j * g_j) - math.sqrt(n[j])) / alpha
            z[j] += g_j - sigma * w_row[k - start]
            n[j] += g_j * g_j
        if bias > 0:
            g_j = g * bias
            sigma = (math.sqrt(n[n_w] + g_j * g_j) - math.sqrt(n[n_w])) / alpha
            z[n_w] += g_j - sigma * w_bias
            n[n_w] += g_j * g_j
    return stats


@njit(cache=True, nogil=True)
def ftrl_weights(z, n, alpha, beta, l1, l2):
    """Every ``w_i`` from ``z`` and ``n`` (same shapes; a new array)."""
    w = np.empty_like(z)
    for j in range(z.shape[0]):
        w[j] = ftrl_weight(z[j], n[j], alpha, beta, l1, l2)
    return w
