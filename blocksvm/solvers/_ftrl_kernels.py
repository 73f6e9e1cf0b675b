"""FTRL-Proximal with per-coordinate learning rates, on one block.

McMahan et al., "Ad Click Prediction: a View from the Trenches", KDD 2013, Algorithm 1. The
weights are never stored: each coordinate keeps ``z_i`` (the gradients summed, minus the
proximal centres' pull) and ``n_i`` (the squared gradients summed), and its weight is

    w_i = 0                                                          if |z_i| <= lambda1
    w_i = -(z_i - sgn(z_i) lambda1) / ((beta + sqrt(n_i)) / alpha + lambda2)   otherwise

computed when feature ``i`` occurs in a row (lazily: a row costs O(nnz)). For each row ``x_t``::

    w_i from z_i, n_i for every i with x_ti != 0       (the bias feature too, when bias > 0)
    g_i = -y_t l'(y_t w.x_t) x_ti                      (l: the user's loss)
    sigma_i = (sqrt(n_i + g_i^2) - sqrt(n_i)) / alpha
    z_i <- z_i + g_i - sigma_i w_i
    n_i <- n_i + g_i^2

The paper's loss is the logistic loss, ``-l'(m) = 1 / (1 + exp(m))``; the hinge family's is
``linear + 2 quadratic s`` when ``s = threshold - m > 0``, else 0 (0 at the hinge's kink): a row with no
slope changes nothing. ``row_slope`` of :mod:`._common` gives either, from the loss's table.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksvm.solvers._common import UPDATES, judge_slope, online_pass, visited_row


@njit(cache=True, nogil=True, inline="always")
def ftrl_weight(z, n, alpha, beta, l1, l2):
    """``w_i`` of one coordinate from its ``z_i`` and ``n_i`` (scalars)."""
    if abs(z) <= l1:
        return 0.0
    return -(z - math.copysign(l1, z)) / ((beta + math.sqrt(n)) / alpha + l2)


@njit(cache=True, nogil=True)
def ftrl_block(rows, y, z, state, hyper, setup, seed):
    """One pass of FTRL-Proximal over a block (the online kernel contract: :mod:`._common`).

    ``z``: the gradients summed minus the proximal centres' pull; ``state``: ``(n,)``, the squared gradients
    summed (both per coordinate, updated in place; the weights are computed from them). ``hyper``: the
    paper's ``[alpha, beta, lambda1, lambda2]``. ``UPDATES`` counts the rows with a nonzero gradient.
    """
    indptr, indices, data, weights = rows
    n = state[0]
    bias, loss, cost, step = setup
    alpha, beta, l1, l2 = hyper[0], hyper[1], hyper[2], hyper[3]
    n_w = z.shape[0] - 1
    order, stats = online_pass(indptr, seed)
    longest = 0
    for i in range(indptr.shape[0] - 1):
        longest = max(longest, indptr[i + 1] - indptr[i])
    w_row = np.empty(longest, np.float64)  # the row's w_i, kept for the update
    for s in range(order.shape[0]):
        i, own, start, stop = visited_row(order, s, indptr, weights)  # the row's instance weight
        if own == 0.0:
            continue  # a row of weight 0 is not there
        # w.x with w_i computed from z_i, n_i
        w_bias = ftrl_weight(z[n_w], n[n_w], alpha, beta, l1, l2) if bias > 0 else 0.0
        dot = w_bias * bias
        for k in range(start, stop):
            j = np.uint32(indices[k])
            w_j = ftrl_weight(z[j], n[j], alpha, beta, l1, l2)
            w_row[k - start] = w_j
            dot += w_j * data[k]
        label = 1 if y[i] > 0 else 0
        slope = judge_slope(stats, loss, cost, label, y[i] * dot, own)
        if slope <= 0:
            continue
        stats[UPDATES] += 1
        # g_i = g x_i with g = -y l'(m): the gradient of the row's loss in w.x (times its class and own weight)
        g = -y[i] * step[label] * own * slope
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
